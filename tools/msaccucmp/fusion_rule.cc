#include "fusion_rule.h"
#include "base/json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/file_io.h"

namespace npu::cmp {

using nlohmann::json;

Result<FusionRule> ReadFusionRule(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  auto bad = [&](const std::string& why) { return Status::Error("EC0012", "-f", path, why); };
  std::string why;
  json j = npu::ParseJson(text, &why);
  if (j.is_discarded()) return bad("not valid JSON: " + why);
  if (!j.is_object() || !j.contains("graph") || !j["graph"].is_array() || j["graph"].empty() || !j["graph"][0].is_object())
    return bad("no \"graph\" array");
  const json& ops = j["graph"][0].value("op", json::array());
  if (!ops.is_array()) return bad("graph[0].op is not an array");
  FusionRule r;
  for (size_t k = 0; k < ops.size(); ++k) {
    const json& o = ops[k];
    std::string where = "graph[0].op[" + std::to_string(k) + "]";
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) return bad(where + " has no string \"name\"");
    FusionOp op;
    op.name = o["name"];
    op.type = o.value("type", "");
    op.id = o.contains("id") && o["id"].is_number_integer() ? o["id"].get<int64_t>() : static_cast<int64_t>(k);
    if (o.contains("input")) {
      if (!o["input"].is_array()) return bad(where + ".input is not an array");
      for (const json& i : o["input"]) op.inputs.push_back(i.is_string() ? i.get<std::string>() : "");
    }
    for (const json& a : o.value("attr", json::array())) {
      if (!a.is_object() || a.value("key", "") != "_datadump_original_op_names") continue;
      const json& v = a.value("value", json::object());
      if (v.contains("list") && v["list"].contains("s") && v["list"]["s"].is_array())
        for (const json& s : v["list"]["s"])
          if (s.is_string()) op.original_names.push_back(s);
    }
    if (o.contains("output_desc") && o["output_desc"].is_array()) op.num_outputs = o["output_desc"].size();
    r.ops.push_back(std::move(op));
  }
  std::stable_sort(r.ops.begin(), r.ops.end(), [](const FusionOp& a, const FusionOp& b) { return a.id < b.id; });
  for (size_t k = 0; k < r.ops.size(); ++k)
    if (!r.by_name.emplace(r.ops[k].name, k).second) return bad("op name " + r.ops[k].name + " appears twice");
  return r;
}

}  // namespace npu::cmp
