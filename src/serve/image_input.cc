// ImageInput: data URLs to image sizes (image_input.h).
#include "serve/image_input.h"

#include <zlib.h>

#include <algorithm>
#include <optional>

#include "core/base64.h"
#include "core/mix64.h"

namespace infereng::serve {
namespace {

constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};
constexpr int64_t kMaxPngSide = 0x7fffffff;  // PNG spec §11.2.2: at most 2^31 - 1

uint32_t U32(std::string_view b, std::size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8 | static_cast<unsigned char>(b[at + 3]);
}
uint32_t U16(std::string_view b, std::size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 8 | static_cast<unsigned char>(b[at + 1]);
}

// PNG: signature, then IHDR (length 13, "IHDR", width, height, ..., CRC).
ImageRead ReadPng(std::string_view b) {
  ImageRead r;
  if (b.size() < 33 || b.substr(0, 8) != kPngSignature) {
    r.error = "not a PNG file (bad signature or shorter than its header)";
    return r;
  }
  if (U32(b, 8) != 13 || b.substr(12, 4) != "IHDR") {
    r.error = "PNG: the first chunk is not a 13-byte IHDR";
    return r;
  }
  const auto crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(b.data() + 12), 17));
  if (crc != U32(b, 29)) {
    r.error = "PNG: IHDR CRC mismatch";
    return r;
  }
  r.header.width = U32(b, 16);
  r.header.height = U32(b, 20);
  if (r.header.width < 1 || r.header.height < 1 || r.header.width > kMaxPngSide || r.header.height > kMaxPngSide) {
    r.error = "PNG: width and height must be between 1 and 2^31-1";
    return r;
  }
  r.header.format = "png";
  return r;
}

// JPEG: SOI, then segments until a start-of-frame (SOF0..SOF15 but DHT C4, JPG C8, DAC CC)
// gives precision, height, width (ITU T.81 §B.2.2).
ImageRead ReadJpeg(std::string_view b) {
  ImageRead r;
  std::size_t i = 2;
  while (i + 4 <= b.size()) {
    if (static_cast<unsigned char>(b[i]) != 0xFF) break;
    const auto m = static_cast<unsigned char>(b[i + 1]);
    if (m == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {  // standalone markers
      i += 2;
      continue;
    }
    if (m == 0xD9 || m == 0xDA) break;  // EOI, SOS: no frame header before the scan
    const uint32_t len = U16(b, i + 2);
    if (len < 2) break;
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (len < 7 || i + 9 > b.size()) break;
      r.header.height = U16(b, i + 5);
      r.header.width = U16(b, i + 7);
      if (r.header.width < 1 || r.header.height < 1) {
        r.error = "JPEG: the frame header gives a zero width or height";
        return r;
      }
      r.header.format = "jpeg";
      return r;
    }
    i += 2 + len;
  }
  r.error = "JPEG: no frame header (SOFn) found before the scan";
  return r;
}

}  // namespace

ImageRead ReadImageUrl(std::string_view url) {
  ImageRead r;
  if (url.starts_with("http://") || url.starts_with("https://")) {
    r.error = "remote image URLs are not fetched by the embedded engine; send the image as a data URL "
              "(data:image/png;base64,...)";
    return r;
  }
  if (!url.starts_with("data:")) {
    r.error = "expected a data URL (data:image/png;base64,...)";
    return r;
  }
  const std::size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    r.error = "data URL without a ',' before its data";
    return r;
  }
  const std::string_view meta = url.substr(5, comma - 5);
  const std::string_view data = url.substr(comma + 1);
  if (!meta.ends_with(";base64")) {
    r.error = "data URL is not base64 (expected data:image/...;base64,...)";
    return r;
  }
  const std::string_view media = meta.substr(0, meta.size() - 7);
  const bool png = media == "image/png";
  const bool jpeg = media == "image/jpeg" || media == "image/jpg";
  if (!png && !jpeg) {
    r.error = "unsupported image type \"" + std::string(media.substr(0, 40)) + "\" (image/png or image/jpeg)";
    return r;
  }
  // PNG needs its first 33 bytes; a JPEG's frame header may follow large APPn segments.
  const std::optional<std::string> bytes = base64::Decode(data, png ? 33 : std::string::npos);
  if (!bytes) {
    r.error = "the image data is not valid base64";
    return r;
  }
  if (jpeg && (bytes->size() < 4 || static_cast<unsigned char>((*bytes)[0]) != 0xFF ||
               static_cast<unsigned char>((*bytes)[1]) != 0xD8)) {
    r.error = "not a JPEG file (no SOI marker)";
    return r;
  }
  r = png ? ReadPng(*bytes) : ReadJpeg(*bytes);
  if (!r.ok()) return r;
  const auto* p = reinterpret_cast<const Bytef*>(data.data());
  uint64_t crc = 0, adler = adler32(0, nullptr, 0);
  for (std::size_t at = 0; at < data.size(); at += 1u << 30) {  // uInt lengths
    const auto n = static_cast<uInt>(std::min<std::size_t>(data.size() - at, 1u << 30));
    crc = crc32(static_cast<uLong>(crc), p + at, n);
    adler = adler32(static_cast<uLong>(adler), p + at, n);
  }
  r.header.digest = Mix64(crc << 32 | adler);
  return r;
}

}  // namespace infereng::serve
