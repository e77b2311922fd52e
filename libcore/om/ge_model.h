// The .om files CANN's ATC writes: MODEL_DEF is a ge.proto.ModelDef. Loads one into an OmModel that npukit can
// show (atc --mode=1/--mode=6, msaccucmp's fusion rule) and run (msame): the graph as frontend/ge/ge_graph.h
// reads it (the TBE ops as npukit's kernels, weights back in their origin layouts), lowered to tasks for the
// model's SoC. The ops npukit cannot run are listed in OmModel::unrunnable instead, and then there are no tasks.
#pragma once
#include <string>

#include "base/status.h"
#include "om/om_file.h"
#include "ge_ir.pb.h"
#include "om/om_model.h"

namespace npu {

Result<OmModel> LoadCannOm(const om::OmFile& f, const std::string& path, size_t profile);
// The MODEL_DEF of any .om as a ge.proto.ModelDef, what atc --mode=1 prints (om/ge_json.h): CANN's with its
// compressed attribute names expanded; npukit's as written (files from before npukit wrote GE's schema are
// translated to it).
Result<npukit::ge::ModelDef> ReadOmModelDef(const std::string& path);
Result<npukit::ge::ModelDef> ReadOmModelDef(const om::OmFile& f, const std::string& path);  // a file already read

}  // namespace npu
