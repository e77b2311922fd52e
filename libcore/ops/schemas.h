// Op schemas, registered apart from kernels (as ONNX Runtime keeps ONNX's schemas apart from its execution
// providers): what each op type takes and gives — arity, engine, shape and dtype inference. Importers, passes
// and inference need only these; running an op needs its kernel too (kernels/registry.h).
#pragma once

namespace npu {

// Registers every built-in op's schema in OpSchemaRegistry (ir/op_schema.h). Idempotent and thread-safe.
void RegisterBuiltinSchemas();

}  // namespace npu
