#include "sources.h"

#include <filesystem>

#include "compare/layout.h"
#include "custom_scripts.h"
#include "dump/dump_names.h"
#include "dump/npy.h"
#include "h5_reader.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

// The step folder of a dump ({...}/{model_id}/{step}/file); 0 when the parent is not a number.
uint64_t StepOf(const fs::path& p) {
  std::string s = p.parent_path().filename().string();
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18) return 0;
  return std::stoull(s);
}

}  // namespace

std::string RealFileName(const std::string& path, NameMaps& maps) {
  fs::path p(path);
  std::string name = p.filename().string();
  std::string stem = name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
  if (stem.empty() || stem.find_first_not_of("0123456789") != std::string::npos) return name;
  std::string dir = p.parent_path().string();
  if (!maps.count(dir)) maps[dir] = ReadNameMapping(dir);
  auto it = maps[dir].find(name);
  return it == maps[dir].end() ? name : it->second;
}

namespace {

template <class Fn>
void Walk(const std::string& dir, Fn&& fn) {
  std::error_code ec;
  if (fs::is_regular_file(dir, ec)) return fn(fs::path(dir));
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec)) fn(it->path());
}

Result<LoadedTensor> LoadDump(const TensorRef& r, CustomScripts* scripts) {
  NPU_ASSIGN_OR_RETURN(DumpFile f, ReadDumpFile(r.path));
  auto& list = r.input ? f.inputs : f.outputs;
  if (r.index >= static_cast<int>(list.size()))
    return Status::Error("EC0011", "dump file", r.path, std::string("has no ") + (r.input ? "input " : "output ") + std::to_string(r.index));
  DumpTensor t = list[r.index];
  if (r.input && r.framework_format >= 0) t.original_format = r.framework_format;
  LoadedTensor l;
  l.shape = t.shape;
  l.format = t.format;
  l.address = t.address;
  l.problem = t.problem;
  l.dtype = FindGeType(t.dtype_code);
  if (!l.problem.empty()) return l;
  std::string_view natural = NaturalLayout(t.format);
  bool scripted = scripts && scripts->Converts(FormatName(t.format), natural);
  if (scripted || NeedsLayoutConversion(t.format)) {
    auto c = scripted ? scripts->Convert(t, natural, t.original_shape) : ConvertLayout(t, l.dtype->size, "", {});
    if (!c.ok()) {
      l.problem = c.status().reason();
      return l;
    }
    auto buf = std::make_shared<std::vector<std::byte>>(std::move(c.value().bytes));
    l.shape = c.value().shape;
    l.format = l.shape.size() == 4 ? 0 : 2;
    l.data = *buf;
    l.keep = buf;
    return l;
  }
  l.data = t.data;
  l.keep = f.file.share();
  return l;
}

Result<LoadedTensor> LoadNpy(const TensorRef& r) {
  NPU_ASSIGN_OR_RETURN(Tensor t, ReadNpy(r.path));
  LoadedTensor l;
  l.dtype = FindGeType(static_cast<int>(t.dtype()));  // DType values are the GE codes
  l.shape = t.shape();
  l.format = t.rank() == 4 ? 0 : 2;
  l.data = t.bytes();
  l.keep = t.owner();
  if (!l.dtype) l.problem = "unsupported .npy dtype";
  return l;
}

}  // namespace

uint64_t FileSize(const std::string& path) {
  std::error_code ec;
  auto s = fs::file_size(path, ec);
  return ec ? 0 : s;
}

Result<LoadedTensor> Load(const TensorRef& r, CustomScripts* scripts) {
  switch (r.kind) {
    case TensorRef::kDump: return LoadDump(r, scripts);
    case TensorRef::kNpy: return LoadNpy(r);
    case TensorRef::kH5: return ReadH5DatasetIsolated(r.path, r.dataset);
    case TensorRef::kNone: break;
  }
  return Status::Error("E19999", "tensor", "", "no tensor to load");
}

std::map<std::string, DumpEntry> ScanDumps(const std::string& dir, std::vector<std::string>* skipped) {
  std::map<std::string, DumpEntry> out;
  NameMaps maps;
  Walk(dir, [&](const fs::path& p) {
    std::string name = p.filename().string();
    if (name == "mapping.csv" || name.ends_with(".npy") || name.ends_with(".csv") || name.ends_with(".txt")) return;
    auto n = ParseDumpFileName(RealFileName(p.string(), maps));
    if (!n) {
      if (skipped) skipped->push_back(p.string());
      return;
    }
    DumpEntry e{p.string(), n->op_type, n->op_name, n->task_id, n->timestamp, StepOf(p)};
    auto [it, fresh] = out.emplace(e.op_name, e);
    if (!fresh && std::tie(e.step, e.timestamp) > std::tie(it->second.step, it->second.timestamp)) it->second = e;
  });
  return out;
}

std::map<std::string, std::string> ScanGoldens(const std::string& dir) {
  std::map<std::string, std::pair<std::pair<uint64_t, uint64_t>, std::string>> best;
  NameMaps maps;
  Walk(dir, [&](const fs::path& p) {
    auto g = ParseGoldenFileName(RealFileName(p.string(), maps));
    if (!g) return;
    std::string key = g->op_name + "." + std::to_string(g->output_index);
    std::pair<uint64_t, uint64_t> rank{StepOf(p), g->timestamp};
    auto it = best.find(key);
    if (it == best.end() || rank > it->second.first) best[key] = {rank, p.string()};
  });
  std::map<std::string, std::string> out;
  for (auto& [k, v] : best) out[k] = v.second;
  return out;
}

}  // namespace npu::cmp
