// msame's runs without AscendCL: a framework model on the fp32 reference path (it has no device), and the
// session --sim_mode=timing clocks.
#include <filesystem>
#include <ostream>

#include "base/log.h"
#include "debug/dump_observer.h"
#include "runner.h"
#include "soc/soc_spec.h"

namespace npu::msame {
namespace {

class ReferenceRunner : public Runner {
 public:
  Status Open(const MsameOptions& o, uint64_t first_step, std::ostream& out);
  const Session& session() const override { return session_; }
  Status SetInputs(const std::vector<Tensor>& inputs) override {
    inputs_ = inputs;
    return Status::Ok();
  }
  Status Infer() override;
  Result<std::vector<Tensor>> Outputs() override { return outputs_; }
  Status Finish(std::ostream& out) override;

 private:
  Session session_;
  debug::DumpConfig dump_;
  std::unique_ptr<debug::DumpObserver> dumper_, exception_dumper_;
  std::unique_ptr<prof::Collector> profiler_;
  uint64_t step_ = 0;
  std::vector<Tensor> inputs_, outputs_;
};

Status ReferenceRunner::Open(const MsameOptions& o, uint64_t first_step, std::ostream& out) {
  step_ = first_step;
  if (!o.acl_json_path.empty()) {
    NPU_ASSIGN_OR_RETURN(dump_, debug::ParseDumpConfig(o.acl_json_path));
    for (const auto& w : dump_.warnings) out << "[WARNING] " << o.acl_json_path << ": " << w << "\n";
  }
  NPU_ASSIGN_OR_RETURN(session_, OpenSession(o, {}, out));
  const std::string model_name = std::filesystem::path(o.model).stem().string();
  const Graph& g = session_.graph();
  if (dump_.exception) {  // dump_scene lite_exception: a faulting task's inputs
    exception_dumper_ = std::make_unique<debug::DumpObserver>(dump_, g, dump_.ExceptionPath() + "/" + o.device, model_name, debug::DumpObserver::kException);
    session_.AddObserver(exception_dumper_.get());
  }
  if (dump_.dump_data || dump_.dump_debug) {
    const auto mode = dump_.dump_debug ? debug::DumpObserver::kOverflow : debug::DumpObserver::kGolden;
    dumper_ = std::make_unique<debug::DumpObserver>(dump_, g, debug::DumpRoot(dump_.path, o.device, model_name), model_name, mode);
    for (const auto& l : dumper_->unknown_layers) out << "[WARNING] dump_list layer " << l << " is not an op of the model\n";
    if (!dump_.dump_debug && !dump_.EntryFor(model_name)) out << "[WARNING] dump_list names no entry for model " << model_name << "; nothing is dumped\n";
    session_.AddObserver(dumper_.get());
    session_.TrackFloatStatus(dump_.dump_debug);
  }
  NPU_ASSIGN_OR_RETURN(profiler_, StartProfiler(o, session_, out));
  return Status::Ok();
}

Status ReferenceRunner::Infer() {
  if (dumper_) dumper_->BeginStep(step_, inputs_);
  ++step_;
  NPU_RETURN_IF_ERROR(session_.Run(inputs_, outputs_));
  return dumper_ ? dumper_->status() : Status::Ok();
}

Status ReferenceRunner::Finish(std::ostream& out) {
  if (dumper_ && log::ShowInfo())
    out << "[INFO] " << (dump_.dump_debug ? std::to_string(dumper_->overflows()) + " overflow(s), " : std::string()) << dumper_->files_written()
        << " dump file(s) under " << dump_.path << "\n";
  return FinishProfiler(profiler_.get(), out);
}

}  // namespace

Result<Session> OpenSession(const MsameOptions& o, const std::vector<std::string>& first_files, std::ostream& out) {
  NPU_ASSIGN_OR_RETURN(Session s, LoadModel(o.model, o.input_shape, o.weight));
  if (const ShapeProfiles& p = s.model().profiles; !p.empty()) {
    NPU_ASSIGN_OR_RETURN(size_t k, ChooseProfile(o, p, first_files, s.graph()));
    if (log::ShowInfo()) out << "[INFO] shape profile " << k << ": " << p.Describe(k) << "\n";
    if (k != 0) {
      NPU_ASSIGN_OR_RETURN(s, Session::FromOm(o.model, k));
    }
  }
  if (!o.soc_spec.empty()) {
    NPU_ASSIGN_OR_RETURN(SocSpec soc, LoadSocSpecFile(o.soc_spec));
    s.SetSoc(std::make_shared<const SocSpec>(std::move(soc)));
  }
  if (s.retiled())
    out << "[WARNING] " << s.retiled() << " task tiling(s) do not fit " << s.soc()->name << "; re-tiled with the built-in heuristic\n";
  return s;
}

Result<std::unique_ptr<prof::Collector>> StartProfiler(const MsameOptions& o, Session& s, std::ostream& out) {
  prof::ProfilerConfig cfg;
  if (!o.acl_json_path.empty()) {
    NPU_ASSIGN_OR_RETURN(cfg, prof::ParseProfilerConfig(o.acl_json_path));
  }
  if (!cfg.enabled) {
    NPU_ASSIGN_OR_RETURN(cfg, prof::ProfilerConfigFromEnv());
  }
  for (const auto& w : cfg.warnings) out << "[WARNING] " << w << "\n";
  if (!cfg.enabled) return std::unique_ptr<prof::Collector>();
  return prof::Collector::Start(cfg, s, "msame --model=" + o.model);
}

Status FinishProfiler(prof::Collector* c, std::ostream& out) {
  if (!c) return Status::Ok();
  NPU_RETURN_IF_ERROR(c->Finish());
  if (log::ShowInfo()) out << "[INFO] profiling data written to " << c->dir() << "\n";
  return Status::Ok();
}

Result<std::unique_ptr<Runner>> OpenReferenceRunner(const MsameOptions& o, uint64_t first_step, std::ostream& out) {
  auto r = std::make_unique<ReferenceRunner>();
  NPU_RETURN_IF_ERROR(r->Open(o, first_step, out));
  return std::unique_ptr<Runner>(std::move(r));
}

}  // namespace npu::msame
