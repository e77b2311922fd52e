// compare -op NAME [-i N | -o N] [-n TOPN]: element-level detail for one tensor of one op.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>

#include "base/log.h"
#include "compare.h"
#include "dump/dump_names.h"
#include "report.h"

namespace npu::cmp {
namespace {

std::vector<double> Decode(const LoadedTensor& t, size_t n) {
  std::vector<double> v(n);
  DecodeToDouble(*t.dtype, t.data.data(), n, v.data());
  return v;
}

}  // namespace

Status SingleOpDetail(const Plan& p, const CompareOptions& o, CustomScripts* scripts, const std::string& dir, std::ostream& out) {
  bool input = !o.input_index.empty();
  std::string want = o.op_name + (input ? ":input:" : ":output:") + (input ? o.input_index : o.output_index.empty() ? "0" : o.output_index);
  auto it = std::find_if(p.items.begin(), p.items.end(), [&](const CompareItem& i) { return i.tensor_index == want; });
  if (it == p.items.end()) return Status::Error("E10001", "-op", o.op_name, "no tensor " + want + " in the matched data");
  if (!it->npu.present() || !it->golden.present()) return Status::Error("EC0002", "-op", want, "one side has no data for this tensor");
  NPU_ASSIGN_OR_RETURN(LoadedTensor a, Load(it->npu, scripts));
  NPU_ASSIGN_OR_RETURN(LoadedTensor b, Load(it->golden, scripts));
  if (!a.problem.empty() || !b.problem.empty()) return Status::Error("EC0011", "-op", want, a.problem.empty() ? b.problem : a.problem);
  if (a.numel() != b.numel()) return Status::Error("EC0015", "-op", want, "NPU and golden element counts differ");
  char* end = nullptr;
  long topn = std::strtol(o.topn.c_str(), &end, 10);
  if (*end || topn < 1 || topn > 10000) return Status::Error("E10001", "-n", o.topn, "must be an integer in [1, 10000]");
  size_t n = a.numel();
  std::vector<double> x = Decode(a, n), y = Decode(b, n), abs(n), rel(n);
  for (size_t i = 0; i < n; ++i) abs[i] = std::fabs(x[i] - y[i]), rel[i] = abs[i] / std::fabs(y[i]);
  // Coordinates: N,C,H,W for 4-D tensors, D0.. otherwise.
  const auto& shape = a.shape;
  Row header = {"Index"};
  for (size_t d = 0; d < shape.size(); ++d) header.push_back(shape.size() == 4 ? std::string(1, "NCHW"[d]) : "D" + std::to_string(d));
  header.insert(header.end(), {"NPUDump", "GroundTruth", "AbsoluteError", "RelativeError"});
  auto row = [&](size_t i) {
    Row r = {std::to_string(i)};
    size_t rest = i;
    std::vector<std::string> coord(shape.size());
    for (size_t d = shape.size(); d-- > 0;) coord[d] = std::to_string(rest % std::max<int64_t>(shape[d], 1)), rest /= std::max<int64_t>(shape[d], 1);
    r.insert(r.end(), coord.begin(), coord.end());
    r.insert(r.end(), {FormatNumber(x[i]), FormatNumber(y[i]), FormatNumber(abs[i]), FormatNumber(rel[i])});
    return r;
  };
  std::string prefix = dir + "/" + SanitizeDumpName(o.op_name) + (input ? "_input_" : "_output_") + (input ? o.input_index : o.output_index.empty() ? "0" : o.output_index);
  constexpr size_t kMaxLines = 1000000;
  for (size_t part = 0; part * kMaxLines < std::max<size_t>(n, 1); ++part) {
    NPU_ASSIGN_OR_RETURN(auto w, ResultWriter::Create(prefix + "_" + std::to_string(part) + ".csv", "csv", header));
    for (size_t i = part * kMaxLines; i < std::min(n, (part + 1) * kMaxLines); ++i) NPU_RETURN_IF_ERROR(w->Add(i, row(i)));
    NPU_RETURN_IF_ERROR(w->Finish().status());
  }
  // Top N by error; NaN ranks above everything, then Inf.
  auto rank = [](double v) { return std::isnan(v) ? INFINITY : v; };
  for (auto [name, err] : {std::pair{"absolute", &abs}, std::pair{"relative", &rel}}) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    size_t k = std::min<size_t>(static_cast<size_t>(topn), n);
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&, e = err](size_t i, size_t j) {
      double a1 = rank((*e)[i]), b1 = rank((*e)[j]);
      return a1 != b1 ? a1 > b1 : i < j;
    });
    NPU_ASSIGN_OR_RETURN(auto w, ResultWriter::Create(prefix + "_" + name + "_error_topn.csv", "csv", header));
    for (size_t i = 0; i < k; ++i) NPU_RETURN_IF_ERROR(w->Add(i, row(idx[i])));
    NPU_RETURN_IF_ERROR(w->Finish().status());
  }
  auto [amin, amax] = std::minmax_element(abs.begin(), abs.end());
  auto [rmin, rmax] = std::minmax_element(rel.begin(), rel.end());
  std::string text = n ? "MinAbsoluteError: " + FormatNumber(*amin) + "\nMaxAbsoluteError: " + FormatNumber(*amax) + "\nMinRelativeError: " + FormatNumber(*rmin) +
                             "\nMaxRelativeError: " + FormatNumber(*rmax) + "\n"
                       : "The tensor is empty.\n";
  NPU_RETURN_IF_ERROR(WriteFileAtomic(prefix + "_summary.txt", std::as_bytes(std::span(text.data(), text.size()))));
  out << text;
  if (log::ShowInfo()) out << "[INFO] detail written to " << prefix << "_*.csv\n";
  return Status::Ok();
}

}  // namespace npu::cmp
