// A tune bank folder: every <soc>/unified_bank/*.json file of JSON lines, as aoe bank verify and atc read it.
#include "fuzz_input.h"
#include "soc/soc_spec.h"
#include "tune/bank.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!npu::fuzz::UnpackDirImage({data, size}, "bank")) return 0;
  const std::string root = npu::fuzz::ScratchDir() + "/bank";
  (void)npu::ReadBankTree(root);
  (void)npu::TuneBank::Open(root, *npu::FindSoc("Ascend310P3"));
  return 0;
}
