// Base64 (RFC 4648 §4, the standard alphabet with '=' padding): the encoding of data URLs
// (bench sends images as data:image/png;base64,...; serve reads them back).
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace infereng::base64 {

std::string Encode(std::string_view bytes);

// Strict decoding: length a multiple of 4, only the alphabet, '=' only as the last one or
// two characters; nullopt otherwise. `max_bytes` stops after that many decoded bytes (a
// header read needs only the first few; the rest is still checked for valid characters).
std::optional<std::string> Decode(std::string_view text, std::size_t max_bytes = std::string::npos);

}  // namespace infereng::base64
