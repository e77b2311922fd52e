// CANN's single-op JSON (atc/aoe --singleop): parsed, type-checked, inferred, and each op compiled to tasks.
#include "compile/compile.h"
#include "frontend/singleop/singleop_json.h"
#include "fuzz_input.h"
#include "kernels/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const npu::CompileConfig config = [] {
    npu::RegisterBuiltinOps();
    npu::CompileFlags flags;
    flags.soc_version = "Ascend310P3";
    return npu::SingleOpConfig(flags).value();
  }();
  npu::fuzz::MemFile f({data, size});
  auto ops = npu::ImportSingleOps(f.path());
  if (!ops.ok()) return 0;
  for (npu::SingleOp& op : ops.value()) (void)npu::CompileSingleOp(config, std::move(op.graph));
  return 0;
}
