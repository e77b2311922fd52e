// msaccucmp compare -c DIR: custom metrics as CANN defines them, DIR/algorithm/alg_<Name>.py with a function
// compare(my, golden, args) returning (value, message). They run in one /usr/bin/python3 worker for the whole
// comparison (numpy arrays in, one JSON line out per pair), fed .npy files of the tensors in their original
// layout. Like CANN, a script another user owns or anyone may write is refused; a group-writable one warns.
#pragma once
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "sources.h"

namespace npu::cmp {

class CustomMetrics {
 public:
  // Finds and checks the scripts, starts the worker; warnings (group-writable files) go to `warnings`.
  static Result<std::unique_ptr<CustomMetrics>> Start(const std::string& dir, std::vector<std::string>& warnings);
  ~CustomMetrics();
  const std::vector<std::string>& names() const { return names_; }
  // (value, message) per name, for one pair of loaded tensors; thread-safe (one pair at a time).
  std::vector<std::pair<std::string, std::string>> Compute(const LoadedTensor& npu, const LoadedTensor& golden);

 private:
  CustomMetrics() = default;
  std::vector<std::string> names_;
  std::string scratch_;  // where the pairs are written as .npy
  int pid_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
  std::mutex mu_;
};

}  // namespace npu::cmp
