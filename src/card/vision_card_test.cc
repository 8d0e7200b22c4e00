// Vision inputs on a card (traffic.images, model.vision) and the image-token rule
// (card/vision.h), against values computed by hand from Qwen2-VL's smart_resize.
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "card/gaps.h"
#include "card/vision.h"
#include "testing/paths.h"

namespace infereng::card {
namespace {

Result<WorkloadCard> Parse(const std::string& extra) {
  return ParseCard(R"(name: vision
traffic:
  arrival: 5rps
  input_tokens: 100
  output_tokens: 20
)" + extra,
                   "v.yaml");
}

ImageCost Cost(const VisionSpec& v, int64_t width, int64_t height) {
  Result<ImageCost> c = ImageCostFor(v, width, height);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : ImageCost{};
}

TEST(VisionRule, FixedTokensPerImageWhateverTheSize) {
  const VisionSpec llava{.tokens_per_image = 576};
  EXPECT_EQ(Cost(llava, 336, 336).tokens, 576);
  EXPECT_EQ(Cost(llava, 1920, 1080).tokens, 576);
  EXPECT_EQ(Cost(llava, 1920, 1080).patches, 576);  // one token per CLIP patch
}

// Qwen2-VL defaults: patch 14, merge 2 (factor 28), min 56*56, max 28*28*1280 pixels.
// Each expected value is smart_resize worked by hand: h' = round(h/28)*28 (halves to even),
// then scaled down (floor) when h'w' > max_pixels or up (ceil) when h'w' < min_pixels;
// tokens = (h'/28)(w'/28), patches = (h'/14)(w'/14).
TEST(VisionRule, QwenSmartResize) {
  const VisionSpec q;
  const ImageCost a = Cost(q, 336, 336);  // 12 x 12
  EXPECT_EQ(a.tokens, 144);
  EXPECT_EQ(a.patches, 576);
  // 70/28 = 2.5 rounds to 2 (Python's round), so 56x56 = min_pixels exactly: 2 x 2. Rounding
  // halves up would give 3 x 3 = 9.
  EXPECT_EQ(Cost(q, 70, 70).tokens, 4);
  EXPECT_EQ(Cost(q, 98, 98).tokens, 16);  // 3.5 rounds to 4 (even)
  // Below min_pixels: 28x28 -> beta = sqrt(3136/784) = 2 -> 56x56.
  const ImageCost small = Cost(q, 28, 28);
  EXPECT_EQ(small.resized_width, 56);
  EXPECT_EQ(small.tokens, 4);
  // Above max_pixels: 2048x2048 rounds to 2044x2044 > 1003520; beta = sqrt(2048^2/1003520)
  // = 2.0444, 2048/beta/28 = 35.78 -> 35 -> 980x980: 35 x 35.
  const ImageCost big = Cost(q, 2048, 2048);
  EXPECT_EQ(big.resized_height, 980);
  EXPECT_EQ(big.tokens, 1225);
  EXPECT_EQ(big.patches, 4900);
  // 1920x1080: 69x39 blocks round to 1932x1092 > max; beta = 2.0417 -> 1316x728: 47 x 26.
  const ImageCost hd = Cost(q, 1920, 1080);
  EXPECT_EQ(hd.resized_width, 1316);
  EXPECT_EQ(hd.resized_height, 728);
  EXPECT_EQ(hd.tokens, 1222);
  EXPECT_EQ(Cost(q, 480, 640).tokens, 391);  // 476 x 644: 17 x 23
  EXPECT_EQ(Cost(q, 5600, 28).tokens, 200);  // aspect ratio exactly 200 is allowed
  // The processor's refusals.
  EXPECT_FALSE(ImageCostFor(q, 5601, 28).ok());  // aspect ratio over 200
  Result<ImageCost> tiny = ImageCostFor(q, 100, 27);
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("at least 28 pixels"), std::string::npos) << tiny.status().ToString();
  // Another factor and budget: patch 16, merge 2 (factor 32), max 32*32*16.
  const VisionSpec other{.patch_size = 16, .merge_size = 2, .min_pixels = 32 * 32, .max_pixels = 32 * 32 * 16};
  EXPECT_EQ(Cost(other, 128, 128).tokens, 16);
  EXPECT_EQ(Cost(other, 256, 256).tokens, 16);  // scaled down to 128x128
}

TEST(VisionCard, ParsesImagesAndTheModelRule) {
  Result<WorkloadCard> c = Parse(R"(  images: {count: {uniform: [1, 3]}, width: 640, height: 480, share: 0.5}
model:
  vision: {patch_size: 14, merge_size: 2, max_pixels: 1003520, encoder_params: {value: 6.75e8, assumed: true}}
)");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->traffic.images && c->model.vision);
  EXPECT_EQ(c->traffic.images->width, 640);
  EXPECT_EQ(c->traffic.images->height, 480);
  EXPECT_DOUBLE_EQ(c->traffic.images->share, 0.5);
  EXPECT_EQ(c->traffic.images->count.kind, Distribution::Kind::kUniform);
  EXPECT_DOUBLE_EQ(c->model.vision->encoder_params, 6.75e8);
  EXPECT_EQ(c->model.vision->min_pixels, 56 * 56);  // the processor's default
  // card check lists the assumed encoder size with its line.
  bool listed = false;
  for (const Gap& g : FindGaps(*c)) listed = listed || (g.path == "model.vision.encoder_params" && g.line == 8);
  EXPECT_TRUE(listed);
}

TEST(VisionCard, RefusesWhatDoesNotApplyNamingTheLine) {
  struct Case {
    std::string yaml, expect;
  };
  const Case cases[] = {
      {"  images: {width: 336, height: 336}\n", "v.yaml:6: traffic.images: needs model.vision"},
      {"  images: {width: 336}\nmodel: {vision: {tokens_per_image: 576}}\n", "v.yaml:6: traffic.images: needs height"},
      {"  images: {width: 20, height: 336}\nmodel: {vision: {merge_size: 2}}\n",
       "v.yaml:6: traffic.images: image size 20x336: each side must be at least 28 pixels"},
      {"  images: {width: 336, height: 336, share: 2}\nmodel: {vision: {tokens_per_image: 576}}\n",
       "v.yaml:6: traffic.images.share: must be between 0 and 1"},
      {"  images: {width: 336, height: 336, count: 65}\nmodel: {vision: {tokens_per_image: 576}}\n",
       "traffic.images.count: must be at most 64 images per request"},
      {"  images: {width: 336, height: 336}\nmodel: {vision: {tokens_per_image: 576}}\nbench: {endpoint: completions}\n",
       "v.yaml:8: bench.endpoint: must be chat when traffic.images is set"},
      {"  images: {width: 336, height: 336}\n  sessions: {turns: 3}\nmodel: {vision: {tokens_per_image: 576}}\n",
       "traffic.images: with sessions or agent tasks is not modelled yet"},
      {"model:\n  vision: {tokens_per_image: 576, patch_size: 14}\n",
       "v.yaml:7: model.vision.patch_size: belongs to the patch rule"},
      {"model:\n  vision: {min_pixels: 5000, max_pixels: 4000}\n", "model.vision.min_pixels: must be <= max_pixels"},
      {"model:\n  vision: {tokens_per_imag: 5}\n", "did you mean \"tokens_per_image\""},
  };
  for (const Case& k : cases) {
    Result<WorkloadCard> c = Parse(k.yaml);
    ASSERT_FALSE(c.ok()) << k.yaml;
    EXPECT_NE(c.status().message().find(k.expect), std::string::npos) << c.status().message();
  }
  // An embeddings card has no chat messages to put images in.
  Result<WorkloadCard> e = ParseCard(R"(name: e
product: {modality: embeddings}
traffic:
  arrival: 5rps
  input_tokens: 10
  images: {width: 336, height: 336}
model: {vision: {tokens_per_image: 576}}
)",
                                     "e.yaml");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("e.yaml:6: traffic.images: does not apply to an embeddings card"),
            std::string::npos)
      << e.status().message();
}

TEST(VisionCard, TheExampleCardParses) {
  Result<WorkloadCard> c = LoadCardFile(testing::SourceDir() + "/examples/vision.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->traffic.images && c->model.vision);
  EXPECT_EQ(Cost(*c->model.vision, c->traffic.images->width, c->traffic.images->height).tokens, 1196);  // 1288x728
}

}  // namespace
}  // namespace infereng::card
