// atc --mode=1: a .om's MODEL_DEF (and its tasks) as JSON, as ATC prints it (om/ge_json.h), or with
// --framework=5 the framework model's graph with shapes inferred. msaccucmp -f reads both (om/model_json.h).
#include <nlohmann/json.hpp>

#include "atc.h"
#include "base/json.h"
#include "compile/compile.h"
#include "cost/tiling.h"
#include "om/ge_json.h"
#include "om/ge_model.h"
#include "om/model_json.h"
#include "om/om_model.h"

namespace npu::atc {
namespace {

using json = nlohmann::ordered_json;

json TaskJson(const OmModel& m) {
  json tasks = json::array();
  for (const Task& t : m.tasks) {
    if (m.graph.nodes[t.op_index].has_attr(kRemovedViewAttr)) continue;  // put back by the reader, not in the .om
    Work w = TaskWork(m.graph, t, nullptr);
    const Tiling& x = t.tiling;
    json tiling = {{"block_dim", x.block_dim}};
    if (t.kind == WorkKind::kCube)
      tiling.update({{"block_batch", x.block_batch}, {"block_m", x.block_m}, {"block_n", x.block_n}, {"base_m", x.base_m},
                     {"base_n", x.base_n}, {"base_k", x.base_k}, {"step_m", x.step_m}, {"step_n", x.step_n},
                     {"step_k", x.step_k}, {"db_l1", x.db_l1}, {"db_l0", x.db_l0}, {"order", x.n_inner ? "n_inner" : "m_inner"}});
    else if (t.kind == WorkKind::kVector)
      tiling.update({{"ub_tile", x.ub_tile}, {"db", x.db_l1}});
    tasks.push_back({{"task_id", t.task_id}, {"stream_id", t.stream_id}, {"op", m.graph.nodes[t.op_index].name},
                     {"type", t.kernel_name}, {"kind", WorkKindName(t.kind)}, {"engine", EngineName(t.engine)},
                     {"block_dim", t.block_dim}, {"tiling", tiling}, {"tiling_source", t.tiling_source},
                     {"tiling_key", TilingKey(w)}});
  }
  return tasks;
}

// The framework model (--framework=5 --om=model.onnx): imported, folded, shapes inferred.
Result<json> FrameworkJson(const CompileConfig& config) {
  CompileState state;
  NPU_RETURN_IF_ERROR(RunPasses(config, state, pass::kImport, pass::kImport));
  NPU_RETURN_IF_ERROR(RunPasses(config, state, pass::kInferShapes, pass::kInferShapes));
  return ModelToJson(state.graph, {{"framework_type", config.framework}});
}

// The ModelDef as ATC prints it; an .om npukit built also lists its tasks ("task", which ATC's JSON lacks:
// npukit's tilings and block dims, read by aoe and the timing tests).
Result<json> OmJson(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(om::OmFile f, om::ReadOmFile(path));
  NPU_ASSIGN_OR_RETURN(npukit::ge::ModelDef md, ReadOmModelDef(f, path));
  json j = GeMessageJson(md);
  if (f.cann_built) return j;  // shown even where npukit cannot run it
  NPU_ASSIGN_OR_RETURN(OmModel m, LoadOm(path));
  j["task"] = TaskJson(m);
  return j;
}

}  // namespace

int ToJson(const AtcOptions& o, const CompileConfig& config, std::ostream& out) {
  auto j = o.framework.empty() ? OmJson(o.om) : FrameworkJson(config);
  if (!j.ok()) return Fail(out, {j.status()});
  if (Status s = WriteJsonFile(o.json, DumpJson(j.value(), 2) + "\n"); !s.ok()) return Fail(out, {s});
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

}  // namespace npu::atc
