#include "om/ge_op_fields.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npu::om {
namespace {

using GeOp = npukit::ge::OpDef;

constexpr int64_t kMemBlock = 512;  // GE's memory block alignment (MEM_ALIGN_SIZE), as FeatureMapBytes uses
constexpr const char* kConst = "Const";
constexpr const char* kData = "Data";
constexpr const char* kNetOutput = "NetOutput";
constexpr const char* kDeviceNpu = "NPU";  // where the tensor lives, as GE records it

struct Ref {
  std::string op;
  int64_t index = 0;
};

// "op:index" (a control edge is "op:-1"); nullopt for "" (an omitted optional input) or a ref without ':'.
std::optional<Ref> ParseRef(const std::string& in) {
  size_t colon = in.rfind(':');
  if (in.empty() || colon == std::string::npos) return std::nullopt;
  try {
    return Ref{in.substr(0, colon), std::stoll(in.substr(colon + 1))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A Data op's own input desc is the graph's tensor as fed (GE gives it no real_dim_cnt); a desc that reads a
// graph input is marked input_tensor.
void FillDesc(npukit::ge::TensorDescriptor& d, bool data_input = false) {
  d.set_has_out_attr(true);
  d.set_device_type(kDeviceNpu);
  if (!data_input) d.set_real_dim_cnt(d.shape().dim_size());
}

// One tensor of feature-map memory: alive from its producer's position to its last reader's.
struct Block {
  std::string ref;  // "op:index"
  int64_t bytes = 0;
  int born = 0, dies = 0;
  int64_t offset = 0;
};

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// First fit, largest first: each block goes to the lowest offset that no block alive at the same time uses.
uint64_t PlaceBlocks(std::vector<Block>& blocks) {
  std::vector<size_t> order(blocks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  std::vector<size_t> placed;
  int64_t extent = 0;
  for (size_t k : order) {
    Block& b = blocks[k];
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of blocks alive with b
    for (size_t p : placed)
      if (blocks[p].born <= b.dies && b.born <= blocks[p].dies) busy.emplace_back(blocks[p].offset, blocks[p].offset + blocks[p].bytes);
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + b.bytes <= begin) break;
      offset = std::max(offset, end);
    }
    b.offset = offset;
    extent = std::max(extent, offset + b.bytes);
    placed.push_back(k);
  }
  return static_cast<uint64_t>(extent);
}

}  // namespace

uint64_t FillGeOpFields(npukit::ge::GraphDef& g) {
  std::map<std::string, int> position;
  for (int k = 0; k < g.op_size(); ++k) position[g.op(k).name()] = k;
  std::map<std::string, size_t> block_of;  // "op:index" -> its block
  std::map<std::string, int64_t> const_offset;  // a Const's "op:0" -> its weight's offset in WEIGHTS_DATA
  std::vector<Block> blocks;
  for (int k = 0; k < g.op_size(); ++k) {
    GeOp& op = *g.mutable_op(k);
    op.set_id(k);
    op.set_has_out_attr(true);
    for (auto& d : *op.mutable_input_desc()) FillDesc(d, op.type() == kData);
    for (auto& d : *op.mutable_output_desc()) FillDesc(d);
    if (op.type() == kConst) {
      auto v = op.attr().find("value");
      const_offset[op.name() + ":0"] = v == op.attr().end() ? 0 : v->second.t().desc().data_offset();
      continue;
    }
    for (int o = 0; o < op.output_desc_size(); ++o) {
      std::string ref = op.name() + ":" + std::to_string(o);
      block_of[ref] = blocks.size();
      blocks.push_back({ref, RoundUp(std::max<int64_t>(op.output_desc(o).size(), 0), kMemBlock), k, k, 0});
    }
  }
  for (int k = 0; k < g.op_size(); ++k) {
    GeOp& op = *g.mutable_op(k);
    bool any_const = false;
    int data_input = 0;
    for (const std::string& in : op.input()) {
      auto r = ParseRef(in);
      if (!r) continue;
      auto p = position.find(r->op);
      if (r->index >= 0 && p != position.end() && g.op(p->second).type() == kData && data_input < op.input_desc_size())
        op.mutable_input_desc(data_input)->set_input_tensor(true);
      if (r->index >= 0) ++data_input;
      op.add_src_name(r->op);
      if (r->index < 0) continue;  // a control edge names its source only
      op.add_src_index(r->index);
      bool is_const = const_offset.count(in) > 0;
      any_const |= is_const;
      op.add_is_input_const(is_const);
      if (auto b = block_of.find(in); b != block_of.end()) {
        blocks[b->second].dies = std::max(blocks[b->second].dies, k);
        op.add_input_i(0);  // the offset, once placed
      } else {
        op.add_input_i(is_const ? const_offset[in] : 0);
      }
      if (p != position.end()) {
        GeOp& producer = *g.mutable_op(p->second);
        producer.add_dst_name(op.name());
        producer.add_dst_index(op.src_index_size() - 1);
      }
    }
    if (!any_const && op.type() != kNetOutput) op.clear_is_input_const();  // GE records it where a weight is read
  }
  uint64_t extent = PlaceBlocks(blocks);
  for (int k = 0; k < g.op_size(); ++k) {
    GeOp& op = *g.mutable_op(k);
    int data_input = 0;
    for (const std::string& in : op.input()) {
      auto r = ParseRef(in);
      if (!r || r->index < 0) continue;
      if (auto b = block_of.find(in); b != block_of.end()) op.set_input_i(data_input, blocks[b->second].offset);
      ++data_input;
    }
    for (int o = 0; o < op.output_desc_size(); ++o) {
      auto b = block_of.find(op.name() + ":" + std::to_string(o));
      op.add_output_i(b == block_of.end() ? 0 : blocks[b->second].offset);
    }
  }
  return extent;
}

}  // namespace npu::om
