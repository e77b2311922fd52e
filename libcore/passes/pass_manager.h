// Named graph passes, run in order, each timed and individually switchable (atc --log=info shows timings).
#pragma once
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct Pass {
  std::string name;
  std::function<Status(Graph&)> run;
};

struct PassTiming {
  std::string name;
  double ms;
  size_t nodes_before, nodes_after;
};

// Called after each pass that ran (dump-after, verify-after); an error stops the run.
using AfterPassFn = std::function<Status(std::string_view pass, Graph&)>;

class PassManager {
 public:
  void Add(Pass p) { passes_.push_back(std::move(p)); }
  void Disable(const std::string& name) { disabled_.insert(name); }
  void SetAfterPass(AfterPassFn after) { after_ = std::move(after); }
  Status Run(Graph& g);
  const std::vector<PassTiming>& timings() const { return timings_; }

 private:
  std::vector<Pass> passes_;
  std::set<std::string> disabled_;
  std::vector<PassTiming> timings_;
  AfterPassFn after_;
};

// Infers shapes and evaluates nodes whose inputs are all constant, replacing them by constants
// (Shape -> Gather -> Concat -> Reshape chains collapse here); then drops nodes nobody reads.
Status FoldConstantsPass(Graph& g);

}  // namespace npu
