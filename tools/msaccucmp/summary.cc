#include "summary.h"

#include <algorithm>
#include <map>
#include <ostream>

#include "base/log.h"

namespace npu::cmp {
namespace {

int Col(const Row& h, const std::string& name) {
  auto it = std::find(h.begin(), h.end(), name);
  return it == h.end() ? -1 : static_cast<int>(it - h.begin());
}

bool Below(const std::string& cos, double t) {
  char* end = nullptr;
  double v = std::strtod(cos.c_str(), &end);
  return cos == "NaN" || (*end == '\0' && v < t);
}

}  // namespace

Summary::Summary(const Row& h)
    : col_index_(Col(h, "Index")), col_name_(Col(h, "NPUDump")), col_tensor_(Col(h, "TensorIndex")), col_verdict_(Col(h, "Verdict")),
      col_cos_(Col(h, "CosineSimilarity")), col_overflow_(Col(h, "OverFlow")) {
  if (col_tensor_ < 0) col_tensor_ = Col(h, "GroundTruthPath");
}

void Summary::Add(const Row& r) {
  auto cell = [&](int c) { return c >= 0 && c < static_cast<int>(r.size()) ? r[c] : std::string(); };
  lines_.push_back({cell(col_index_), cell(col_name_), cell(col_tensor_), cell(col_verdict_), cell(col_cos_), cell(col_overflow_)});
}

size_t Summary::Compared() const {
  return static_cast<size_t>(std::count_if(lines_.begin(), lines_.end(), [](const Line& l) { return l.verdict != "SKIP"; }));
}

void Summary::Print(std::ostream& out) const {
  if (!log::ShowInfo()) return;  // [INFO] lines, silenced by --log / ASCEND_GLOBAL_LOG_LEVEL above info like every tool's
  std::map<std::string, size_t> n;
  for (const auto& l : lines_) ++n[l.verdict];
  out << "[INFO] compared " << lines_.size() << " tensor pair(s): PASS " << n["PASS"] << ", WARN " << n["WARN"] << ", FAIL "
      << n["FAIL"] << ", SKIP " << n["SKIP"] << "\n";
  bool inputs_compared = false;
  if (const size_t k = FirstDivergentRow(&inputs_compared); k != std::string::npos) {
    const Line& bad = lines_[k];
    out << "[INFO] first divergent op: Index " << bad.index << " " << bad.name
        << (inputs_compared ? " (its inputs pass, " : " (its inputs were not dumped, so it may only inherit the error; ") << bad.tensor
        << " fails" << (bad.cosine.empty() ? "" : ", cosine " + bad.cosine) << ")\n";
    return;
  }
  if (n["FAIL"]) out << "[INFO] no op fails with passing inputs (every failure follows a failing input)\n";
}

size_t Summary::FirstDivergentRow(bool* inputs_compared) const {
  // Rows of one op are adjacent and share Index/NPUDump.
  for (size_t b = 0; b < lines_.size();) {
    size_t e = b;
    while (e < lines_.size() && lines_[e].index == lines_[b].index && lines_[e].name == lines_[b].name) ++e;
    bool inputs_ok = true, compared = false;
    size_t bad = std::string::npos;
    for (size_t i = b; i < e; ++i) {
      if (lines_[i].input() && lines_[i].verdict != "SKIP") compared = true;
      if (lines_[i].input() && lines_[i].verdict == "FAIL") inputs_ok = false;
      if (!lines_[i].input() && lines_[i].verdict == "FAIL" && bad == std::string::npos) bad = i;
    }
    if (inputs_ok && bad != std::string::npos) {
      if (inputs_compared) *inputs_compared = compared;
      return bad;
    }
    b = e;
  }
  return std::string::npos;
}

Status Summary::Advise(const std::string& dir, std::ostream& out) const {
  std::string type, index, advice;
  for (const auto& l : lines_)
    if (l.overflow == "YES") {
      type = "FP16 Overflow", index = l.index;
      advice = "The op's fp16 output reaches the fp16 limit. Check the op's input range, or keep it in fp32 (precision mode / mixed-precision list).";
      break;
    }
  if (type.empty() && !lines_.empty())
    for (const auto& l : lines_) {
      if (l.index != lines_.front().index) break;
      if (l.input() && Below(l.cosine, 0.99)) {
        type = "Input Inconsistent", index = l.index;
        advice = "The model's input data differs between the NPU run and the golden run. Feed both the same input files.";
        break;
      }
    }
  if (type.empty()) {
    // A row is off when its verdict says so (the per-dtype thresholds) or its cosine is under CANN's 0.99.
    auto off = [](const Line& l) { return l.verdict == "FAIL" || (l.verdict != "SKIP" && !l.cosine.empty() && Below(l.cosine, 0.99)); };
    const Line* first = nullptr;
    for (const auto& l : lines_)
      if (off(l)) {
        first = &l;
        break;
      }
    type = "Global Consistency";
    if (!first) {
      index = "NaN";
      advice = "All compared data meets the accuracy requirement (no FAIL verdict, cosine >= 0.99). If the final result is still wrong, check pre- and post-processing.";
    } else {
      index = first->index;
      const Line* last = nullptr;  // the network output: the last row that was compared
      for (auto it = lines_.rbegin(); it != lines_.rend() && !last; ++it)
        if (it->verdict != "SKIP") last = &*it;
      bool last_bad = last && off(*last);
      advice = last_bad ? "Accuracy drops from this op on and the network output is affected. If the model is quantized, calibrate it again; otherwise look at this op first."
                        : "Accuracy drops at this op but the network output is fine; this is likely an internal optimisation and may be ignored.";
    }
  }
  std::string text = "Detection Type: " + type + "\nOperator Index: " + index + "\nExpert Advice: " + advice + "\n";
  out << text;
  std::string path = dir + "/advisor_summary.txt";
  return WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace npu::cmp
