#include "frontend/onnx/weight_cut.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <cstdint>

namespace npu {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using WireFormatLite = google::protobuf::internal::WireFormatLite;

// Field numbers from onnx.proto: ModelProto.graph, GraphProto.initializer, TensorProto.raw_data.
constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

// The three message levels the walk goes through; every other field is copied as it is.
enum class Level { kModel, kGraph, kTensor };

class Cutter {
 public:
  explicit Cutter(std::span<const std::byte> model) : data_(reinterpret_cast<const uint8_t*>(model.data())), model_(model) {}

  std::optional<CutModel> Run() {
    CutModel out;
    if (model_.size() > INT_MAX || !Message(0, model_.size(), Level::kModel, out.bytes)) return std::nullopt;
    out.raw = std::move(raw_);
    return out;
  }

 private:
  const uint8_t* data_;
  std::span<const std::byte> model_;
  std::vector<std::optional<std::span<const std::byte>>> raw_;

  // Appends the message at [begin, begin + size) to `out`, minus the cut fields. False if it is malformed.
  bool Message(size_t begin, size_t size, Level level, std::string& out) {
    CodedInputStream in(data_ + begin, static_cast<int>(size));
    in.SetTotalBytesLimit(INT_MAX);
    in.SetRecursionLimit(0);  // groups are never walked into: SkipField of a group fails, so does the cut
    for (;;) {
      const int start = in.CurrentPosition();
      const uint32_t tag = in.ReadTag();
      if (tag == 0) return static_cast<size_t>(start) == size;  // the end, or a malformed tag
      const uint32_t field = WireFormatLite::GetTagFieldNumber(tag);
      const bool nested = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
                          ((level == Level::kModel && field == kModelGraph) || (level == Level::kGraph && field == kGraphInitializer) ||
                           (level == Level::kTensor && field == kTensorRawData));
      if (!nested) {
        if (!WireFormatLite::SkipField(&in, tag)) return false;
        out.append(reinterpret_cast<const char*>(data_ + begin + start), static_cast<size_t>(in.CurrentPosition() - start));
        continue;
      }
      uint32_t length = 0;
      if (!in.ReadVarint32(&length)) return false;
      const size_t at = begin + static_cast<size_t>(in.CurrentPosition());
      if (!in.Skip(static_cast<int>(length))) return false;
      if (level == Level::kTensor) {  // the payload: remembered, not copied (the last one wins, as in protobuf)
        raw_.back() = model_.subspan(at, length);
        continue;
      }
      if (level == Level::kGraph) raw_.emplace_back();
      std::string inner;
      if (!Message(at, length, level == Level::kModel ? Level::kGraph : Level::kTensor, inner)) return false;
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

std::optional<CutModel> CutInitializerData(std::span<const std::byte> model) { return Cutter(model).Run(); }

}  // namespace npu
