// Vision inputs in the embedded engine: image_url parts read from data URLs (PNG IHDR, JPEG
// SOF), counted by the model's rule into usage.prompt_tokens exactly, refused with 400 naming
// the part when the model is text-only or the URL is not one we read; the same image sent
// again hits the prefix cache. Over real HTTP on 127.0.0.1 with the twin behind it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bench/png_image.h"
#include "core/base64.h"
#include "serve/http_test_client.h"
#include "serve/image_input.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "serve/twin_engine.h"
#include "testing/embedded_server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;
using testing::TestResponse;

std::string PngUrl(int64_t w, int64_t h, uint64_t variant = 1) {
  Result<bench::SyntheticPng> png = bench::SyntheticPng::Make(w, h);
  EXPECT_TRUE(png.ok());
  return png.ok() ? png->DataUrl(variant) : "";
}

// A baseline JPEG's first segments: SOI, APP0 (JFIF), SOF0 with height 480 and width 640.
std::string JpegUrl() {
  const std::string bytes("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
                          "\xff\xc0\x00\x0b\x08\x01\xe0\x02\x80\x01\x01\x11\x00\xff\xd9",
                          35);
  return "data:image/jpeg;base64," + base64::Encode(bytes);
}

TEST(ImageInput, ReadsSizesFromPngAndJpegHeaders) {
  const ImageRead png = ReadImageUrl(PngUrl(336, 224));
  ASSERT_TRUE(png.ok()) << png.error;
  EXPECT_EQ(png.header.width, 336);
  EXPECT_EQ(png.header.height, 224);
  EXPECT_EQ(png.header.format, "png");
  EXPECT_NE(ReadImageUrl(PngUrl(336, 224, 2)).header.digest, png.header.digest);  // another pixel, another image
  EXPECT_EQ(ReadImageUrl(PngUrl(336, 224)).header.digest, png.header.digest);
  const ImageRead jpeg = ReadImageUrl(JpegUrl());
  ASSERT_TRUE(jpeg.ok()) << jpeg.error;
  EXPECT_EQ(jpeg.header.width, 640);
  EXPECT_EQ(jpeg.header.height, 480);

  std::string bad_crc = *base64::Decode(PngUrl(8, 8).substr(22));
  bad_crc[29] ^= 1;
  const std::pair<std::string, std::string> refused[] = {
      {"https://example.com/cat.png", "remote image URLs are not fetched"},
      {"data:image/gif;base64,R0lGODlhAQABAAAAACw=", "unsupported image type \"image/gif\""},
      {"data:image/png;base64,iVBORw0K*", "not valid base64"},
      {"data:image/png,abc", "not base64"},
      {"data:image/png;base64," + base64::Encode(bad_crc), "IHDR CRC mismatch"},
      {"data:image/jpeg;base64," + base64::Encode("\xff\xd8\xff\xd9"), "no frame header"},
  };
  for (const auto& [url, why] : refused) {
    const ImageRead r = ReadImageUrl(url);
    EXPECT_NE(r.error.find(why), std::string::npos) << url << ": " << r.error;
  }
}

class VisionServer {
 public:
  explicit VisionServer(std::optional<card::VisionSpec> vision) : server_(ServerOptions{}, Setup(vision)) {}
  TestResponse Chat(const json& content) {
    TestClient c(server_.port());
    const json body = {{"messages", {{{"role", "user"}, {"content", content}}}}, {"max_tokens", 2}};
    return c.Call("POST", "/v1/chat/completions", body.dump());
  }

 private:
  static twin::TwinSetup Setup(std::optional<card::VisionSpec> vision) {
    twin::TwinSetup setup = infereng::testing::LinearTwin({.fixed_s = 0.002, .per_prefill_token_s = 0});
    setup.vision = vision;
    return setup;
  }
  infereng::testing::EmbeddedServer server_;
};

json Parts(const std::vector<std::string>& urls) {
  json parts = json::array({{{"type", "text"}, {"text", "describe these three"}}});
  for (const std::string& u : urls) parts.push_back({{"type", "image_url"}, {"image_url", {{"url", u}}}});
  return parts;
}

TEST(ServeVision, ImageTokensCountIntoPromptTokensExactly) {
  VisionServer s(card::VisionSpec{});  // Qwen2-VL's rule: 336x336 is 144 tokens, 1920x1080 is 1222
  TestResponse r = s.Chat(Parts({PngUrl(336, 336, 1), PngUrl(1920, 1080, 2), JpegUrl()}));
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  // 3 words + 144 + 1222 + 391 (640x480 -> 644x476: 23 x 17).
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3 + 144 + 1222 + 391) << r.body;
  EXPECT_EQ(j["timings"]["prompt_n"].get<int64_t>() + j["timings"]["cache_n"].get<int64_t>(), 3 + 144 + 1222 + 391);

  // The same image again: its tokens are served from the prefix cache (identity = its bytes).
  const std::string same = PngUrl(336, 336, 7);
  ASSERT_EQ(s.Chat(Parts({same})).status, 200);
  const json again = json::parse(s.Chat(Parts({same})).body);
  EXPECT_EQ(again["usage"]["prompt_tokens"], 3 + 144);
  EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"], 144) << again.dump();  // 9 full blocks of 16
  const json other = json::parse(s.Chat(Parts({PngUrl(336, 336, 8)})).body);
  EXPECT_EQ(other["usage"]["prompt_tokens_details"]["cached_tokens"], 0) << other.dump();
}

TEST(ServeVision, RefusalsNameThePart) {
  VisionServer s(card::VisionSpec{.tokens_per_image = 576});
  TestResponse remote = s.Chat(Parts({PngUrl(64, 64), "https://example.com/a.png"}));
  ASSERT_EQ(remote.status, 400);
  const json e = json::parse(remote.body)["error"];
  EXPECT_EQ(e["param"], "messages");
  EXPECT_NE(e["message"].get<std::string>().find("messages[0].content[2]: remote image URLs"), std::string::npos)
      << remote.body;
  TestResponse no_url = s.Chat(json::array({{{"type", "image_url"}, {"image_url", {{"detail", "low"}}}}}));
  EXPECT_EQ(no_url.status, 400) << no_url.body;
  TestResponse fixed = s.Chat(Parts({PngUrl(8, 8)}));
  ASSERT_EQ(fixed.status, 200) << fixed.body;
  EXPECT_EQ(json::parse(fixed.body)["usage"]["prompt_tokens"], 3 + 576);

  VisionServer text_only(std::nullopt);
  TestResponse r = text_only.Chat(Parts({PngUrl(64, 64)}));
  ASSERT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("does not accept images"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace infereng::serve
