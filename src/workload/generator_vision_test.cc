// The generator on a card with images (traffic.images): which requests carry images, how
// many, and their tokens by the model's rule, on a stream of their own.
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "workload/generator.h"

namespace infereng::workload {
namespace {

// The first `n` requests of a card with `images` under traffic (seed 9).
std::vector<RequestSpec> Specs(const std::string& images, int n) {
  Result<card::WorkloadCard> card =
      card::ParseCard("name: g\ntraffic:\n  arrival: 10rps\n  input_tokens: {uniform: [4, 40]}\n"
                      "  output_tokens: {uniform: [1, 9]}\n  prefix: {share: 0.3, tokens: 3}\n" +
                          images + "model:\n  vision: {patch_size: 14, merge_size: 2}\n",
                      "g.yaml");
  EXPECT_TRUE(card.ok()) << card.status().ToString();
  std::vector<RequestSpec> out;
  Result<Generator> g = card.ok() ? Generator::FromCard(*card, 9) : Result<Generator>(card.status());
  while (g.ok() && static_cast<int>(out.size()) < n) out.push_back(*g->Next());
  return out;
}

TEST(GeneratorVisionTest, ImagesOnAShareOfRequestsWithTheRulesTokens) {
  // 336x336 under Qwen2-VL's rule: 144 tokens per image.
  const auto specs = Specs("  images: {count: {uniform: [1, 3]}, width: 336, height: 336, share: 0.4}\n", 2000);
  const auto plain = Specs("", 2000);
  int with = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    const RequestSpec& s = specs[i];
    if (s.images > 0) {
      ++with;
      EXPECT_LE(s.images, 3);
      EXPECT_EQ(s.image_tokens, 144 * s.images);
    } else {
      EXPECT_EQ(s.image_tokens, 0);
    }
    // The images' own stream leaves everything else as it was.
    EXPECT_EQ(s.t_arrival, plain[i].t_arrival);
    EXPECT_EQ(s.input_tokens, plain[i].input_tokens);
    EXPECT_EQ(s.output_tokens, plain[i].output_tokens);
    EXPECT_EQ(s.prefix_id, plain[i].prefix_id);
    EXPECT_EQ(plain[i].images, 0);
  }
  EXPECT_NEAR(with / 2000.0, 0.4, 0.04);  // ~10 standard deviations of a binomial share
}

TEST(GeneratorVisionTest, EveryRequestByDefault) {
  for (const RequestSpec& s : Specs("  images: {width: 1920, height: 1080}\n", 50)) {
    EXPECT_EQ(s.images, 1);
    EXPECT_EQ(s.image_tokens, 1222);  // 1316x728 after smart_resize (card/vision_card_test.cc)
  }
}

}  // namespace
}  // namespace infereng::workload
