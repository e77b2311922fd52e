#include "msame.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/shard.h"
#include "dump/npy.h"
#include "debug/dump_config.h"
#include "runner.h"
#include "compile/compile.h"
#include "kernels/kernel_util.h"

namespace npu::msame {
using debug::ParseDumpConfig;
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string TextOf(const Tensor& t) {
  std::ostringstream os;
  os.precision(9);
  auto v = t.ToDoubleVector();
  int64_t row = t.rank() ? std::max<int64_t>(1, t.shape().back()) : 1;
  for (size_t i = 0; i < v.size(); ++i) os << v[i] << ((static_cast<int64_t>(i) + 1) % row == 0 ? "\n" : " ");
  return os.str();
}

// The clock schedules a model once, at load: a dynamic-shape model is timed with its unknown dims as 1.
std::string DynamicNote(const Graph& g) {
  for (int i : g.inputs)
    if (!g.values[i].has_shape || NumElements(g.values[i].shape) < 0) return " (dynamic shape: timed with unknown dims as 1)";
  return "";
}

}  // namespace

Result<Session> LoadModel(const std::string& path, const std::string& input_shape, const std::string& weight) {
  if (!IsReferenceModel(path)) {
    auto s = Session::FromOm(path);
    if (s.ok()) return s;
    return WithModelFlag(s.status());
  }
  // The fp32 reference path: the framework graph, folded and inferred, no SoC.
  CompileFlags flags;
  flags.model = path;
  flags.input_shape = input_shape;
  flags.weight = weight;
  NPU_ASSIGN_OR_RETURN(CompileConfig config, MakeCompileConfig(flags, CompileGoal::kReference));
  CompileState state;
  NPU_RETURN_IF_ERROR(RunPasses(config, state, pass::kImport, pass::kInferShapes));
  return Session::FromGraph(std::move(state.graph));
}

Result<Tensor> ReadInput(const std::string& path, const Value& in) {
  if (EndsWith(path, ".npy")) return ReadNpy(path);
  NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  Shape shape = DeviceShapeOf(in);  // the layout the model takes its data in (NC1HWC0 after --is_input_adjust_hw_layout)
  int64_t n = in.has_shape ? NumElements(shape) : -1;
  if (n < 0)
    return Status::Error("EH0001", "--input", path, "input '" + in.name + "' has a dynamic shape " + ShapeToString(in.shape) + ", so a raw .bin cannot be sized",
                         "Give the input as .npy, which carries its shape.");
  size_t want = static_cast<size_t>(n) * DTypeSize(in.dtype);
  if (f.bytes().size() != want)
    return Status::Error("EH0001", "--input", path,
                         "the file has " + std::to_string(f.bytes().size()) + " bytes, input '" + in.name + "' (" +
                             std::string(DTypeName(in.dtype)) + ShapeToString(shape) + ") needs " + std::to_string(want) + " bytes");
  return Tensor::View(in.dtype, shape, f.share(), f.bytes().data());
}

Result<std::string> WriteOutput(const std::string& dir, const std::string& model_name, size_t index, const Tensor& t,
                                const std::string& fmt) {
  std::string base = dir + "/" + model_name + "_output_" + std::to_string(index);
  if (fmt == "NPY") {
    NPU_RETURN_IF_ERROR(WriteNpy(base + ".npy", t));
    return base + ".npy";
  }
  if (fmt == "TXT") {
    std::string text = TextOf(t);
    NPU_RETURN_IF_ERROR(WriteFileAtomic(base + ".txt", std::as_bytes(std::span(text.data(), text.size()))));
    return base + ".txt";
  }
  NPU_RETURN_IF_ERROR(WriteFileAtomic(base + ".bin", t.bytes()));
  return base + ".bin";
}

std::vector<Status> ValidateOptions(const MsameOptions& o) {
  std::vector<Status> errs;
  errs.insert(errs.end(), o.flag_errors.begin(), o.flag_errors.end());
  if (o.model.empty()) errs.push_back(Status::Error("E10004", "--model", "", "Value for --model is empty"));
  else if (!FileExists(o.model)) errs.push_back(Status::Error("E13001", "--model", o.model, "the model file does not exist"));
  std::stringstream inputs(o.input);
  for (std::string f; std::getline(inputs, f, ',');)
    if (!f.empty() && !FileExists(f)) errs.push_back(Status::Error("E13001", "--input", f, "the input file does not exist"));
  if (!o.shard.empty())
    if (auto s = ParseShard(o.shard, "--shard", {"E10001", "E10057"}); !s.ok()) errs.push_back(s.status());
  if (o.outfmt != "BIN" && o.outfmt != "NPY" && o.outfmt != "TXT")
    errs.push_back(Status::Error("E10001", "--outfmt", o.outfmt, "the output format must be BIN, NPY or TXT"));
  char* end = nullptr;
  long loops = std::strtol(o.loop.c_str(), &end, 10);
  if (o.loop.empty() || *end != '\0' || loops < 1 || loops > 1000000)
    errs.push_back(Status::Error("E10001", "--loop", o.loop, "the loop count must be an integer in [1, 1000000]"));
  if (o.device != "0") errs.push_back(Status::Error("E10001", "--device", o.device, "the simulated SoC has one device: 0"));
  if (!o.acl_json_path.empty() && !FileExists(o.acl_json_path))
    errs.push_back(Status::Error("E13001", "--acl_json_path", o.acl_json_path, "the acl.json file does not exist"));
  if (!o.soc_spec.empty() && !FileExists(o.soc_spec))
    errs.push_back(Status::Error("E13001", "--soc_spec", o.soc_spec, "the SoC spec file does not exist"));
  if (o.sim_mode != "full" && o.sim_mode != "timing")
    errs.push_back(Status::Error("E10001", "--sim_mode", o.sim_mode, "the mode must be full or timing"));
  if (!o.input_shape.empty() && !IsReferenceModel(o.model))
    errs.push_back(Status::Error("E10001", "--input_shape", o.input_shape, "applies to the reference path (.onnx, .pb, .prototxt); an .om keeps the shapes atc gave it",
                                 "Convert with atc --input_shape (or shape profiles) for another shape on the NPU."));
  if (o.sim_mode == "timing" && IsReferenceModel(o.model))
    errs.push_back(Status::Error("E10001", "--sim_mode", o.sim_mode, "the reference path has no simulated clock: .onnx, .pb and .prototxt models run in fp32 on the host", "Convert the model with atc first."));
  if (!o.log.empty() && !log::ParseLevel(o.log))
    errs.push_back(Status::Error("E10010", "--log", o.log, "the log level must be one of debug, info, warning, error, null"));
  return errs;
}

// --sim_mode=timing: the simulated clock without the arithmetic (a batch sweep in seconds).
int RunTimingOnly(const MsameOptions& o, const std::vector<std::string>& first_files, std::ostream& out) {
  auto fail = [&](const Status& st) {
    cli::PrintError(out, st);
    return cli::kFailed;
  };
  if (!o.acl_json_path.empty())
    if (auto dump = ParseDumpConfig(o.acl_json_path); !dump.ok()) return fail(dump.status());
  auto session = OpenSession(o, first_files, out);
  if (!session.ok()) return fail(session.status());
  Session& s = session.value();
  if (!s.timing()) return fail(Status::Error("E10001", "--sim_mode", "timing", "the model names no simulated SoC"));
  auto profiler = StartProfiler(o, s, out);
  if (!profiler.ok()) return fail(profiler.status());
  long loops = std::strtol(o.loop.c_str(), nullptr, 10);
  for (long l = 0; l < loops; ++l)
    if (Status st = s.RunTiming(); !st.ok()) return fail(st);
  if (Status st = FinishProfiler(profiler.value().get(), out); !st.ok()) return fail(st);
  out << FormatSimulatedTime(s.simulated_ns() / static_cast<double>(loops), BatchOf(s.graph()), *s.soc()) << DynamicNote(s.graph()) << "\n";
  if (log::ShowInfo()) out << "[INFO] msame run success\n";
  return 0;
}

// The input sets this run takes: all of them, or a shard's contiguous share of a folder batch; `first_step` is
// the dump step of its first inference, numbered as in one whole run.
Result<std::span<const InputSet>> MyShare(const MsameOptions& o, const std::vector<InputSet>& sets, const std::vector<std::string>& files,
                                         long loops, uint64_t& first_step, std::ostream& out) {
  first_step = 0;
  if (o.shard.empty()) return std::span<const InputSet>(sets);
  NPU_ASSIGN_OR_RETURN(Shard shard, ParseShard(o.shard, "--shard", {"E10001", "E10057"}));
  if (files.empty() || !std::filesystem::is_directory(files[0]))
    return Status::Error("E10001", "--shard", o.shard, "splits a batch, and --input names no folder", "Give --input DIR (one inference per file).");
  const auto [begin, end] = ShardRange(shard, sets.size());
  if (log::ShowInfo()) out << "[INFO] shard " << shard.k << "/" << shard.n << ": input files " << begin + 1 << ".." << end << " of " << sets.size() << "\n";
  first_step = begin * static_cast<uint64_t>(loops);
  return std::span<const InputSet>(sets).subspan(begin, end - begin);
}

int RunMsame(const MsameOptions& o, std::ostream& out) {
  if (!o.log.empty())
    if (auto l = log::ParseLevel(o.log)) log::SetLevel(*l);
  auto fail = [&](const Status& st) {
    cli::PrintError(out, st);
    return cli::kFailed;
  };
  if (auto errs = ValidateOptions(o); !errs.empty()) {
    for (const auto& e : errs) cli::PrintError(out, e);
    return cli::ExitCodeFor(errs);
  }
  std::vector<std::string> files;
  std::stringstream ss(o.input);
  for (std::string f; std::getline(ss, f, ',');)
    if (!f.empty()) files.push_back(f);
  auto sets = InputSets(files, std::filesystem::path(o.model).stem().string());
  if (!sets.ok()) return fail(sets.status());
  if (o.sim_mode == "timing") return RunTimingOnly(o, sets.value()[0].files, out);
  long loops = std::strtol(o.loop.c_str(), nullptr, 10);
  uint64_t step = 0;
  auto mine = MyShare(o, sets.value(), files, loops, step, out);
  if (!mine.ok()) return fail(mine.status());
  if (!o.output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output, ec);
    if (ec) return fail(Status::Error("E13004", "--output", o.output, "cannot create the directory: " + ec.message()));
  }
  auto runner = IsReferenceModel(o.model) ? OpenReferenceRunner(o, step, out) : OpenAclRunner(o, sets.value()[0].files, step, out);
  if (!runner.ok()) return fail(runner.status());
  Runner& r = *runner.value();
  const Session& s = r.session();
  const Graph& g = s.graph();
  if (log::ShowInfo()) out << "[INFO] model " << o.model << " loaded: " << g.nodes.size() << " ops, " << g.inputs.size() << " input(s), "
      << g.outputs.size() << " output(s)\n";
  double total = 0, first = 0;
  uint64_t runs = 0;
  for (const InputSet& set : mine.value()) {
    auto inputs = ReadInputSet(s, set);
    if (!inputs.ok()) return fail(inputs.status());
    // As CANN's msame: the inputs go to the device before the loop, and each loop times the inference alone.
    if (Status st = r.SetInputs(inputs.value()); !st.ok()) return fail(st);
    for (long l = 0; l < loops; ++l, ++runs) {
      auto t0 = std::chrono::steady_clock::now();
      Status st = r.Infer();
      double ms = log::MsSince(t0);
      if (!st.ok()) return fail(st);
      if (runs == 0) first = ms;
      total += ms;
      if (log::ShowInfo()) out << "[INFO] " << (mine.value().size() > 1 ? set.name + " " : "") << "loop " << l + 1 << " inference time: " << ms << " ms\n";
    }
    auto outputs = r.Outputs();  // taken whether written or not: an output the runtime allocated is freed here
    if (!outputs.ok()) return fail(outputs.status());
    if (!o.output.empty())
      for (size_t i = 0; i < outputs->size(); ++i) {
        const Tensor& t = (*outputs)[i];
        auto p = WriteOutput(o.output, set.name, i, t, o.outfmt);
        if (!p.ok()) return fail(p.status());
        if (log::ShowInfo()) out << "[INFO] output " << i << " " << DTypeName(t.dtype()) << ShapeToString(t.shape()) << " -> " << p.value() << "\n";
      }
  }
  // What the run timed on the simulated device, read before Finish releases the model.
  const std::string simulated = runs && s.timing() ? FormatSimulatedTime(s.simulated_ns() / static_cast<double>(runs), BatchOf(g), *s.soc()) + DynamicNote(g) : "";
  if (Status st = r.Finish(out); !st.ok()) return fail(st);
  if (runs == 0) {  // a shard of a batch smaller than the shard count
    if (log::ShowInfo()) out << "[INFO] this shard has no input files: nothing to run\n";
    return 0;
  }
  out << "Inference average time: " << total / static_cast<double>(runs) << " ms\n";
  if (runs > 1) out << "Inference average time without first time: " << (total - first) / static_cast<double>(runs - 1) << " ms\n";
  if (!simulated.empty()) out << simulated << "\n";
  if (log::ShowInfo()) out << "[INFO] msame run success\n";
  return 0;
}

}  // namespace npu::msame
