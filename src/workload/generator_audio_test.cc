// The generator on a transcription card (traffic.audio): each request's clip, drawn on its
// own stream in whole milliseconds, its audio tokens by the model's rule, the decoder's start
// tokens as its prompt and the transcript the clip implies as its output.
#include <gtest/gtest.h>

#include "card/audio.h"
#include "card/card_parser.h"
#include "workload/generator.h"

namespace infereng::workload {
namespace {

card::WorkloadCard Card(const std::string& extra) {
  Result<card::WorkloadCard> card = card::ParseCard(
      "name: g\nproduct:\n  modality: transcription\n" + extra +
          "traffic:\n  arrival: 10rps\n  audio: {seconds: {uniform: [2, 40]}, transcript_tokens_per_s: 3.25}\n"
          "model:\n  audio: {tokens_per_second: 50, window_s: 30, prompt_tokens: 4}\n",
      "g.yaml");
  EXPECT_TRUE(card.ok()) << card.status().ToString();
  return card.ok() ? *card : card::WorkloadCard{};
}

std::vector<RequestSpec> Specs(const card::WorkloadCard& card, int n, uint64_t seed = 9) {
  std::vector<RequestSpec> out;
  Result<Generator> g = Generator::FromCard(card, seed);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  while (g.ok() && static_cast<int>(out.size()) < n) out.push_back(*g->Next());
  return out;
}

TEST(GeneratorAudioTest, ClipsTheirTokensAndTranscripts) {
  const card::WorkloadCard card = Card("");
  const auto specs = Specs(card, 2000);
  double sum_ms = 0;
  int two_windows = 0;
  for (const RequestSpec& s : specs) {
    ASSERT_GE(s.audio_ms, 2000);
    ASSERT_LE(s.audio_ms, 40000);
    sum_ms += s.audio_ms;
    EXPECT_EQ(s.audio_tokens, s.audio_ms > 30000 ? 3000 : 1500) << s.audio_ms;
    two_windows += s.audio_ms > 30000;
    EXPECT_EQ(s.input_tokens, 4);
    EXPECT_EQ(s.output_tokens, card::TranscriptTokensFor(3.25, s.audio_ms));
    EXPECT_EQ(s.images, 0);
    EXPECT_TRUE(s.item_tokens.empty());
  }
  EXPECT_NEAR(sum_ms / 2000, 21000, 600);           // uniform [2, 40] s: mean 21 s, sd of the mean ~250 ms
  EXPECT_NEAR(two_windows / 2000.0, 10.0 / 38, 0.04);  // P(clip > 30 s)
  // Reproducible; another seed draws other clips.
  EXPECT_EQ(Specs(card, 50)[49].audio_ms, specs[49].audio_ms);
  EXPECT_NE(Specs(card, 50, 10)[49].audio_ms, specs[49].audio_ms);
}

TEST(GeneratorAudioTest, TheProductsOutputCapHoldsTranscripts) {
  for (const RequestSpec& s : Specs(Card("  max_output_tokens: 40\n"), 300)) {
    EXPECT_EQ(s.output_tokens, std::min(40, card::TranscriptTokensFor(3.25, s.audio_ms)));
  }
}

}  // namespace
}  // namespace infereng::workload
