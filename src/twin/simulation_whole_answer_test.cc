// A card whose answers are not streamed (product.streaming: false) in the twin: each answer
// reaches the client whole with its last token, as one output event carrying every token,
// so TTFT = the streamed run's E2E and there is no TPOT or ITL (client/whole_answer.h).
#include <gtest/gtest.h>

#include <string>

#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

Result<SimulationResult> Simulate(bool streaming) {
  auto card = card::ParseCard(std::string("name: w\nproduct: {streaming: ") + (streaming ? "true" : "false") +
                                  "}\n"
                                  "traffic:\n  arrival: {process: constant, rate: 1rps}\n"
                                  "  input_tokens: 100\n  output_tokens: 20\n"
                                  "bench: {duration: 10s, warmup: 0s, seed: 5}\n",
                              "w.yaml");
  if (!card.ok()) return card.status();
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  SimulationOptions o;
  o.keep_records = true;
  TwinSetup setup = ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{
                                       .fixed_s = 0.005, .per_prefill_token_s = 50e-6}));
  setup.front_end.postprocess_s = 0.003;  // the answer reaches the client 3 ms after its last token
  return RunSimulation(*card, setup, o);
}

// One request alone: prefill 5 ms + 100 x 50 us = 10 ms, then 19 decode steps of 5 ms.
TEST(TwinWholeAnswer, TheAnswerArrivesWholeWithItsLastToken) {
  auto streamed = Simulate(true);
  auto whole = Simulate(false);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_EQ(whole->records.size(), streamed->records.size());
  ASSERT_FALSE(whole->records.empty());
  for (size_t i = 0; i < whole->records.size(); ++i) {
    const metrics::RequestRecord& w = whole->records[i];
    const metrics::RequestRecord& s = streamed->records[i];
    ASSERT_TRUE(w.ok()) << w.error_message;
    ASSERT_EQ(s.chunks.size(), 20u);
    ASSERT_EQ(w.chunks.size(), 1u);
    EXPECT_EQ(w.chunks[0].tokens, 20);
    EXPECT_EQ(w.chunks[0].t, s.chunks.back().t);
    EXPECT_EQ(w.completion_tokens, 20);
    EXPECT_EQ(w.t_end, s.t_end);
  }
  // Streamed: TTFT 10 ms (+ the 3 ms postprocess), E2E 10 + 19 x 5 = 105 ms (+ 3 ms).
  EXPECT_NEAR(streamed->summary.ttft_ms.p50, 13.0, 1e-6);
  EXPECT_NEAR(streamed->summary.e2e_ms.p50, 108.0, 1e-6);
  EXPECT_NEAR(streamed->summary.tpot_ms.p50, 5.0, 1e-6);
  // Whole: the first token is seen with the last one.
  EXPECT_NEAR(whole->summary.ttft_ms.p50, 108.0, 1e-6);
  EXPECT_NEAR(whole->summary.e2e_ms.p50, 108.0, 1e-6);
  EXPECT_EQ(whole->summary.tpot_ms.count, 0);
  EXPECT_EQ(whole->summary.itl_ms.count, 0);
  EXPECT_EQ(whole->summary.counts.output_tokens, streamed->summary.counts.output_tokens);
}

}  // namespace
}  // namespace infereng::twin
