// SyntheticPng: the image a vision request carries (traffic.images), a real RGB PNG of the
// card's size, cheap enough to vary per request.
//
// Why vary it: engines cache images. vLLM hashes each image's pixels (its multimodal
// processor cache and the prefix cache's extra keys), so one image sent with every request
// would be processed once and then hit, hiding the encoder and prefill cost we mean to
// measure. Every variant differs in pixel (0,0) (24 bits from the variant number), so no
// two requests of a run send the same pixels (up to 2^24 distinct images).
//
// Why it is cheap: the PNG's one zlib stream is built from two raw-deflate pieces, the
// first row (re-deflated per variant, a few hundred bytes) ended by a sync flush so it is
// byte-aligned, and rows 1..H-1 (deflated once, here). The zlib trailer (Adler-32) and the
// IDAT CRC-32 are combined from the pieces' checksums with zlib's adler32_combine and
// crc32_combine. So a variant costs one row's deflate and a copy, not the whole image's.
//
// Pixels: filter type 0 (None) on every row; pixel (x, y) = (x, y, x ^ y) mod 256, except
// (0, 0). Thread-safety: immutable after Make; Encode is const and may run on any thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace infereng::bench {

class SyntheticPng {
 public:
  // width, height in [1, 16384] (card::kMaxImageSide).
  static Result<SyntheticPng> Make(int64_t width, int64_t height);

  // The PNG file of variant `v` (pixel (0,0) = v's low 24 bits as R, G, B).
  std::string Encode(uint64_t variant) const;
  // "data:image/png;base64,..." of Encode(variant): an OpenAI image_url part's url.
  std::string DataUrl(uint64_t variant) const;

  int64_t width() const { return width_; }
  int64_t height() const { return height_; }

 private:
  SyntheticPng() = default;
  std::string Row(int64_t y, uint64_t variant) const;  // filter byte + RGB

  int64_t width_ = 0, height_ = 0;
  std::string prefix_;       // signature + IHDR chunk
  std::string tail_;         // raw deflate of rows 1..H-1, ending in the final block ("" if H == 1)
  uint32_t tail_adler_ = 1;  // Adler-32 of rows 1..H-1 (uncompressed)
  uint64_t tail_raw_len_ = 0;
  uint32_t tail_crc_ = 0;    // CRC-32 of tail_
};

}  // namespace infereng::bench
