// SyntheticPng makes real PNGs: every chunk's CRC checks, the IDAT inflates (zlib, Adler-32
// checked by inflate) to exactly the rows the header promises, and the pixels are the ones
// png_image.h documents, the variant in pixel (0,0).
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>

#include "bench/png_image.h"
#include "core/base64.h"

namespace infereng::bench {
namespace {

uint32_t U32(const std::string& b, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) << 24 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8 | static_cast<unsigned char>(b[at + 3]);
}

struct Decoded {
  uint32_t width = 0, height = 0;
  std::string pixels;  // the inflated scanlines (filter byte + RGB per row)
};

// A PNG reader for the test: chunks with CRCs, IHDR, concatenated IDATs, IEND last.
Decoded Decode(const std::string& png) {
  Decoded d;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::string idat;
  std::vector<std::string> types;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = U32(png, at);
    const std::string type = png.substr(at + 4, 4);
    const std::string data = png.substr(at + 8, len);
    const auto crc = static_cast<uint32_t>(crc32(crc32(0, nullptr, 0), reinterpret_cast<const Bytef*>(png.data() + at + 4), len + 4));
    EXPECT_EQ(crc, U32(png, at + 8 + len)) << type;
    types.push_back(type);
    if (type == "IHDR") {
      d.width = U32(data, 0);
      d.height = U32(data, 4);
      EXPECT_EQ(data.substr(8), std::string("\x08\x02\x00\x00\x00", 5));  // 8-bit RGB, no interlace
    }
    if (type == "IDAT") idat += data;
    at += 12 + len;
  }
  EXPECT_EQ(types.front(), "IHDR");
  EXPECT_EQ(types.back(), "IEND");
  uLongf size = static_cast<uLongf>(d.height) * (1 + 3 * d.width);
  d.pixels.assign(size, '\0');
  const int rc = uncompress(reinterpret_cast<Bytef*>(d.pixels.data()), &size,
                            reinterpret_cast<const Bytef*>(idat.data()), static_cast<uLong>(idat.size()));
  EXPECT_EQ(rc, Z_OK);  // a bad Adler-32 or a short stream fails here
  EXPECT_EQ(size, d.pixels.size());
  return d;
}

TEST(SyntheticPng, DecodesToTheDocumentedPixels) {
  for (const auto& [w, h] : std::map<int, int>{{336, 336}, {1, 1}, {7, 1}, {1, 5}, {640, 480}}) {
    Result<SyntheticPng> png = SyntheticPng::Make(w, h);
    ASSERT_TRUE(png.ok()) << png.status().ToString();
    const Decoded d = Decode(png->Encode(0x123456));
    ASSERT_EQ(d.width, static_cast<uint32_t>(w));
    ASSERT_EQ(d.height, static_cast<uint32_t>(h));
    for (int y = 0; y < h; ++y) {
      const char* row = d.pixels.data() + static_cast<size_t>(y) * (1 + 3 * w);
      ASSERT_EQ(row[0], 0) << "filter of row " << y;
      for (int x = 0; x < w; ++x) {
        const auto* px = reinterpret_cast<const unsigned char*>(row + 1 + 3 * x);
        if (x == 0 && y == 0) {
          EXPECT_EQ(px[0], 0x12);
          EXPECT_EQ(px[1], 0x34);
          EXPECT_EQ(px[2], 0x56);
        } else {
          ASSERT_EQ(px[0], x & 255) << x << "," << y;
          ASSERT_EQ(px[1], y & 255) << x << "," << y;
          ASSERT_EQ(px[2], (x ^ y) & 255) << x << "," << y;
        }
      }
    }
  }
}

TEST(SyntheticPng, VariantsDifferAndTheDataUrlIsTheFile) {
  Result<SyntheticPng> png = SyntheticPng::Make(64, 48);
  ASSERT_TRUE(png.ok());
  EXPECT_NE(png->Encode(1), png->Encode(2));
  EXPECT_EQ(png->Encode(7), png->Encode(7));
  const std::string url = png->DataUrl(7);
  ASSERT_TRUE(url.starts_with("data:image/png;base64,"));
  EXPECT_EQ(base64::Decode(url.substr(22)), png->Encode(7));
  EXPECT_FALSE(SyntheticPng::Make(0, 5).ok());
  EXPECT_FALSE(SyntheticPng::Make(5, 16385).ok());
}

}  // namespace
}  // namespace infereng::bench
