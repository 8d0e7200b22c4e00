// Vision inputs in the twin, by hand with the LinearCostModel: image tokens are prompt
// tokens (prefilled after the text), and the vision encoder's FLOPs (2 x params x patches)
// are priced once, in the step whose prefill chunk first reaches the images.
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/engine.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

// 5 ms per step, 50 us per prefill token, 1 ms per encoder GFLOP.
std::shared_ptr<const CostModel> Linear() {
  return std::make_shared<LinearCostModel>(
      LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 50e-6, .per_encoder_gflop_s = 1e-3});
}

class FirstTokens : public EngineSink {
 public:
  void OnTokens(uint64_t id, uint64_t, Nanos t, int32_t, int32_t) override { first.try_emplace(id, t); }
  void OnFinished(uint64_t, uint64_t, Nanos, FinishReason) override {}
  std::map<uint64_t, Nanos> first;
};

Nanos FirstToken(const EngineConfig& cfg, const EngineRequest& req) {
  auto e = Engine::Create(cfg, Linear());
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  FirstTokens sink;
  EXPECT_TRUE((*e)->Submit(req, 0).ok());
  while (auto t = (*e)->NextEventTime()) (*e)->AdvanceTo(*t, sink);
  return sink.first.at(req.id);
}

TEST(TwinVision, PrefillWithImagesByHand) {
  EngineConfig cfg;
  cfg.kv_cache_tokens = 1 << 20;
  // 100 text tokens; with images: + 576 image tokens and an encoder of 3e8 parameters over
  // 576 patches: 2 x 3e8 x 576 = 345.6 GFLOP = 345.6 ms.
  const EngineRequest text{.id = 1, .tag = 1, .prompt_tokens = 100, .output_tokens = 1};
  EngineRequest image = text;
  image.prompt_tokens = 676;
  image.image_begin = 100;
  image.image_end = 676;
  image.encoder_flops = 2 * 3e8 * 576;
  EXPECT_EQ(FirstToken(cfg, text), 10'000'000);  // 5 ms + 100 x 50 us
  EXPECT_EQ(FirstToken(cfg, image), 5'000'000 + 33'800'000 + 345'600'000);  // + 576 x 50 us + encoder

  // Chunked prefill of 256 tokens a step: chunks [0,256) [256,512) [512,676); the first one
  // reaches the images (from 100), so it alone runs the encoder.
  cfg.max_num_batched_tokens = 256;
  EXPECT_EQ(FirstToken(cfg, image), 3 * 5'000'000 + 33'800'000 + 345'600'000);
  // Images further in: the text fills the first chunk, the encoder runs with the second.
  image.image_begin = 300;
  image.prompt_tokens = 876;
  image.image_end = 876;
  EXPECT_EQ(FirstToken(cfg, image), 4 * 5'000'000 + 43'800'000 + 345'600'000);
}

card::WorkloadCard Card(const std::string& images) {
  auto c = card::ParseCard("name: v\ntraffic:\n  arrival: {process: constant, rate: 1rps}\n  input_tokens: 100\n"
                           "  output_tokens: 1\n" +
                               images + "model:\n  vision: {tokens_per_image: 576, encoder_params: 1e8}\n"
                                        "bench: {duration: 20s, warmup: 0s, seed: 3}\n",
                           "v.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

SimulationResult Simulate(const card::WorkloadCard& card) {
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(card, ManualTwin(s, Linear()), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SimulationResult{};
}

// The simulation applies the card: 2 images of 576 tokens on every request; the encoder is
// 2 x 1e8 x 576 x 2 = 230.4 GFLOP = 230.4 ms. One request a second, alone in the engine:
// TTFT = 5 ms + (100 + 1152) x 50 us + 230.4 ms = 298 ms, against 10 ms without images.
TEST(TwinVision, SimulationPricesImagesAndCountsThem) {
  const SimulationResult with = Simulate(Card("  images: {count: 2, width: 336, height: 336}\n"));
  const SimulationResult without = Simulate(Card(""));
  ASSERT_FALSE(with.records.empty());
  for (const metrics::RequestRecord& r : with.records) {
    ASSERT_TRUE(r.ok()) << r.error_message;
    EXPECT_EQ(r.images, 2);
    EXPECT_EQ(r.image_tokens, 1152);
    EXPECT_EQ(r.prompt_tokens, 100 + 1152);
  }
  EXPECT_NEAR(with.summary.ttft_ms.p50, 298.0, 1e-6);
  EXPECT_NEAR(without.summary.ttft_ms.p50, 10.0, 1e-6);
  ASSERT_TRUE(with.summary.vision.has_value());
  EXPECT_FALSE(without.summary.vision.has_value());  // text-only summaries stay as they were
  EXPECT_EQ(with.summary.vision->images, 2 * with.summary.vision->requests);
  EXPECT_EQ(with.summary.vision->image_tokens, 1152 * with.summary.vision->requests);
}

}  // namespace
}  // namespace infereng::twin
