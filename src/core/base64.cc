#include "core/base64.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace infereng::base64 {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kTable = MakeTable();

}  // namespace

std::string Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += kAlphabet[v >> 6 & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[v >> 18 & 63];
    out += kAlphabet[v >> 12 & 63];
    out += rest == 2 ? kAlphabet[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> Decode(std::string_view text, std::size_t max_bytes) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(std::min(text.size() / 4 * 3, max_bytes));
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int8_t d = k >= 4 - pad ? 0 : kTable[static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)])];
      if (d < 0) return std::nullopt;  // not the alphabet ('=' anywhere but the padding included)
      v = v << 6 | static_cast<uint32_t>(d);
    }
    if (out.size() >= max_bytes) continue;  // past what the caller needs: only checked
    out += static_cast<char>(v >> 16 & 255);
    if (pad < 2) out += static_cast<char>(v >> 8 & 255);
    if (pad < 1) out += static_cast<char>(v & 255);
  }
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace infereng::base64
