// msaccucmp -c DIR: user scripts as CANN defines them.
//  - DIR/algorithm/alg_<Name>.py: a function compare(my, golden, args) returning (value, message), a metric
//    column after the built-in ones (compare).
//  - DIR/format_convert/convert_<SRC>_to_<DST>.py: a function convert(shape_from, shape_to, array) returning
//    the array in layout DST. It replaces the built-in conversion of that pair and adds pairs npukit lacks
//    (convert -f DST; compare, where DST is the layout the golden data has).
// They run in one /usr/bin/python3 worker per run, tensors handed over as .npy files. Like CANN, a script
// another user owns or anyone may write is refused; a group-writable one warns.
#pragma once
#include <cstdio>
#include <memory>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "compare/layout.h"
#include "sources.h"

namespace npu::cmp {

class CustomScripts {
 public:
  // Finds and checks the scripts, starts the worker, prints a [WARNING] line to `out` per group-writable
  // script. No scripts (null) when `dir` is empty: -c was not given.
  static Result<std::unique_ptr<CustomScripts>> Start(const std::string& dir, std::ostream& out);
  ~CustomScripts();
  CustomScripts(const CustomScripts&) = delete;
  CustomScripts& operator=(const CustomScripts&) = delete;

  const std::vector<std::string>& names() const { return metrics_; }  // the custom metrics, sorted
  // (value, message) per metric, for one pair of loaded tensors.
  std::vector<std::pair<std::string, std::string>> Compute(const LoadedTensor& npu, const LoadedTensor& golden);

  bool Converts(std::string_view from, std::string_view to) const { return conversions_.count(std::string(from) + "_to_" + std::string(to)); }
  // The dump tensor `t` (its stored layout and shape) in layout `to` by the user's script; `shape_to` is the
  // shape the script is told to produce (the original shape, or convert's -s).
  Result<LaidOut> Convert(const DumpTensor& t, std::string_view to, const std::vector<int64_t>& shape_to);

 private:
  CustomScripts() = default;
  static Result<std::unique_ptr<CustomScripts>> Launch(const std::string& dir, std::vector<std::string>& warnings);
  Result<std::string> Ask(const std::string& request);  // one JSON line out, one in; thread-safe
  std::string dir_;
  std::vector<std::string> metrics_;
  std::set<std::string> conversions_;  // "NC1HWC0_to_NCHW"
  std::string scratch_;                // where tensors are handed over as .npy
  int pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::mutex mu_;
};

}  // namespace npu::cmp
