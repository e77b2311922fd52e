#include "source_text.h"

#include <iconv.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace transplt {
namespace {

bool ValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    unsigned c = *p;
    if (c < 0x80) { ++p; continue; }
    int n = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
    if (n < 0 || end - p <= n) return false;
    for (int i = 1; i <= n; ++i)
      if ((p[i] & 0xC0) != 0x80) return false;
    if ((n == 1 && c < 0xC2) || (n == 2 && c == 0xE0 && p[1] < 0xA0) || (n == 3 && (c > 0xF4 || (c == 0xF0 && p[1] < 0x90))))
      return false;  // overlong or out of range
    p += n + 1;
  }
  return true;
}

// PEP 263: a comment matching "coding[:=]\s*([-\w.]+)" on line 1, or on line 2 when line 1 is a comment.
std::string CodingCookie(std::string_view text) {
  for (int line = 0; line < 2 && !text.empty(); ++line) {
    size_t eol = text.find('\n');
    std::string_view l = text.substr(0, eol);
    size_t i = l.find_first_not_of(" \t\f");
    if (i == std::string_view::npos || l[i] != '#') {
      if (i != std::string_view::npos) return {};  // code on this line: no cookie after it
    } else {
      for (size_t at = l.find("coding", i); at != std::string_view::npos; at = l.find("coding", at + 1)) {
        size_t j = at + 6;
        if (j >= l.size() || (l[j] != ':' && l[j] != '=')) continue;
        ++j;
        while (j < l.size() && (l[j] == ' ' || l[j] == '\t')) ++j;
        size_t k = j;
        while (k < l.size() && (std::isalnum(static_cast<unsigned char>(l[k])) || l[k] == '-' || l[k] == '_' || l[k] == '.')) ++k;
        if (k > j) return std::string(l.substr(j, k - j));
      }
    }
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return {};
}

std::string Normalise(std::string name) {
  for (char& c : name) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "utf8" || name == "utf-8-sig" || name == "utf") return "utf-8";
  if (name == "latin-1" || name == "latin1" || name == "iso-latin-1" || name == "l1") return "iso-8859-1";
  return name;
}

struct IconvHandle {
  iconv_t cd;
  explicit IconvHandle(const char* to, const char* from) : cd(iconv_open(to, from)) {}
  ~IconvHandle() { if (ok()) iconv_close(cd); }
  bool ok() const { return cd != reinterpret_cast<iconv_t>(-1); }
};

bool Convert(const std::string& to, const std::string& from, std::string_view in, std::string& out) {
  IconvHandle h(to.c_str(), from.c_str());
  if (!h.ok()) return false;
  out.assign(in.size() * 2 + 16, '\0');
  char* src = const_cast<char*>(in.data());
  size_t left = in.size(), done = 0;
  while (left > 0) {
    char* dst = out.data() + done;
    size_t room = out.size() - done;
    if (iconv(h.cd, &src, &left, &dst, &room) == static_cast<size_t>(-1)) {
      done = out.size() - room;
      if (errno != E2BIG) return false;
      out.resize(out.size() * 2);
      continue;
    }
    done = out.size() - room;
  }
  out.resize(done);
  return true;
}

}  // namespace

std::variant<SourceText, DecodeProblem> DecodeSource(std::string_view raw) {
  if (std::memchr(raw.data(), '\0', raw.size()))
    return DecodeProblem{"binary content (NUL bytes): not Python source"};
  SourceText src;
  if (raw.substr(0, 3) == "\xEF\xBB\xBF") {
    src.bom = true;
    raw.remove_prefix(3);
  }
  if (std::string cookie = CodingCookie(raw); !cookie.empty()) src.encoding = Normalise(cookie);
  if (src.bom && src.encoding != "utf-8")
    return DecodeProblem{"UTF-8 BOM together with a '" + src.encoding + "' coding cookie (Python rejects this)"};
  if (src.encoding == "utf-8") {
    if (!ValidUtf8(raw)) return DecodeProblem{"not valid UTF-8 and no PEP 263 coding cookie says otherwise"};
    src.utf8.assign(raw);
    return src;
  }
  std::string back;
  if (!Convert("UTF-8", src.encoding, raw, src.utf8))
    return DecodeProblem{"cannot decode as '" + src.encoding + "' (the file's coding cookie)"};
  if (!Convert(src.encoding, "UTF-8", src.utf8, back) || back != raw)
    return DecodeProblem{"bytes do not round-trip through '" + src.encoding + "'; refusing to rewrite them"};
  return src;
}

std::variant<std::string, DecodeProblem> EncodeSource(const SourceText& src, std::string_view utf8) {
  std::string out = src.bom ? "\xEF\xBB\xBF" : "";
  if (src.encoding == "utf-8") return out.append(utf8);
  std::string enc;
  if (!Convert(src.encoding, "UTF-8", utf8, enc))
    return DecodeProblem{"migrated text cannot be encoded as '" + src.encoding + "'"};
  return out.append(enc);
}

LineIndex::LineIndex(std::string_view text) {
  starts_.push_back(0);
  for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) starts_.push_back(i + 1);
}

uint32_t LineIndex::LineOf(size_t offset) const {
  return static_cast<uint32_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin());
}

}  // namespace transplt
