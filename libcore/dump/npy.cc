#include "dump/npy.h"

#include <charconv>
#include <cstring>

#include "base/file_io.h"

namespace npu {
namespace {

Status Bad(const std::string& path, std::string why) {
  return Status::Error("EH0001", "--input", path, "not a readable .npy file: " + why);
}

// Value of `'key': value` in the header dict (numpy writes a Python literal dict).
std::string Field(const std::string& h, const std::string& key) {
  auto p = h.find("'" + key + "'");
  if (p == std::string::npos) return {};
  p = h.find(':', p);
  if (p == std::string::npos) return {};
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p >= h.size()) return {};
  char open = h[p];
  char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  auto e = h.find(close, p + 1);
  if (e == std::string::npos) return {};
  return h.substr(p, e - p + (close == ',' ? 0 : 1));
}

}  // namespace

Result<Tensor> ReadNpy(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  auto b = f.bytes();
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return Bad(path, "missing \\x93NUMPY magic");
  uint8_t major = static_cast<uint8_t>(b[6]);
  size_t hlen, start;
  if (major == 1) {
    hlen = static_cast<uint8_t>(b[8]) | static_cast<size_t>(static_cast<uint8_t>(b[9])) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return Bad(path, "truncated header");
    uint32_t l;
    std::memcpy(&l, b.data() + 8, 4);
    hlen = l;
    start = 12;
  } else {
    return Bad(path, "unsupported version " + std::to_string(major));
  }
  if (hlen > b.size() - start) return Bad(path, "header runs past the end of the file");
  std::string h(reinterpret_cast<const char*>(b.data() + start), hlen);
  std::string descr = Field(h, "descr"), order = Field(h, "fortran_order"), shape = Field(h, "shape");
  if (order.find("False") == std::string::npos) return Bad(path, "Fortran-ordered arrays are not supported");
  const GeType* ge = descr.size() > 2 ? FindGeTypeByDescr(std::string_view(descr).substr(1, descr.size() - 2)) : nullptr;
  auto dt = ge ? DTypeFromGe(ge->code) : std::nullopt;
  if (!dt) return Bad(path, "unsupported dtype " + descr);
  Shape s;
  for (size_t i = 1; i + 1 < shape.size();) {
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i + 1 >= shape.size()) break;
    int64_t dim = 0;
    auto [end, ec] = std::from_chars(shape.data() + i, shape.data() + shape.size() - 1, dim);
    if (ec != std::errc() || end == shape.data() + i || dim < 0) return Bad(path, "bad shape " + shape);
    s.push_back(dim);
    i = static_cast<size_t>(end - shape.data());
  }
  size_t data = start + hlen;
  auto need = ByteSize(s, ge->size);
  if (!need) return Bad(path, "shape " + shape + " claims more bytes than any file can hold");
  if (b.size() - data != *need)
    return Bad(path, "data holds " + std::to_string(b.size() - data) + " bytes, shape " + ShapeToString(s) + " needs " + std::to_string(*need));
  return Tensor::View(*dt, s, f.share(), b.data() + data);
}

std::string NpyHeader(const Tensor& t) {
  const GeType* ge = FindGeType(static_cast<int32_t>(t.dtype()));
  if (t.dtype() == DType::kBF16) return NpyHeader("<u2", t.shape());  // numpy has no bfloat16: raw bits
  return NpyHeader(ge && ge->descr ? ge->descr : "|u1", t.shape());
}

std::string NpyHeader(std::string_view descr, const Shape& s) {
  std::string shape = "(";
  for (size_t i = 0; i < s.size(); ++i) shape += std::to_string(s[i]) + (s.size() == 1 || i + 1 < s.size() ? "," : "");
  shape += ")";
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(dict.size() & 0xff);
  h += static_cast<char>(dict.size() >> 8);
  return h + dict;
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  NPU_RETURN_IF_ERROR(w->Write(NpyHeader(t)));
  NPU_RETURN_IF_ERROR(w->Write(t.bytes()));
  return w->Commit();
}

}  // namespace npu
