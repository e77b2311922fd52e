// Elementwise schemas: unary maps, broadcasting binary and variadic ops, comparisons, Where, Clip, Cast.
#include "ops/families.h"

namespace npu {

void RegisterElementwiseSchemas() {
  auto schema = [](const char* name, int min_in, int max_in, InferFn infer) {
    OpSchema s{name, min_in, max_in, 1, 1, Engine::kVector, std::move(infer)};
    // Clip picks its input or a bound: a value when its bounds are (the runtime checks them, SelectsHeldValues).
    for (std::string_view selecting : {"Relu", "Neg", "Abs", "Max", "Min", "Clip"}) s.selects_values |= selecting == name;
    return s;
  };
  for (const char* name : {"Relu", "Neg", "Abs", "Sign", "Sigmoid", "Swish", "Tanh", "Erf", "Gelu", "Sqrt", "Exp", "Log", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Softsign", "Softplus", "HardSwish", "LeakyRelu", "Elu", "Celu", "Selu", "ThresholdedRelu", "HardSigmoid"})
    RegisterSchema(schema(name, 1, 1, InferSameAsInput0));
  for (const char* name : {"Add", "Sub", "Mul", "Div", "Mod", "Pow"}) RegisterSchema(schema(name, 2, 2, InferBroadcast));
  for (const char* name : {"Max", "Min", "Sum", "Mean"}) RegisterSchema(schema(name, 1, 1 << 20, InferBroadcast));  // folded pairwise
  for (const char* name : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"})
    RegisterSchema(schema(name, 2, 2, InferBroadcastBool));
  RegisterSchema(schema("PRelu", 2, 2, InferSameAsInput0));
  RegisterSchema(schema("Not", 1, 1, InferSameAsInput0));
  RegisterSchema(schema("Where", 3, 3, [](InferContext& c) {
    NPU_RETURN_IF_ERROR(InferBroadcast(c));
    c.out[0]->dtype = c.in[1]->dtype;
    return Status::Ok();
  }));
  RegisterSchema(schema("Clip", 1, 3, InferSameAsInput0));
  RegisterSchema(schema("Cast", 1, 1, [](InferContext& c) {
    auto to = DTypeFromGe(static_cast<int32_t>(c.node.attr_int("to", 0)));
    if (!to) return c.Fail("unsupported target dtype");
    c.set_output(0, *to, c.in[0]->shape, c.in[0]->has_shape);
    return Status::Ok();
  }));
}

}  // namespace npu
