// Run summary computed from the result rows themselves (so `merge` prints the same one): verdict counts,
// the first divergent op (the earliest op whose inputs pass and whose outputs fail) and the advisor.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "report.h"

namespace npu::cmp {

class Summary {
 public:
  explicit Summary(const Row& header);
  void Add(const Row& row);
  void Print(std::ostream& out) const;
  // Rows that got a verdict other than SKIP (0: nothing was actually compared).
  size_t Compared() const;
  // The row (in the order added) of the first divergent op's failing output; npos when none; `inputs_compared`
  // tells whether that op's inputs were compared at all.
  size_t FirstDivergentRow(bool* inputs_compared = nullptr) const;
  // msaccucmp's advisor: FP16 overflow, then inconsistent inputs, then global consistency;
  // printed and saved to DIR/advisor_summary.txt.
  Status Advise(const std::string& dir, std::ostream& out) const;

 private:
  struct Line {
    std::string index, name, tensor, verdict, cosine, overflow;
    bool input() const { return tensor.find(":input:") != std::string::npos || tensor.find("/input/") != std::string::npos; }
  };
  int col_index_, col_name_, col_tensor_, col_verdict_, col_cos_, col_overflow_;
  std::vector<Line> lines_;
};

}  // namespace npu::cmp
