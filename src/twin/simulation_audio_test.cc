// Transcription in the twin, by hand with the LinearCostModel: a clip's audio tokens are
// prompt tokens after the decoder's start tokens, the audio encoder's FLOPs (2 x params x
// positions) are priced with the prefill, and the transcript is decoded one token a step.
#include <gtest/gtest.h>

#include "card/audio.h"
#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

// A 10 s clip every second, alone in the engine: 25 audio tokens/s (250), 50 encoder
// positions/s (500) of a 1e8-parameter encoder (2 x 1e8 x 500 = 100 GFLOP = 100 ms at 1 ms
// per GFLOP), 4 start tokens. TTFT = 5 ms + 254 x 50 us + 100 ms = 117.7 ms; the transcript
// is round(10 x 3.25) = 32 tokens (32.5 rounds to even), one per 5 ms step after the first.
TEST(TwinAudio, SimulationPricesClipsAndCountsThem) {
  auto card = card::ParseCard(
      "name: a\nproduct: {modality: transcription}\n"
      "traffic:\n  arrival: {process: constant, rate: 1rps}\n  audio: {seconds: 10}\n"
      "model:\n  audio: {tokens_per_second: 25, encoder_positions_per_second: 50, window_s: 0, prompt_tokens: 4,"
      " encoder_params: 1e8}\n"
      "bench: {duration: 20s, warmup: 0s, seed: 3}\n",
      "a.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(*card, ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{
                                                  .fixed_s = 0.005, .per_prefill_token_s = 50e-6,
                                                  .per_encoder_gflop_s = 1e-3})),
                         o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->records.empty());
  EXPECT_EQ(card::TranscriptTokensFor(3.25, 10'000), 32);
  for (const metrics::RequestRecord& rec : r->records) {
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    EXPECT_EQ(rec.audio_ms, 10'000);
    EXPECT_EQ(rec.audio_tokens, 250);
    EXPECT_EQ(rec.prompt_tokens, 4 + 250);
    EXPECT_EQ(rec.OutputTokens(), 32);
  }
  EXPECT_NEAR(r->summary.ttft_ms.p50, 117.7, 1e-6);
  EXPECT_NEAR(r->summary.e2e_ms.p50, 117.7 + 31 * 5.0, 1e-6);
  ASSERT_TRUE(r->summary.audio.has_value());
  EXPECT_EQ(r->summary.audio->audio_tokens, 250 * r->summary.audio->requests);
  EXPECT_NEAR(r->summary.audio->rtf.p50, (117.7 + 155) / 10'000, 1e-9);
}

}  // namespace
}  // namespace infereng::twin
