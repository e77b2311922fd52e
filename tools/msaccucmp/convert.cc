// convert: every tensor of every dump file to .npy, raw .bin or .txt (one value per line), optionally
// back to NCHW/ND from a device layout.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <sstream>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/half.h"
#include "base/thread_pool.h"
#include "commands.h"
#include "custom_scripts.h"
#include "report.h"
#include "compare/layout.h"
#include "dump/dump_names.h"
#include "dump/npy.h"
#include "dump/overflow_record.h"
#include "sources.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

std::string Dims(const std::vector<int64_t>& s, const char* sep) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r.empty() ? "1" : r;
}

std::string Text(const GeType& d, std::span<const std::byte> data) {
  size_t n = data.size() / d.size;
  std::vector<double> v(n);
  DecodeToDouble(d, data.data(), n, v.data());
  std::ostringstream os;
  os.precision(d.size >= 8 ? 17 : 9);
  for (double x : v) os << x << "\n";
  return os.str();
}

std::string OverflowJson(std::span<const std::byte> data) {
  if (data.size() != sizeof(OverflowRecord)) return "{\"error\": \"not an overflow record\"}\n";
  OverflowRecord r;
  std::memcpy(&r, data.data(), sizeof r);
  std::ostringstream os;
  os << "{\"magic\": " << r.magic << ", \"acc_type\": " << r.acc_type << ", \"model_id\": " << r.model_id << ", \"stream_id\": " << r.stream_id
     << ", \"task_id\": " << r.task_id << ", \"status\": " << r.status << ", \"non_finite\": " << r.non_finite
     << ", \"saturated\": " << r.saturated << ", \"first_output\": " << r.first_output << ", \"first_index\": " << r.first_index
     << ", \"first_value\": " << (std::isfinite(r.first_value) ? FormatNumber(r.first_value) : "\"" + FormatNumber(r.first_value) + "\"") << "}\n";
  return os.str();
}

struct Job {
  const ConvertOptions& o;
  LongNameMap names;
  CustomScripts* scripts = nullptr;  // -c: format_convert/ scripts
  std::atomic<size_t> files{0};
};

Status ConvertTensor(Job& job, const std::string& base, const DumpTensor& t, bool opdebug) {
  const ConvertOptions& o = job.o;
  std::string stem = base + "." + t.kind_name() + "." + std::to_string(t.index);
  auto write = [&](const std::string& name, std::string_view text) -> Status {
    NPU_ASSIGN_OR_RETURN(std::string file, job.names.OnDisk(name));
    ++job.files;
    return WriteFileAtomic(o.out + "/" + file, std::as_bytes(std::span(text.data(), text.size())));
  };
  if (t.kind == DumpTensor::kBuffer || t.kind == DumpTensor::kSpace) {
    std::string name = base + (t.kind == DumpTensor::kBuffer ? ".l1buffer." : ".space.") + std::to_string(t.index) + ".bin";
    return write(name, {reinterpret_cast<const char*>(t.data.data()), t.data.size()});
  }
  if (opdebug) return write(stem + ".json", OverflowJson(t.data));
  if (!t.problem.empty()) return Status::Error("EC0011", "-d", base, std::string(t.kind_name()) + " " + std::to_string(t.index) + ": " + t.problem);
  const GeType& d = *FindGeType(t.dtype_code);
  std::span<const std::byte> data = t.data;
  std::vector<int64_t> shape = t.shape;
  std::vector<std::byte> converted;
  // A tensor already in a plain layout (ND, NCHW: a bias, a shape) is written as it is under -f.
  const bool plain = !NeedsLayoutConversion(t.format) && !(job.scripts && job.scripts->Converts(FormatName(t.format), o.format));
  if (!o.format.empty() && !plain) {
    std::vector<int64_t> hint;
    std::stringstream ss(o.shape);
    for (std::string v; std::getline(ss, v, ',');)
      if (!v.empty()) hint.push_back(std::stoll(v.substr(0, 18)));
    bool scripted = job.scripts && job.scripts->Converts(FormatName(t.format), o.format);
    if (job.scripts && !scripted && o.format != NaturalLayout(t.format)) {
      std::string pair = std::string(FormatName(t.format)) + "_to_" + o.format;
      return Status::Error("EC0015", "-f", o.format,
                           std::string(t.kind_name()) + " " + std::to_string(t.index) + " is " + std::string(FormatName(t.format)) + ", built in it converts to " +
                               std::string(NaturalLayout(t.format)) + ", and -c has no format_convert/convert_" + pair + ".py",
                           "Add convert_" + pair + ".py to " + o.custom + "/format_convert/, or use -f " + std::string(NaturalLayout(t.format)) + ".");
    }
    auto laid = scripted ? job.scripts->Convert(t, o.format, hint.empty() ? t.original_shape : hint) : ConvertLayout(t, d.size, o.format, hint);
    if (!laid.ok()) return laid.status();
    LaidOut l = std::move(laid).value();
    converted = std::move(l.bytes);
    data = converted;
    shape = l.shape;
    stem += "." + Dims(shape, "x");
  }
  if (o.type == "bin") {
    std::string name = stem + "." + Dims(shape, "_") + "." + d.name + "." + (o.format.empty() ? std::string(FormatName(t.format)) : o.format) + ".bin";
    return write(name, {reinterpret_cast<const char*>(data.data()), data.size()});
  }
  if (o.type == "txt") return write(stem + ".txt", Text(d, data));
  NPU_ASSIGN_OR_RETURN(std::string file, job.names.OnDisk(stem + ".npy"));
  ++job.files;
  return WriteNpyBytes(o.out + "/" + file, d, shape, data);
}

Status ConvertFile(Job& job, const std::string& path) {
  NPU_ASSIGN_OR_RETURN(DumpFile f, ReadDumpFile(path));
  std::string base = fs::path(path).filename().string();
  bool opdebug = base.starts_with("Opdebug.");
  auto selected = [&](const DumpTensor& t) {
    if (!job.o.output_index.empty()) return t.kind == DumpTensor::kOutput && std::to_string(t.index) == job.o.output_index;
    if (!job.o.input_index.empty()) return t.kind == DumpTensor::kInput && std::to_string(t.index) == job.o.input_index;
    return true;
  };
  for (const auto* list : {&f.inputs, &f.outputs, &f.buffers, &f.spaces})
    for (const DumpTensor& t : *list)
      if (selected(t)) NPU_RETURN_IF_ERROR(ConvertTensor(job, base, t, opdebug));
  return Status::Ok();
}

}  // namespace

Status WriteNpyBytes(const std::string& path, const GeType& d, const std::vector<int64_t>& shape, std::span<const std::byte> data) {
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  if (d.descr) {
    NPU_RETURN_IF_ERROR(w->Write(NpyHeader(d.descr, shape)));
    NPU_RETURN_IF_ERROR(w->Write(data));
  } else {  // bfloat16: numpy has none, so widen to float32
    std::vector<float> f(data.size() / 2);
    std::vector<uint16_t> raw(f.size());
    std::memcpy(raw.data(), data.data(), data.size());
    BF16ToFloat(raw, f);
    NPU_RETURN_IF_ERROR(w->Write(NpyHeader("<f4", shape)));
    NPU_RETURN_IF_ERROR(w->Write(std::as_bytes(std::span(f))));
  }
  return w->Commit();
}


int RunConvert(const ConvertOptions& o, std::ostream& out) {
  auto fail = [&](const Status& s) { return Fail(out, s); };
  if (o.type != "npy" && o.type != "bin" && o.type != "txt") return fail(Status::Error("E10001", "-t", o.type, "must be npy, bin or txt"));
  if (!o.format.empty() && o.format != "NCHW" && o.format != "ND" && (o.custom.empty() || !FormatFromName(o.format)))
    return fail(Status::Error("E10001", "-f", o.format, "the built-in conversions go to NCHW or ND",
                              o.custom.empty() ? "Use -f NCHW or -f ND, or -c DIR with DIR/format_convert/convert_<SRC>_to_" + o.format + ".py."
                                               : "Name a format npukit knows (NCHW, NHWC, ND, NC1HWC0, FRACTAL_Z, FRACTAL_NZ, HWCN, ...)."));
  if (!o.custom.empty() && o.format.empty()) return fail(Status::Error("E10001", "-c", o.custom, "-c converts layouts, so it needs the target format -f"));
  if (!o.shape.empty() && o.shape.find_first_not_of("0123456789,") != std::string::npos)
    return fail(Status::Error("E10001", "-s", o.shape, "must be comma-separated dims such as 1,3,224,224"));
  if (!o.input_index.empty() && !o.output_index.empty()) return fail(Status::Error("E10001", "-i", o.input_index, "-i and -o exclude each other"));
  std::vector<std::string> files;
  NameMaps maps;
  std::stringstream ss(o.dump);
  for (std::string p; std::getline(ss, p, ',');) {
    std::error_code ec;
    if (!fs::exists(p, ec)) return fail(Status::Error("E13001", "-d", p, "the path does not exist"));
    if (fs::is_regular_file(p, ec)) files.push_back(p);
    else
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && ParseDumpFileName(RealFileName(it->path().string(), maps))) files.push_back(it->path().string());
  }
  if (files.empty()) return fail(Status::Error("EC0002", "-d", o.dump, "no dump files found"));
  ConvertOptions opts = o;
  if (opts.out.empty()) opts.out = ".";
  std::error_code ec;
  fs::create_directories(opts.out, ec);
  if (ec) return fail(Status::Error("E13004", "-out", opts.out, "cannot create the folder: " + ec.message()));
  auto scripts = CustomScripts::Start(o.custom, out);
  if (!scripts.ok()) return fail(scripts.status());
  Job job{opts, LongNameMap(opts.out), scripts.value().get()};
  std::vector<Status> results(files.size());
  ThreadPool::Global().ParallelFor(files.size(), 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) results[i] = ConvertFile(job, files[i]);
  });
  size_t failed = 0;
  std::string list;
  for (size_t i = 0; i < files.size(); ++i)
    if (!results[i].ok()) {
      ++failed;
      cli::PrintError(out, results[i]);
      list += files[i] + "\n";
    }
  if (failed) (void)WriteFileAtomic(opts.out + "/convert_failed_file_list.txt", std::as_bytes(std::span(list.data(), list.size())));
  if (log::ShowInfo()) out << "[INFO] converted " << files.size() - failed << " of " << files.size() << " dump file(s) into " << job.files << " file(s) in " << opts.out << "\n";
  return failed ? 1 : 0;
}

}  // namespace npu::cmp
