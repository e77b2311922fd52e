#include "h5_reader.h"

#include <hdf5.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>

#include "base/child.h"
#include "ir/tensor.h"

namespace npu::cmp {
namespace {

std::mutex& H5Lock() {
  static std::mutex m;
  return m;
}

// Closes an HDF5 handle on scope exit.
struct Handle {
  hid_t id;
  herr_t (*close)(hid_t);
  ~Handle() {
    if (id >= 0) close(id);
  }
};

Status Bad(const std::string& file, const std::string& why) { return Status::Error("EC0014", "h5 file", file, why); }

Result<hid_t> OpenFile(const std::string& file) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as statuses, not stderr noise
  if (H5Fis_hdf5(file.c_str()) <= 0) return Bad(file, "not an HDF5 file, or unreadable");
  hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return Bad(file, "cannot open it");
  return f;
}

// The dump code for an HDF5 type, and the memory type to read it with.
int CodeOf(hid_t t, hid_t& mem) {
  size_t size = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_FLOAT:
      mem = size == 2 ? t : size == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;  // fp16 is read as stored (LE)
      return size == 2 ? 2 : size == 4 ? 1 : size == 8 ? 12 : 0;
    case H5T_INTEGER: {
      bool sign = H5Tget_sign(t) == H5T_SGN_2;
      static const hid_t* kS[] = {&H5T_NATIVE_SCHAR, &H5T_NATIVE_SHORT, &H5T_NATIVE_INT, &H5T_NATIVE_LLONG};
      static const hid_t* kU[] = {&H5T_NATIVE_UCHAR, &H5T_NATIVE_USHORT, &H5T_NATIVE_UINT, &H5T_NATIVE_ULLONG};
      int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
      if (k < 0) return 0;
      mem = sign ? *kS[k] : *kU[k];
      static const int kSc[] = {3, 5, 7, 8}, kUc[] = {4, 6, 9, 10};
      return sign ? kSc[k] : kUc[k];
    }
    case H5T_ENUM:  // h5py stores bool as an int8 enum
      mem = t;
      return size == 1 ? 11 : 0;
    default:
      return 0;
  }
}

struct VisitState {
  std::vector<H5Dataset>* out;
  hid_t file;
};

// A dataset named /op/seq/io/name (`name` without the leading slash); nullopt for any other path.
std::optional<H5Dataset> FromPath(const char* name) {
  static const std::regex kPath(R"(([^/]+)/(\d+)/([a-z]+)/(.+))");
  std::cmatch m;
  if (!std::regex_match(name, m, kPath)) return std::nullopt;
  return H5Dataset{std::string("/") + name, m[1].str(), m[3].str(), m[4].str(), std::stoull(m[2].str().substr(0, 18))};
}

herr_t Visit(hid_t obj, const char* name, const H5O_info_t* info, void* data) {
  if (info->type != H5O_TYPE_DATASET) return 0;
  auto* st = static_cast<VisitState*>(data);
  std::optional<H5Dataset> d = FromPath(name);
  if (!d) return 0;
  Handle ds{H5Dopen2(obj, name, H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) return 0;
  if (H5Aexists(ds.id, "Type") > 0) {  // only Type == 0 (TENSOR) datasets are tensors
    Handle a{H5Aopen(ds.id, "Type", H5P_DEFAULT), H5Aclose};
    long long type = -1;
    if (a.id < 0 || H5Aread(a.id, H5T_NATIVE_LLONG, &type) < 0 || type != 0) return 0;
  }
  d->bytes = H5Dget_storage_size(ds.id);
  st->out->push_back(std::move(*d));
  return 0;
}

// A listing as the child sends it: "path\0bytes\0" per dataset (HDF5 names hold no NUL).
std::string Serialize(const std::vector<H5Dataset>& sets) {
  std::string s;
  for (const H5Dataset& d : sets) s += d.path + '\0' + std::to_string(d.bytes) + '\0';
  return s;
}

std::optional<std::vector<H5Dataset>> Deserialize(std::string_view s) {
  std::vector<H5Dataset> out;
  while (!s.empty()) {
    size_t a = s.find('\0'), b = a == s.npos ? s.npos : s.find('\0', a + 1);
    if (b == s.npos || a == 0 || s[0] != '/') return std::nullopt;
    std::optional<H5Dataset> d = FromPath(std::string(s.substr(1, a - 1)).c_str());
    if (!d) return std::nullopt;
    d->bytes = std::strtoull(std::string(s.substr(a + 1, b - a - 1)).c_str(), nullptr, 10);
    out.push_back(std::move(*d));
    s.remove_prefix(b + 1);
  }
  return out;
}

// Deflate, the strongest filter h5py writes, expands at most about 1032:1 (RFC 1951: a 258-byte match per
// 2-bit code at best), so stored bytes bound the data a chunked dataset can hold.
constexpr uint64_t kMaxExpansion = 1032;

// The bytes a dataset's header claims, against what the file can hold, before anything is allocated: a
// contiguous or compact dataset's data is in the file; a chunked one's is at most kMaxExpansion its storage.
Status CheckClaimedSize(const std::string& file, const std::string& dataset, hid_t ds, uint64_t bytes) {
  Handle plist{H5Dget_create_plist(ds), H5Pclose};
  bool chunked = plist.id >= 0 && H5Pget_layout(plist.id) == H5D_CHUNKED;
  uint64_t stored = H5Dget_storage_size(ds);
  std::error_code ec;
  uint64_t file_bytes = std::filesystem::file_size(file, ec);
  uint64_t limit = chunked ? stored * kMaxExpansion : (ec ? stored : file_bytes);
  if (stored == 0 && !chunked) return Status::Ok();  // never written: read as the fill value, sized by its shape
  if (bytes > limit)
    return Bad(file, dataset + " claims " + std::to_string(bytes) + " bytes of data, but the file holds " + std::to_string(chunked ? stored : file_bytes) +
                         (chunked ? " stored bytes for it" : " bytes in all"));
  return Status::Ok();
}

Result<std::vector<H5Dataset>> ListUnlocked(const std::string& file) {
  NPU_ASSIGN_OR_RETURN(hid_t fid, OpenFile(file));
  Handle f{fid, H5Fclose};
  std::vector<H5Dataset> out;
  VisitState st{&out, fid};
  if (H5Ovisit(fid, H5_INDEX_NAME, H5_ITER_INC, Visit, &st) < 0) return Bad(file, "cannot walk its groups");
  return out;
}

Result<LoadedTensor> ReadUnlocked(const std::string& file, const std::string& dataset) {
  NPU_ASSIGN_OR_RETURN(hid_t fid, OpenFile(file));
  Handle f{fid, H5Fclose};
  Handle ds{H5Dopen2(fid, dataset.c_str(), H5P_DEFAULT), H5Dclose};
  if (ds.id < 0) return Bad(file, "no dataset " + dataset);
  Handle type{H5Dget_type(ds.id), H5Tclose};
  Handle space{H5Dget_space(ds.id), H5Sclose};
  int rank = H5Sget_simple_extent_ndims(space.id);
  if (rank < 0 || rank > 32) return Bad(file, dataset + " has an unreadable shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  LoadedTensor l;
  for (hsize_t d : dims) {
    if (d > static_cast<hsize_t>(kMaxTensorElements)) return Bad(file, dataset + " claims a dim of " + std::to_string(d));
    l.shape.push_back(static_cast<int64_t>(d));
  }
  if (std::string why = ShapeLimitProblem(l.shape); !why.empty()) return Bad(file, dataset + " claims " + ShapeToString(l.shape) + ": " + why);
  uint64_t n = static_cast<uint64_t>(NumElements(l.shape));
  hid_t mem = -1;
  l.dtype = FindGeType(CodeOf(type.id, mem));
  if (!l.dtype) {
    l.problem = "unsupported HDF5 element type";
    return l;
  }
  NPU_RETURN_IF_ERROR(CheckClaimedSize(file, dataset, ds.id, n * l.dtype->size));
  auto buf = std::make_shared<std::vector<std::byte>>(n * l.dtype->size);
  if (n && H5Dread(ds.id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf->data()) < 0) return Bad(file, "cannot read " + dataset);
  l.data = *buf;
  l.keep = buf;
  return l;
}

// A read as the child sends it: 'E' and the reason of an error, or 'T', the dtype code (0: none), the problem's
// length and text, the rank and dims (int64), then the data.
std::string SerializeRead(const Result<LoadedTensor>& r) {
  if (!r.ok()) return "E" + r.status().reason();
  const LoadedTensor& l = r.value();
  std::string s = "T";
  auto put = [&s](const auto& v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(static_cast<int32_t>(l.dtype ? l.dtype->code : 0));
  put(static_cast<uint32_t>(l.problem.size()));
  s += l.problem;
  put(static_cast<uint32_t>(l.shape.size()));
  for (int64_t d : l.shape) put(d);
  s.append(reinterpret_cast<const char*>(l.data.data()), l.data.size());
  return s;
}

Result<LoadedTensor> DeserializeRead(const std::string& file, std::string sent) {
  auto keep = std::make_shared<std::string>(std::move(sent));
  std::string_view s(*keep);
  if (!s.empty() && s[0] == 'E') return Bad(file, std::string(s.substr(1)));
  const Status damaged = Bad(file, "the child process reading it sent back a damaged tensor");
  size_t at = 1;
  auto take = [&](auto& v) {
    if (s.size() < at + sizeof v) return false;
    std::memcpy(&v, s.data() + at, sizeof v);
    at += sizeof v;
    return true;
  };
  int32_t code = 0;
  uint32_t problem = 0, rank = 0;
  if (s.empty() || s[0] != 'T' || !take(code) || !take(problem) || s.size() - at < problem) return damaged;
  LoadedTensor l;
  l.problem = std::string(s.substr(at, problem));
  at += problem;
  if (!take(rank) || rank > 32) return damaged;
  for (uint32_t i = 0; i < rank; ++i) {
    int64_t d = 0;
    if (!take(d) || d < 0) return damaged;
    l.shape.push_back(d);
  }
  if (!ShapeLimitProblem(l.shape).empty()) return damaged;  // NumElements below must not overflow
  l.dtype = code ? FindGeType(code) : nullptr;
  l.data = std::as_bytes(std::span(keep->data() + at, keep->size() - at));
  if (l.dtype && l.data.size() != static_cast<uint64_t>(NumElements(l.shape)) * l.dtype->size) return damaged;
  l.keep = keep;
  return l;
}

}  // namespace

Result<std::vector<H5Dataset>> ListH5Datasets(const std::string& file) {
  std::lock_guard lock(H5Lock());
  return ListUnlocked(file);
}

Result<LoadedTensor> ReadH5Dataset(const std::string& file, const std::string& dataset) {
  std::lock_guard lock(H5Lock());
  return ReadUnlocked(file, dataset);
}

Result<std::vector<H5Dataset>> ListH5DatasetsIsolated(const std::string& file) {
  constexpr int kListingFailed = 3;  // the child's exit code when the listing is an error (not a fault)
  std::lock_guard lock(H5Lock());  // held across the fork: the child calls the unlocked functions
  ChildOutcome child = RunInChild([&] {
    auto sets = ListUnlocked(file);
    if (!sets.ok()) EndChild(kListingFailed);
    return Serialize(*sets);
  });
  if (!child.started || child.exit_code == kListingFailed) return ListUnlocked(file);  // the same listing, in-process
  if (!child.ok)
    return Bad(file, "the HDF5 library failed while reading it (a child process listing it " + child.Describe() +
                         "): the file is corrupt in a way libhdf5 does not check");
  auto sets = Deserialize(child.output);
  if (!sets) return Bad(file, "the child process listing it sent back a damaged listing");
  return *std::move(sets);
}

namespace {

// One child process per .h5 file reads its datasets on request (a name in; a SerializeRead reply out, each
// length-prefixed), so libhdf5 runs outside msaccucmp: a fault ends the child and that read is an EC0014, and the
// next read starts a new child. One process per file, not per read: a fork per dataset tripled the time of a
// compare of 1000 small datasets.
class H5Server {
 public:
  explicit H5Server(std::string file) : file_(std::move(file)) {}
  H5Server(const H5Server&) = delete;
  H5Server& operator=(const H5Server&) = delete;
  ~H5Server() { Stop(); }

  Result<LoadedTensor> Read(const std::string& dataset) {
    if (pid_ < 0 && !Start()) return ReadUnlocked(file_, dataset);  // no child to be had: in-process
    const uint32_t n = static_cast<uint32_t>(dataset.size());
    uint64_t len = 0;
    std::string reply;
    bool ok = WriteAll(to_, {reinterpret_cast<const char*>(&n), sizeof n}) && WriteAll(to_, dataset) &&
              ReadExact(from_, &len, sizeof len) && len <= kMaxReply;
    if (ok) {
      reply.resize(len);
      ok = ReadExact(from_, reply.data(), len);
    }
    if (!ok)
      return Bad(file_, "the HDF5 library failed while reading " + dataset + " (the child process reading it " + Stop() +
                            "): the file is corrupt in a way libhdf5 does not check");
    return DeserializeRead(file_, std::move(reply));
  }

 private:
  static constexpr uint64_t kMaxReply = uint64_t{1} << 40;  // more than any tensor the limits let through
  static constexpr int kPipeBytes = 1 << 20;                 // Linux's default pipe-max-size for unprivileged users

  bool Start() {
    ::signal(SIGPIPE, SIG_IGN);  // a child that died is a failed read, not the end of msaccucmp
    int request[2], reply[2];
    if (::pipe(request) != 0) return false;
    if (::pipe(reply) != 0) {
      ::close(request[0]), ::close(request[1]);
      return false;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(request[0], STDIN_FILENO), ::dup2(reply[1], STDOUT_FILENO);
      int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, STDERR_FILENO);
      ::close_range(3, ~0U, 0);  // other files' pipes too: their children must see EOF when msaccucmp closes them
      Serve(file_);
    }
    ::close(request[0]), ::close(reply[1]);
    ::fcntl(reply[0], F_SETPIPE_SZ, kPipeBytes);  // fewer round trips for large tensors; the default if refused
    if (pid_ < 0) {
      ::close(request[1]), ::close(reply[0]);
      return false;
    }
    to_ = request[1], from_ = reply[0];
    return true;
  }

  // Ends the child (EOF on its requests) and says how it ended.
  std::string Stop() {
    if (pid_ < 0) return "was not running";
    ::close(to_), ::close(from_);
    ChildOutcome end = WaitForChild(pid_);
    pid_ = to_ = from_ = -1;
    return end.Describe();
  }

  [[noreturn]] static void Serve(const std::string& file) {
    for (;;) {
      uint32_t n = 0;
      if (!ReadExact(STDIN_FILENO, &n, sizeof n) || n > (1u << 20)) EndChild(0);
      std::string name(n, '\0');
      if (!ReadExact(STDIN_FILENO, name.data(), n)) EndChild(0);
      const std::string reply = SerializeRead(ReadUnlocked(file, name));
      const uint64_t len = reply.size();
      if (!WriteAll(STDOUT_FILENO, {reinterpret_cast<const char*>(&len), sizeof len}) || !WriteAll(STDOUT_FILENO, reply))
        EndChild(0);
    }
  }

  std::string file_;
  int pid_ = -1, to_ = -1, from_ = -1;
};

}  // namespace

Result<LoadedTensor> ReadH5DatasetIsolated(const std::string& file, const std::string& dataset) {
  std::lock_guard lock(H5Lock());  // one request at a time per process, as libhdf5 itself allows
  static std::map<std::string, std::unique_ptr<H5Server>> servers;
  std::unique_ptr<H5Server>& server = servers[file];
  if (!server) server = std::make_unique<H5Server>(file);
  return server->Read(dataset);
}

}  // namespace npu::cmp
