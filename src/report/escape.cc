#include "report/escape.h"

#include <cstdint>
#include <cstdlib>

namespace infereng::report {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid.
std::size_t Utf8SequenceLength(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<std::uint8_t>(s[k]); };
  std::uint8_t c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xC2) return 0;                         // overlong
  if (n == 3 && c == 0xE0 && b(i + 1) < 0xA0) return 0;     // overlong
  if (n == 3 && c == 0xED && b(i + 1) >= 0xA0) return 0;    // surrogates
  if (n == 4 && c == 0xF0 && b(i + 1) < 0x90) return 0;     // overlong
  if (n == 4 && (c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90))) return 0;  // > U+10FFFF
  return n;
}

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  std::string tmp(s);
  char* end = nullptr;
  std::strtod(tmp.c_str(), &end);
  return end == tmp.c_str() + tmp.size();
}

}  // namespace

std::string EscapeXml(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out += kReplacement;
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\t': case '\n': out += static_cast<char>(c); break;
      case '\r': out += ' '; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += kReplacement;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

std::string CsvField(std::string_view s) {
  std::string v(s);
  if (!v.empty() && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@') && !IsNumber(v)) {
    v.insert(v.begin(), '\'');
  }
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string MarkdownCell(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '\n': case '\r': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace infereng::report
