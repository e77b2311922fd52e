// Model JSON: the graph npukit writes for `atc --mode=1 --framework=N` (a framework model with shapes inferred:
// model attrs, graph[0] with its inputs, outputs and op[] holding name, type, id, input refs "producer:index",
// attrs with _datadump_original_op_names, input_desc/output_desc), and the reader msaccucmp's -f uses, which
// also reads ATC's JSON of an .om (om/ge_json.h), where graph inputs, weights and outputs are Data, Const and
// NetOutput ops. A round-trip unit test keeps writer and reader together.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

using OrderedJson = nlohmann::ordered_json;

OrderedJson ModelToJson(const Graph& g, const std::map<std::string, std::string>& attrs);
// One attribute value as the JSON writes it ({"i": ..}, {"list": {"s": [..]}}, ...).
OrderedJson AttrToJson(const Attr& a);

struct ModelJson {
  Graph graph;  // nodes in "id" order; weights as values without data
  std::map<std::string, std::string> attrs;
  std::vector<int64_t> ids;  // each node's "id" (its position where the file gives none)
};
// Lenient where CANN's own files differ (missing ids, descs or attr kinds this build does not model are
// skipped); an op without a string name, a malformed input list or an unknown op in an input ref is an error.
// Tensor attrs come back as zeros of their dtype and shape: the JSON does not hold their data.
Result<ModelJson> ModelFromJson(const nlohmann::json& j);
// ModelFromJson of a file; errors are EC0012 naming `flag`.
Result<ModelJson> ReadModelJson(const std::string& path, const std::string& flag);

// How the JSON names the value an op reads: "producer:index", or the value's own name for a graph input,
// weight or constant; "" for an omitted optional input.
std::string ValueRef(const Graph& g, int v);

}  // namespace npu
