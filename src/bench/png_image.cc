// SyntheticPng: a PNG spliced from a per-variant first row and a cached rest (png_image.h).
#include "bench/png_image.h"

#include <zlib.h>

#include <fmt/format.h>

#include "core/base64.h"

namespace infereng::bench {
namespace {

constexpr uint32_t kAdlerInit = 1;  // RFC 1950 §8.2: Adler-32 starts at 1

void PutU32(std::string& out, uint32_t v) {
  out += static_cast<char>(v >> 24 & 255);
  out += static_cast<char>(v >> 16 & 255);
  out += static_cast<char>(v >> 8 & 255);
  out += static_cast<char>(v & 255);
}

// zlib's checksums treat a null buffer as "give the initial value": an empty view (IEND's
// data) must leave the running value alone.
uint32_t Crc(uint32_t crc, std::string_view bytes) {
  if (bytes.empty()) return crc;
  return static_cast<uint32_t>(crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

// A chunk: length, type, data, CRC-32 over type and data (PNG spec §5.3).
void AppendChunk(std::string& out, std::string_view type, std::string_view data) {
  PutU32(out, static_cast<uint32_t>(data.size()));
  out += type;
  out += data;
  PutU32(out, Crc(Crc(0, type), data));
}

// Raw deflate (no zlib header or trailer) of `raw`; `flush` Z_SYNC_FLUSH ends byte-aligned
// with the stream still open (another piece may follow), Z_FINISH ends with the final block.
Result<std::string> RawDeflate(std::string_view raw, int level, int flush) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(raw.size())) + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, flush);
  const bool ok = flush == Z_FINISH ? rc == Z_STREAM_END : rc == Z_OK && z.avail_in == 0;
  out.resize(z.total_out);
  deflateEnd(&z);
  if (!ok) return Status::Internal(fmt::format("zlib: deflate returned {}", rc));
  return out;
}

uint32_t Adler(uint32_t adler, std::string_view bytes) {
  if (bytes.empty()) return adler;
  return static_cast<uint32_t>(adler32(adler, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

}  // namespace

std::string SyntheticPng::Row(int64_t y, uint64_t variant) const {
  std::string row(static_cast<size_t>(1 + 3 * width_), '\0');  // filter type 0
  for (int64_t x = 0; x < width_; ++x) {
    char* px = row.data() + 1 + 3 * x;
    px[0] = static_cast<char>(x & 255);
    px[1] = static_cast<char>(y & 255);
    px[2] = static_cast<char>((x ^ y) & 255);
  }
  if (y == 0) {
    row[1] = static_cast<char>(variant >> 16 & 255);
    row[2] = static_cast<char>(variant >> 8 & 255);
    row[3] = static_cast<char>(variant & 255);
  }
  return row;
}

Result<SyntheticPng> SyntheticPng::Make(int64_t width, int64_t height) {
  if (width < 1 || height < 1 || width > 16384 || height > 16384) {
    return Status::InvalidArgument(fmt::format("image size {}x{}: each side must be between 1 and 16384", width, height));
  }
  SyntheticPng p;
  p.width_ = width;
  p.height_ = height;
  p.prefix_ = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  PutU32(ihdr, static_cast<uint32_t>(width));
  PutU32(ihdr, static_cast<uint32_t>(height));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, adaptive filtering, no interlace
  AppendChunk(p.prefix_, "IHDR", ihdr);
  if (height > 1) {
    std::string rest;
    rest.reserve(static_cast<size_t>((height - 1) * (1 + 3 * width)));
    for (int64_t y = 1; y < height; ++y) rest += p.Row(y, 0);
    INFERENG_ASSIGN_OR_RETURN(p.tail_, RawDeflate(rest, Z_DEFAULT_COMPRESSION, Z_FINISH));
    p.tail_adler_ = Adler(kAdlerInit, rest);
    p.tail_raw_len_ = rest.size();
    p.tail_crc_ = Crc(0, p.tail_);
  }
  return p;
}

std::string SyntheticPng::Encode(uint64_t variant) const {
  const std::string row0 = Row(0, variant);
  // The first piece: zlib header (CM 8, 32K window, FCHECK so the pair is a multiple of
  // 31; RFC 1950 §2.2) then row 0, left open (sync flush) when rows follow.
  std::string idat("\x78\x01", 2);
  Result<std::string> head = RawDeflate(row0, Z_BEST_SPEED, height_ > 1 ? Z_SYNC_FLUSH : Z_FINISH);
  idat += head.ok() ? *head : std::string();  // deflate on a valid stream state never fails
  uint32_t adler = Adler(kAdlerInit, row0);
  uint32_t crc = Crc(Crc(0, "IDAT"), idat);
  if (height_ > 1) {
    adler = static_cast<uint32_t>(adler32_combine(adler, tail_adler_, static_cast<z_off_t>(tail_raw_len_)));
    crc = static_cast<uint32_t>(crc32_combine(crc, tail_crc_, static_cast<z_off_t>(tail_.size())));
  }
  std::string trailer;
  PutU32(trailer, adler);
  crc = Crc(crc, trailer);

  std::string out;
  out.reserve(prefix_.size() + idat.size() + tail_.size() + 40);
  out += prefix_;
  PutU32(out, static_cast<uint32_t>(idat.size() + tail_.size() + trailer.size()));
  out += "IDAT";
  out += idat;
  out += tail_;
  out += trailer;
  PutU32(out, crc);
  AppendChunk(out, "IEND", {});
  return out;
}

std::string SyntheticPng::DataUrl(uint64_t variant) const {
  return "data:image/png;base64," + base64::Encode(Encode(variant));
}

}  // namespace infereng::bench
