// A whole conversion, as atc runs it: the input is a model; atc converts it (mode 0, with the explain-precision
// and pre-check writers), prints the .om as JSON (mode 1) and the model as JSON (mode 1 --framework=5). Reaches
// every pass and every JSON writer behind the importer, which the onnx_import target stops at.
#include <sstream>

#include "atc.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::ClearScratch();
  npu::fuzz::MemFile model({data, size});
  const std::string dir = npu::fuzz::ScratchDir();
  std::ostringstream out;
  npu::atc::AtcOptions convert;
  convert.framework = "5";
  convert.model = model.path();
  convert.output = dir + "/m";
  convert.soc_version = "Ascend310P3";
  convert.explain_precision = dir + "/precision.json";
  convert.check_report = dir + "/check.json";
  if (npu::atc::RunAtc(convert, out) == 0) {
    npu::atc::AtcOptions show;
    show.mode = "1";
    show.om = dir + "/m.om";
    show.json = dir + "/m.json";
    (void)npu::atc::RunAtc(show, out);
  }
  npu::atc::AtcOptions framework_json;
  framework_json.mode = "1";
  framework_json.framework = "5";
  framework_json.om = model.path();
  framework_json.json = dir + "/framework.json";
  (void)npu::atc::RunAtc(framework_json, out);
  return 0;
}
