// Runs the ONNX backend node test cases through the ONNX importer, the passes and the kernels
// (the fp32 reference path of msame), compares with the expected outputs and reports per operator
// "passed/loaded/total". Fails when a case outside the expected-failures list fails, when a listed case
// passes (keep the list honest), or when fewer than 90% of the loaded cases of the core operators pass.
//
// usage: onnx_node_runner NODE_DIR EXPECTED_FAILURES_FILE [--write-expected]
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "base/file_io.h"
#include "frontend/onnx/onnx_importer.h"
#include "compile/compile.h"
#include "runtime/runtime.h"

namespace fs = std::filesystem;
using namespace npu;

namespace {

// The operators the foundation issue lists.
const std::set<std::string> kCoreOps = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "InstanceNormalization", "LayerNormalization",
    "Relu", "LeakyRelu", "PRelu", "Clip", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Erf", "Softplus", "Elu",
    "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Max", "Min", "Sum", "Mean",
    "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Flatten", "Reshape", "Transpose", "Concat",
    "Split", "Slice", "Squeeze", "Unsqueeze", "Gather", "Shape", "Size", "Constant", "ConstantOfShape", "Identity",
    "Dropout", "Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2",
    "Pad", "Resize", "Upsample", "Cast", "Expand", "Where", "Equal", "Less", "Greater", "Not", "And", "Or", "Tile",
    "ArgMax", "TopK", "Range", "CumSum", "DepthToSpace", "SpaceToDepth", "Einsum"};

std::string Compare(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return "dtype " + std::string(DTypeName(got.dtype())) + " vs " + std::string(DTypeName(want.dtype()));
  if (got.shape() != want.shape()) return "shape " + ShapeToString(got.shape()) + " vs " + ShapeToString(want.shape());
  auto a = got.ToDoubleVector(), b = want.ToDoubleVector();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i]) && std::isnan(a[i])) continue;
    if (std::isinf(b[i]) && a[i] == b[i]) continue;
    if (!(std::abs(a[i] - b[i]) <= 1e-7 + 1e-3 * std::abs(b[i])))  // the ONNX backend tolerances
      return "value " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  }
  return "";
}

struct CaseResult {
  bool loaded = false, passed = false;
  std::set<std::string> ops;
  std::string why;
};

CaseResult RunCase(const fs::path& dir) {
  CaseResult r;
  // msame's fp32 reference path: Compile's passes from Import to InferShapes, no SoC.
  CompileFlags flags;
  flags.model = (dir / "model.onnx").string();
  auto config_or = MakeCompileConfig(flags, CompileGoal::kReference);
  if (!config_or.ok()) {
    r.why = config_or.status().message();
    return r;
  }
  const CompileConfig& config = config_or.value();
  CompileState state;  // state.info lists every node's type even when the import fails
  Status imported = RunPasses(config, state, pass::kImport, pass::kImport);
  for (const auto& node : state.info.nodes) r.ops.insert(node.second);
  if (!imported.ok()) {
    r.why = imported.message();
    return r;
  }
  Graph* g = &state.graph;
  r.loaded = true;
  std::vector<Tensor> inputs, outputs, want;
  fs::path data = dir / "test_data_set_0";
  // Inputs are numbered over graph inputs that are not initializers, which is what the importer exposes.
  for (size_t i = 0; i < g->inputs.size(); ++i) {
    auto t = ReadOnnxTensor((data / ("input_" + std::to_string(i) + ".pb")).string());
    if (!t.ok()) {
      r.why = t.status().message();
      return r;
    }
    inputs.push_back(std::move(t).value());
  }
  for (size_t j = 0;; ++j) {
    fs::path p = data / ("output_" + std::to_string(j) + ".pb");
    if (!fs::exists(p)) break;
    auto t = ReadOnnxTensor(p.string());
    if (!t.ok()) {
      r.why = t.status().message();
      return r;
    }
    want.push_back(std::move(t).value());
  }
  if (Status s = RunPasses(config, state, pass::kFoldConstants, pass::kInferShapes); !s.ok()) {
    r.why = s.message();
    return r;
  }
  auto sess = Session::FromGraph(std::move(state.graph));
  if (!sess.ok()) {
    r.why = sess.status().message();
    return r;
  }
  if (Status s = sess.value().Run(inputs, outputs); !s.ok()) {
    r.why = s.message();
    return r;
  }
  if (outputs.size() != want.size()) {
    r.why = "output count " + std::to_string(outputs.size()) + " vs " + std::to_string(want.size());
    return r;
  }
  for (size_t j = 0; j < want.size(); ++j)
    if (std::string d = Compare(outputs[j], want[j]); !d.empty()) {
      r.why = "output " + std::to_string(j) + ": " + d;
      return r;
    }
  r.passed = true;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: onnx_node_runner NODE_DIR EXPECTED_FAILURES_FILE [--write-expected]\n";
    return 2;
  }
  bool write = argc > 3 && std::string(argv[3]) == "--write-expected";
  std::set<std::string> expected;
  {
    std::ifstream in(argv[2]);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') expected.insert(line.substr(0, line.find(' ')));
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(argv[1]))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::map<std::string, std::array<int, 3>> per_op;  // passed, loaded, total
  std::vector<std::pair<std::string, std::string>> failures;
  int core_loaded = 0, core_passed = 0, passed = 0, loaded = 0;
  for (const auto& dir : cases) {
    CaseResult r = RunCase(dir);
    std::string name = dir.filename().string();
    bool core = std::all_of(r.ops.begin(), r.ops.end(), [](const std::string& op) { return kCoreOps.count(op); });
    for (const auto& op : r.ops) {
      auto& c = per_op[op];
      c[0] += r.passed;
      c[1] += r.loaded;
      c[2] += 1;
    }
    passed += r.passed;
    loaded += r.loaded;
    if (core && r.loaded) core_loaded++, core_passed += r.passed;
    if (!r.passed) failures.emplace_back(name, r.why.substr(0, r.why.find('\n')));
  }
  std::cout << "Operator                   passed/loaded/total\n";
  for (const auto& [op, c] : per_op) std::printf("%-26s %d/%d/%d\n", op.c_str(), c[0], c[1], c[2]);
  std::printf("\nall cases: %d passed, %d loaded, %zu total\n", passed, loaded, cases.size());
  double ratio = core_loaded ? 100.0 * core_passed / core_loaded : 0;
  std::printf("core-operator cases: %d of %d loaded pass (%.1f%%, required >= 90%%)\n", core_passed, core_loaded, ratio);
  if (write) {
    std::ofstream out(argv[2]);
    out << "# ONNX backend node cases that fail today, with the reason. A case failing outside this list, or a\n"
           "# listed case passing, fails `make check`. Regenerate: onnx_node_runner DIR FILE --write-expected\n";
    for (const auto& [n, why] : failures) out << n << "  " << why << "\n";
    return 0;
  }
  int bad = 0;
  std::set<std::string> failed_names;
  for (const auto& [n, why] : failures) {
    failed_names.insert(n);
    if (!expected.count(n)) std::cout << "REGRESSION " << n << ": " << why << "\n", ++bad;
  }
  for (const auto& n : expected)
    if (!failed_names.count(n)) std::cout << "NOW PASSING (remove from the expected-failures list) " << n << "\n", ++bad;
  if (ratio < 90.0) std::cout << "core-operator pass rate below 90%\n", ++bad;
  std::printf("%d passed, %d failed\n", passed, static_cast<int>(cases.size()) - passed);
  return bad ? 1 : 0;
}
