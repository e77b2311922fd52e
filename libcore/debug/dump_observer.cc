#include "debug/dump_observer.h"

#include <chrono>
#include <ctime>
#include <filesystem>

#include "dump/dump_file.h"
#include "dump/npy.h"
#include "dump/overflow_record.h"
#include "ir/device_format.h"
#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"

namespace npu::debug {
namespace {

// Simulated device addresses: stable per graph value, so two dumps of one model agree.
uint64_t Address(int value) { return 0x12C000000000ull + static_cast<uint64_t>(value) * 0x200000ull; }

// The desc of a dumped tensor: device format and shape (what the .om assigned), origin shape beside it.
template <class Desc>
void Describe(Desc* d, const Tensor& device, const Value& v, int value) {
  d->set_data_type(static_cast<int>(device.dtype()));
  d->set_format(static_cast<int>(v.device_format ? *v.device_format : device.rank() == 4 ? Format::kNCHW : Format::kND));
  if (v.device_groups > 1) d->set_sub_format(static_cast<int>(v.device_groups));
  for (int64_t x : device.shape()) d->mutable_shape()->add_dim(static_cast<uint64_t>(x));
  for (int64_t x : v.device_format ? v.shape : device.shape()) d->mutable_original_shape()->add_dim(static_cast<uint64_t>(x));
  d->set_size(device.nbytes());
  d->set_address(Address(value));
}

// The bytes the device would hold: the runtime computes on origin layouts, a dump shows the device's.
Result<Tensor> DeviceTensor(const Tensor& t, const Value& v) {
  if (!v.device_format || t.shape() != v.shape) return t;
  return ToDevice(t, *v.device_format, v.device_groups);
}

}  // namespace

std::string DumpRoot(const std::string& dump_path, const std::string& device, const std::string& model_name, uint32_t model_id) {
  std::time_t now = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y%m%d%H%M%S", std::localtime(&now));
  return dump_path + "/" + ts + "/" + device + "/" + SanitizeDumpName(model_name) + "/" + std::to_string(model_id);
}

DumpObserver::DumpObserver(const DumpConfig& c, const Graph& g, std::string root, std::string model_name, Mode mode)
    : cfg_(c), graph_(g), root_(std::move(root)), model_name_(std::move(model_name)), mode_(mode) {
  entry_ = mode == kOverflow || mode == kException ? nullptr : c.EntryFor(model_name_);
  if (entry_) layers_.insert(entry_->layers.begin(), entry_->layers.end());
  std::set<std::string> known;
  for (const Node& n : g.nodes) {
    known.insert(n.name);
    known.insert(n.original_names.begin(), n.original_names.end());
  }
  for (const auto& l : layers_)
    if (!known.count(l)) unknown_layers.push_back(l);
}

bool DumpObserver::Selected(const Node& n) const {
  if (layers_.empty() || layers_.count(n.name)) return true;
  for (const auto& o : n.original_names)
    if (layers_.count(o)) return true;
  return false;
}

uint64_t DumpObserver::Timestamp() {  // microseconds, strictly increasing so names never collide
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  last_ts_ = std::max<uint64_t>(last_ts_ + 1, static_cast<uint64_t>(us));
  return last_ts_;
}

void DumpObserver::BeginStep(uint64_t step, const std::vector<Tensor>& inputs) {
  if (mode_ == kException) return;  // the exception dump goes to its own folder, whatever the step
  active_ = status_.ok() && cfg_.StepSelected(step) && (mode_ == kOverflow || entry_);
  if (!active_) return;
  dir_ = root_ + "/" + std::to_string(step);
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    status_ = Status::Error("E13004", "dump_path", dir_, "cannot create the dump folder: " + ec.message());
    active_ = false;
    return;
  }
  names_ = std::make_unique<LongNameMap>(dir_);
  if (mode_ == kGolden)
    for (size_t k = 0; k < inputs.size() && k < graph_.inputs.size(); ++k)
      WriteGolden(graph_.values[graph_.inputs[k]].name, 0, inputs[k]);
}

void DumpObserver::OnTaskFault(const TaskEvent& e, const Status& fault) {
  if (mode_ != kException || !status_.ok()) return;
  dir_ = root_;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    status_ = Status::Error("E13004", "dump_path", dir_, "cannot create the exception dump folder: " + ec.message());
    return;
  }
  if (!names_) names_ = std::make_unique<LongNameMap>(dir_);
  std::vector<Tensor> outputs;
  for (int v : e.node.outputs) {
    const Value& out = graph_.values[v >= 0 ? v : 0];
    const bool known = v >= 0 && out.has_shape && NumElements(out.shape) >= 0;  // a dynamic dim has no size to fill
    outputs.push_back(known ? Tensor::Zeros(out.dtype, out.shape) : Tensor());
  }
  TaskEvent dumped = e;
  dumped.outputs = outputs;
  WriteOpDump(dumped, true, true);
  (void)fault;
}

void DumpObserver::AfterTask(const TaskEvent& e) {
  if (mode_ == kException || !active_ || !status_.ok()) return;
  if (e.node.has_attr(kRemovedViewAttr)) return;  // not an op of the .om: the device has no dump for it
  if (mode_ == kOverflow) return CheckOverflow(e);
  if (!Selected(e.node)) return;
  if (mode_ == kOpDump) return WriteOpDump(e, cfg_.inputs, cfg_.outputs);
  const std::string& name = e.node.original_names.empty() ? e.node.name : e.node.original_names.back();
  for (size_t j = 0; j < e.outputs.size(); ++j) WriteGolden(name, j, j == 0 ? InFrameworkLayout(e.node, e.outputs[j]) : e.outputs[j]);
}

// A channels-first result of a channels-last framework op (kFrameworkLayoutAttr), as the framework has it.
Tensor DumpObserver::InFrameworkLayout(const Node& n, const Tensor& t) {
  if (!t.defined()) return t;
  auto perm = FrameworkLayoutPerm(n, static_cast<size_t>(t.rank()));
  if (perm.empty()) return t;
  return TransposeTensor(t.channels_last ? ToChannelsFirst(t, ThreadPool::Global()) : t, perm, ThreadPool::Global());
}

void DumpObserver::WriteGolden(const std::string& op_name, size_t index, const Tensor& t) {
  if (!status_.ok() || !t.defined()) return;
  auto file = names_->OnDisk(SanitizeDumpName(op_name) + "." + std::to_string(index) + "." + std::to_string(Timestamp()) + ".npy");
  if (!file.ok()) {
    status_ = file.status();
    return;
  }
  status_ = WriteNpy(dir_ + "/" + file.value(), t);
  files_ += status_.ok();
}

void DumpObserver::WriteOpDump(const TaskEvent& e, bool inputs, bool outputs) {
  toolkit::dump::DumpData h;
  h.set_version("2.0");
  uint64_t ts = Timestamp();
  h.set_dump_time(ts);
  h.set_op_name(e.node.name);
  std::vector<std::span<const std::byte>> payloads;
  std::vector<Tensor> laid;  // device-layout copies, alive until the file is written
  laid.reserve(e.inputs.size() + e.outputs.size());
  auto add = [&](auto* desc, const Tensor& t, int value) -> bool {
    auto device = DeviceTensor(t, graph_.values[value]);
    if (!device.ok()) {
      status_ = device.status();
      return false;
    }
    laid.push_back(std::move(device.value()));
    Describe(desc, laid.back(), graph_.values[value], value);
    payloads.push_back(laid.back().bytes());
    return true;
  };
  if (inputs)
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      if (!e.inputs[i].defined()) continue;  // absent optional input
      const Value& v = graph_.values[e.node.inputs[i]];
      // An input from a channels-first result of a channels-last framework op, as its producer's dump has it.
      const Node* producer = v.producer >= 0 && graph_.nodes[v.producer].outputs[0] == e.node.inputs[i] ? &graph_.nodes[v.producer] : nullptr;
      auto perm = producer ? FrameworkLayoutPerm(*producer, v.shape.size()) : std::vector<int64_t>{};
      const bool relaid = !perm.empty() && !v.device_format;
      auto* in = h.add_input();
      if (!add(in, relaid ? InFrameworkLayout(*producer, e.inputs[i]) : e.inputs[i], e.node.inputs[i])) return;
      if (perm.empty()) continue;
      in->mutable_original_shape()->Clear();
      for (int64_t p : perm) in->mutable_original_shape()->add_dim(static_cast<uint64_t>(v.shape[static_cast<size_t>(p)]));
      if (relaid) in->set_format(static_cast<int>(perm.size() == 5 ? Format::kNDHWC : Format::kNHWC));
    }
  if (outputs)
    for (size_t j = 0; j < e.outputs.size(); ++j) {
      auto* o = h.add_output();
      const Value& v = graph_.values[e.node.outputs[j]];
      // A channels-first result of a channels-last framework op is dumped as the device holds the framework's
      // tensor: blocked bytes are the same either way (only the original shape and format say NHWC); a
      // plain-layout result is written in NHWC.
      auto perm = j == 0 ? FrameworkLayoutPerm(e.node, v.shape.size()) : std::vector<int64_t>{};
      const bool relaid = !perm.empty() && !v.device_format;
      if (!add(o, relaid ? InFrameworkLayout(e.node, e.outputs[j]) : e.outputs[j], e.node.outputs[j])) return;
      auto* orig = o->mutable_original_op();
      orig->set_name(e.node.original_names.empty() ? e.node.name : e.node.original_names.back());
      orig->set_output_index(static_cast<uint32_t>(j));
      orig->set_data_type(o->data_type());
      orig->set_format(static_cast<int>(perm.empty() ? OriginFormat(v) : perm.size() == 5 ? Format::kNDHWC : Format::kNHWC));
      if (perm.empty()) continue;
      o->mutable_original_shape()->Clear();
      for (int64_t p : perm) o->mutable_original_shape()->add_dim(static_cast<uint64_t>(v.shape[static_cast<size_t>(p)]));
      if (relaid) o->set_format(orig->format());
    }
  auto file = names_->OnDisk(SanitizeDumpName(ShownType(e.node)) + "." + SanitizeDumpName(e.node.name) + "." +
                             std::to_string(e.task.task_id) + "." + std::to_string(e.task.stream_id) + "." + std::to_string(ts));
  if (!file.ok()) {
    status_ = file.status();
    return;
  }
  status_ = WriteDumpFile(dir_ + "/" + file.value(), h, payloads);
  files_ += status_.ok();
}

void DumpObserver::CheckOverflow(const TaskEvent& e) {
  if (!e.overflow) return;  // the runtime's float status word decides (kernels/numerics.h)
  ++overflows_;
  WriteOpDump(e, true, true);
  OverflowRecord rec;
  rec.stream_id = static_cast<uint32_t>(e.task.stream_id);
  rec.task_id = static_cast<uint32_t>(e.task.task_id);
  rec.model_id = 1;
  rec.status = 1;
  rec.non_finite = e.status->non_finite;
  rec.saturated = e.status->out_of_range;
  rec.first_index = e.status->first_index;
  rec.first_output = static_cast<uint32_t>(std::max(0, e.status->first_output));
  rec.first_value = e.status->first_value;
  toolkit::dump::DumpData h;
  h.set_version("2.0");
  uint64_t ts = Timestamp();
  h.set_dump_time(ts);
  h.set_op_name(kOpDebugName);
  auto* o = h.add_output();
  o->set_data_type(static_cast<int>(DType::kU8));
  o->set_format(static_cast<int>(Format::kND));
  o->mutable_shape()->add_dim(sizeof rec);
  o->set_size(sizeof rec);
  std::span<const std::byte> payload[] = {std::as_bytes(std::span(&rec, 1))};
  std::string file = std::string(kOpDebugType) + "." + kOpDebugName + "." + std::to_string(e.task.task_id) + "." +
                     std::to_string(e.task.stream_id) + "." + std::to_string(ts);
  if (status_.ok()) status_ = WriteDumpFile(dir_ + "/" + file, h, payload);
  files_ += status_.ok();
}

}  // namespace npu::debug
