#include "frontend/weight_cut.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>

namespace npu {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using WireFormatLite = google::protobuf::internal::WireFormatLite;

// Field numbers from onnx.proto: ModelProto.graph, GraphProto.initializer, TensorProto.raw_data.
constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

class Cutter {
 public:
  Cutter(std::span<const std::byte> message, const CutPath& path, const CutHandlers& on)
      : data_(reinterpret_cast<const uint8_t*>(message.data())), message_(message), path_(path), on_(on) {}

  std::optional<std::string> Run() {
    std::string out;
    if (message_.size() > INT_MAX || !Message(0, message_.size(), 0, out)) return std::nullopt;
    return out;
  }

 private:
  const uint8_t* data_;
  std::span<const std::byte> message_;
  const CutPath& path_;
  const CutHandlers& on_;

  // Appends the message at [begin, begin + size), `depth` levels down the path, to `out`, minus the cut
  // fields. False if it is malformed.
  bool Message(size_t begin, size_t size, size_t depth, std::string& out) {
    CodedInputStream in(data_ + begin, static_cast<int>(size));
    in.SetTotalBytesLimit(INT_MAX);
    in.SetRecursionLimit(0);  // groups are never walked into: SkipField of a group fails, so does the cut
    const bool tensor = depth == path_.to_tensor.size();
    for (;;) {
      const int start = in.CurrentPosition();
      const uint32_t tag = in.ReadTag();
      if (tag == 0) return static_cast<size_t>(start) == size;  // the end, or a malformed tag
      const uint32_t field = WireFormatLite::GetTagFieldNumber(tag);
      const bool nested = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
                          field == (tensor ? path_.payload : path_.to_tensor[depth]);
      if (!nested) {
        if (!WireFormatLite::SkipField(&in, tag)) return false;
        out.append(reinterpret_cast<const char*>(data_ + begin + start), static_cast<size_t>(in.CurrentPosition() - start));
        continue;
      }
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const size_t at = begin + static_cast<size_t>(in.CurrentPosition());
      if (!in.Skip(static_cast<int>(length))) return false;
      if (tensor) {  // the payload: handed over, not copied
        on_.cut(message_.subspan(at, length), out);
        continue;
      }
      if (depth + 1 == path_.to_tensor.size() && on_.enter) on_.enter();
      std::string inner;
      if (!Message(at, length, depth + 1, inner)) return false;
      AppendField(tag, inner, out);
    }
  }

  static void AppendField(uint32_t tag, const std::string& body, std::string& out) {
    uint8_t head[2 * 5];  // two varint32s, 5 bytes each at most
    uint8_t* end = CodedOutputStream::WriteVarint32ToArray(tag, head);
    end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(body.size()), end);
    out.append(reinterpret_cast<const char*>(head), static_cast<size_t>(end - head));
    out += body;
  }
};

}  // namespace

std::optional<std::string> CutPayloads(std::span<const std::byte> message, const CutPath& path, const CutHandlers& on) {
  return Cutter(message, path, on).Run();
}

std::optional<CutModel> CutInitializerData(std::span<const std::byte> model) {
  CutModel m;
  // The last raw_data of an initializer wins, as in protobuf.
  CutHandlers on{[&] { m.raw.emplace_back(); }, [&](std::span<const std::byte> payload, std::string&) { m.raw.back() = payload; }};
  auto bytes = CutPayloads(model, {{kModelGraph, kGraphInitializer}, kTensorRawData}, on);
  if (!bytes) return std::nullopt;
  m.bytes = std::move(*bytes);
  return m;
}

}  // namespace npu
