// The Caffe importer's inside, shared by caffe_importer.cc (the files, the upgrade of V1 nets, weights by layer
// name, blobs and outputs) and caffe_layers.cc (one converter per layer type). Not for use outside
// frontend/caffe.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "caffe_net.pb.h"
#include "frontend/convert_context.h"
#include "frontend/graph_builder.h"
#include "frontend/importer.h"

namespace npu::caffe {

using Layer = npukit::caffe::LayerParameter;

class Converter;
// Emits the internal nodes for one layer and binds its tops; or says why it cannot (frontend/importer.h's
// ConvertResult, which every importer's translators return).
using ConvertFn = ConvertResult (*)(Converter& c, const Layer& l);

struct LayerEntry {
  std::string_view type;
  ConvertFn convert;
};
const LayerEntry* FindLayer(std::string_view type);
// How many weight blobs a layer of this type takes from the caffemodel (min, max); nullopt for any.
std::pair<int, int> BlobCount(const Layer& l);

// The Caffe side of the shared converter context (frontend/convert_context.h): layers, blobs and weight blobs.
// Tensor names are blob names; an in-place layer rebinds its blob.
class Converter : public ConvertContext {
 public:
  explicit Converter(Graph& g) : ConvertContext(g) {}

  // The current value of blob `name` (after in-place layers, the last writer's).
  std::optional<int> Blob(const std::string& name) const { return Bound(name); }
  int Bottom(const Layer& l, int j) const { return *Blob(l.bottom(j)); }
  // Binds top k of layer l (or a net input) to value v.
  void Top(const Layer& l, int k, int v) { BindName(l.top(k), v); }
  void SetBlob(const std::string& name, int v) { BindName(name, v); }
  // The name a layer's node and its output take: the top's, or the layer's for an in-place layer (top ==
  // bottom), so every value keeps a name of its own.
  std::string OutName(const Layer& l) const;

  // Weights (matched by layer name) as tensors of their blob shapes.
  void SetWeights(std::map<std::string, std::vector<Tensor>> w) { weights_ = std::move(w); }
  const std::vector<Tensor>* Weights(const std::string& layer) const;
  int WeightValue(const Layer& l, int k, const std::string& suffix);  // blob k as a constant value

 private:
  std::map<std::string, std::vector<Tensor>> weights_;
};

}  // namespace npu::caffe
