// msaccucmp compare: pair NPU tensors with golden tensors, compute the metrics in parallel and stream the
// rows, in index order, to result_{time}.csv (or .json).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "compare/metrics.h"
#include "sources.h"

namespace npu::cmp {

struct CompareOptions {
  std::string npu, golden, fusion, quant_fusion, close_fusion, custom, out = ".", alg = "all", range, select, op_name, format = "csv", shard,
      thresholds, post_process, max_cmp = "0", topn = "20", input_index, output_index, precision = "6";
  std::string report;  // "html": also result_<ts>.html beside the CSV (html_report.h)
  bool mapping = false, overflow = false, advisor = false, progress = false;
};

// One row to compute: an NPU tensor and its golden counterpart (either may be absent).
struct CompareItem {
  std::string index, sequence, op_type, npu_name, golden_name, tensor_index;
  TensorRef npu, golden;
  bool is_input = false;
  uint64_t bytes() const { return npu.bytes + golden.bytes; }
};

enum class Layout { kNetwork, kH5 };

struct Plan {
  std::vector<CompareItem> items;
  Layout layout = Layout::kNetwork;
  bool npu_address = true, golden_address = false, with_sequence = false;
  std::vector<std::string> notes;  // what was not compared and why, printed in the summary
};

// Builds the list of pairs for the inputs the options name (dump dir + npy dir with or without -f,
// dump dir against dump dir, file against file, h5 against h5).
Result<Plan> BuildPlan(const CompareOptions& o);

int RunCompare(const CompareOptions& o, std::ostream& out);

}  // namespace npu::cmp
