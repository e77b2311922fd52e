// What every framework's converter shares while it translates a model op by op (TF's in frontend/tf, Caffe's in
// frontend/caffe): the graph being built, the framework's tensor names bound to the values that hold them, and
// the first sign of a broken model. A framework's Converter derives from it and adds
// only how its own ops are read (TF's NodeDef attrs and inputs, Caffe's layers and weight blobs).
#pragma once
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "frontend/graph_builder.h"

namespace npu {

class ConvertContext {
 public:
  explicit ConvertContext(Graph& g) : b(g) {}
  GraphBuilder b;

  // The value a framework tensor name is bound to (TF's "node:k", a Caffe blob), or nothing; the last binding
  // wins (Caffe's in-place layers rebind their blob).
  std::optional<int> Bound(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::nullopt : std::optional(it->second);
  }
  void BindName(const std::string& name, int v) { values_[name] = v; }
  // A broken model (not an unsupported op): the import fails with the first one, after the walk.
  void SetError(Status s) {
    if (!error_) error_ = std::move(s);
  }
  const std::optional<Status>& error() const { return error_; }
  // The rank of value v when the graph knows it at import (inputs and constants).
  std::optional<int64_t> RankOf(int v) const {
    const Value& x = b.graph().values[v];
    return x.has_shape ? std::optional(static_cast<int64_t>(x.shape.size())) : std::nullopt;
  }

 private:
  std::map<std::string, int> values_;
  std::optional<Status> error_;
};

}  // namespace npu
