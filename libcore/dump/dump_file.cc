#include "dump/dump_file.h"

#include <climits>
#include <cstring>

#include "base/half.h"

namespace npu {
namespace {

template <class T>
void Widen(const std::byte* src, size_t n, double* dst) {
  for (size_t i = 0; i < n; ++i) {  // dump payloads sit at any offset in the file: no aligned T* loads
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<double>(v);
  }
}

// fp16/bf16 go through the 32-bit vector converters in blocks that stay in L1.
template <void (*Convert)(std::span<const uint16_t>, std::span<float>)>
void WidenHalf(const std::byte* src, size_t n, double* dst) {
  float tmp[1024];
  for (size_t b = 0; b < n; b += 1024) {
    size_t m = std::min<size_t>(1024, n - b);
    uint16_t in[1024];
    std::memcpy(in, src + 2 * b, 2 * m);
    Convert({in, m}, {tmp, m});
    for (size_t i = 0; i < m; ++i) dst[b + i] = tmp[i];
  }
}

Status Corrupt(const std::string& path, const std::string& why) {
  return Status::Error("EC0011", "dump file", path, why);
}

std::vector<int64_t> Dims(const toolkit::dump::Shape& s) {
  return {s.dim().begin(), s.dim().end()};
}

// Checks the declared size against dtype x shape, so a lying header is caught per tensor.
void CheckTensor(DumpTensor& t) {
  const GeType* d = FindGeType(t.dtype_code);
  if (!d) {
    t.problem = "unsupported data type code " + std::to_string(t.dtype_code);
    return;
  }
  if (t.kind != DumpTensor::kInput && t.kind != DumpTensor::kOutput) return;
  unsigned __int128 want = d->size;
  for (int64_t v : t.shape) want *= static_cast<uint64_t>(v);
  if (want != t.data.size())
    t.problem = "size " + std::to_string(t.data.size()) + " does not match " + d->name + " shape of " +
                std::to_string(static_cast<uint64_t>(want / d->size)) + " elements";
}

}  // namespace

void DecodeToDouble(const GeType& t, const std::byte* src, size_t n, double* dst) {
  using HalfConverter = void (*)(std::span<const uint16_t>, std::span<float>);
  switch (static_cast<DType>(t.code)) {  // GE codes: every row of ir/dtype's table
    case DType::kF32: return Widen<float>(src, n, dst);
    case DType::kF16: return WidenHalf<static_cast<HalfConverter>(HalfToFloat)>(src, n, dst);
    case DType::kBF16: return WidenHalf<static_cast<HalfConverter>(BF16ToFloat)>(src, n, dst);
    case DType::kF64: return Widen<double>(src, n, dst);
    case DType::kI8: return Widen<int8_t>(src, n, dst);
    case DType::kU8: case DType::kBool: return Widen<uint8_t>(src, n, dst);
    case DType::kI16: return Widen<int16_t>(src, n, dst);
    case DType::kU16: return Widen<uint16_t>(src, n, dst);
    case DType::kI32: return Widen<int32_t>(src, n, dst);
    case DType::kU32: return Widen<uint32_t>(src, n, dst);
    case DType::kI64: return Widen<int64_t>(src, n, dst);
    case DType::kU64: return Widen<uint64_t>(src, n, dst);
    case DType::kUndefined: return;
  }
}

const char* DumpTensor::kind_name() const {
  static const char* kNames[] = {"input", "output", "buffer", "space"};
  return kNames[kind];
}

Result<DumpFile> ReadDumpFile(const std::string& path) {
  DumpFile f;
  f.path = path;
  NPU_ASSIGN_OR_RETURN(f.file, MappedFile::Open(path));
  auto b = f.file.bytes();
  if (b.size() <= 8) return Corrupt(path, "the file has " + std::to_string(b.size()) + " bytes, fewer than a header");
  uint64_t hlen;
  std::memcpy(&hlen, b.data(), 8);
  if (hlen > b.size() - 8)
    return Corrupt(path, "the header length " + std::to_string(hlen) + " runs past the end of the file (" +
                             std::to_string(b.size()) + " bytes)");
  if (hlen > static_cast<uint64_t>(INT32_MAX)) return Corrupt(path, "the header length " + std::to_string(hlen) + " is implausibly large");
  toolkit::dump::DumpData h;
  if (!h.ParseFromArray(b.data() + 8, static_cast<int>(hlen)))
    return Corrupt(path, "the " + std::to_string(hlen) + "-byte header is not a DumpData protobuf");
  f.op_name = h.op_name();
  f.dump_time = h.dump_time();
  for (const auto& a : h.attr()) f.attrs.emplace_back(a.name(), a.value());

  // Payloads follow in input, output, buffer, workspace order; each size is checked against what is left.
  size_t offset = 8 + hlen;
  auto take = [&](DumpTensor& t, uint64_t size) -> Status {
    if (size > b.size() - offset)
      return Corrupt(path, std::string(t.kind_name()) + " " + std::to_string(t.index) + " declares " +
                               std::to_string(size) + " bytes at offset " + std::to_string(offset) + ", but only " +
                               std::to_string(b.size() - offset) + " remain");
    t.data = b.subspan(offset, size);
    offset += size;
    return Status::Ok();
  };
  auto make = [](DumpTensor::Kind kind, int i, int dtype, int format) {
    DumpTensor t;
    t.kind = kind, t.index = i, t.dtype_code = dtype, t.format = format;
    return t;
  };
  for (int i = 0; i < h.input_size(); ++i) {
    const auto& in = h.input(i);
    DumpTensor t = make(DumpTensor::kInput, i, in.data_type(), in.format());
    t.shape = Dims(in.shape()), t.original_shape = Dims(in.original_shape()), t.sub_format = in.sub_format();
    t.address = in.address();
    NPU_RETURN_IF_ERROR(take(t, in.size()));
    f.inputs.push_back(std::move(t));
  }
  for (int i = 0; i < h.output_size(); ++i) {
    const auto& out = h.output(i);
    DumpTensor t = make(DumpTensor::kOutput, i, out.data_type(), out.format());
    t.shape = Dims(out.shape()), t.original_shape = Dims(out.original_shape()), t.sub_format = out.sub_format();
    t.address = out.address();
    if (out.has_original_op()) {
      t.original_name = out.original_op().name();
      t.original_output_index = static_cast<int>(out.original_op().output_index());
      t.original_format = out.original_op().format();
    }
    NPU_RETURN_IF_ERROR(take(t, out.size()));
    f.outputs.push_back(std::move(t));
  }
  for (int i = 0; i < h.buffer_size(); ++i) {
    DumpTensor t = make(DumpTensor::kBuffer, i, 4 /*uint8*/, 2 /*ND*/);
    NPU_RETURN_IF_ERROR(take(t, h.buffer(i).size()));
    t.shape = {static_cast<int64_t>(t.data.size())};
    f.buffers.push_back(std::move(t));
  }
  for (int i = 0; i < h.space_size(); ++i) {
    DumpTensor t = make(DumpTensor::kSpace, i, 4, 2);
    NPU_RETURN_IF_ERROR(take(t, h.space(i).size()));
    t.shape = {static_cast<int64_t>(t.data.size())};
    f.spaces.push_back(std::move(t));
  }
  if (offset != b.size())
    return Corrupt(path, "the header's sizes account for " + std::to_string(offset) + " bytes, the file has " +
                             std::to_string(b.size()));
  for (auto* list : {&f.inputs, &f.outputs})
    for (DumpTensor& t : *list) CheckTensor(t);
  return f;
}

Status WriteDumpFile(const std::string& path, const toolkit::dump::DumpData& header,
                     std::span<const std::span<const std::byte>> payloads) {
  // A reader trusts these sizes to find each payload: never write a file whose header lies.
  std::vector<uint64_t> sizes;
  for (const auto& t : header.input()) sizes.push_back(t.size());
  for (const auto& t : header.output()) sizes.push_back(t.size());
  for (const auto& t : header.buffer()) sizes.push_back(t.size());
  for (const auto& t : header.space()) sizes.push_back(t.size());
  if (sizes.size() != payloads.size()) return Status::Error("E19999", "dump file", path, "the header lists " + std::to_string(sizes.size()) + " tensors, " + std::to_string(payloads.size()) + " payloads given");
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != payloads[i].size())
      return Status::Error("E19999", "dump file", path, "tensor " + std::to_string(i) + " is declared " + std::to_string(sizes[i]) + " bytes, its payload has " + std::to_string(payloads[i].size()));
  std::string h;
  if (!header.SerializeToString(&h)) return Status::Error("E19999", "dump file", path, "cannot serialise the header");
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  uint64_t hlen = h.size();
  NPU_RETURN_IF_ERROR(w->Write(std::as_bytes(std::span(&hlen, 1))));
  NPU_RETURN_IF_ERROR(w->Write(h));
  for (auto p : payloads) NPU_RETURN_IF_ERROR(w->Write(p));
  return w->Commit();
}

}  // namespace npu
