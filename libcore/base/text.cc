#include "base/text.h"

namespace npu {

std::vector<std::string> SplitFields(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i], or 0 when the bytes there are not one.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  if (b < 0x80) return 1;
  size_t n = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  unsigned char b1 = byte(i + 1);
  if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F) || (b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F)) return 0;
  return n;
}

}  // namespace

bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeNonUtf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceAt(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    auto b = static_cast<unsigned char>(s[i++]);
    out += {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
  }
  return out;
}

}  // namespace npu
