// The .om files CANN's ATC writes: MODEL_DEF is a ge.proto.ModelDef. Loads one into an OmModel that npukit can
// show (atc --mode=1/--mode=6, msaccucmp's fusion rule) and run (msame): the graph as frontend/ge/ge_graph.h
// reads it (the TBE ops as npukit's kernels, weights back in their origin layouts), lowered to tasks for the
// model's SoC. The ops npukit cannot run are listed in OmModel::unrunnable instead, and then there are no tasks.
#pragma once
#include <string>

#include "base/status.h"
#include "om/om_file.h"
#include "om/model_json.h"
#include "om/om_model.h"

namespace npu {

Result<OmModel> LoadCannOm(const om::OmFile& f, const std::string& path, size_t profile);
// atc --mode=1 of such a file: its ModelDef as stored (CANN's mode-1 JSON is the ModelDef printed as JSON), in
// the layout ModelToJson writes (om/model_json.h), so msaccucmp -f reads it as it reads npukit's.
Result<OrderedJson> CannOmJson(const std::string& path);

}  // namespace npu
