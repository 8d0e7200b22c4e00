// Embeddings in the twin: a request is prefill-only (the batch's summed tokens, no decode),
// completes at the end of its prefill, and its E2E grows with the batch size.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "card/card_parser.h"
#include "testing/paths.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

card::WorkloadCard Card(int batch) {
  auto c = card::ParseCard("name: emb\nproduct: {modality: embeddings}\ntraffic:\n  arrival: 2rps\n  batch_size: " +
                               std::to_string(batch) +
                               "\n  input_tokens: 128\nbench: {duration: 60s, warmup: 0s, seed: 5}\n",
                           "emb.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

SimulationResult SimulateCard(const card::WorkloadCard& card) {
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  const TwinSetup setup = ManualTwin(
      s, std::make_shared<LinearCostModel>(LinearCostOptions{.fixed_s = 0.004, .per_prefill_token_s = 2e-5}), 2.0);
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(card, setup, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SimulationResult{};
}

SimulationResult Simulate(int batch) { return SimulateCard(Card(batch)); }

TEST(SimulationEmbeddingsTest, RequestsArePrefillOnlyAndE2eGrowsWithTheBatch) {
  const SimulationResult one = Simulate(1), sixteen = Simulate(16);
  for (const SimulationResult* r : {&one, &sixteen}) {
    ASSERT_FALSE(r->records.empty());
    ASSERT_TRUE(r->summary.embeddings.has_value());
    EXPECT_EQ(r->summary.ttft_ms.count, 0);  // no token stream
    EXPECT_EQ(r->summary.counts.output_tokens, 0);
    for (const metrics::RequestRecord& rec : r->records) {
      ASSERT_TRUE(rec.ok()) << rec.error_message;
      EXPECT_TRUE(rec.chunks.empty());
      EXPECT_EQ(rec.completion_tokens, 0);
      EXPECT_EQ(rec.prompt_tokens, 128 * rec.items);
      EXPECT_EQ(rec.t_end, rec.t_prefill_done);  // the answer is ready when the prefill ends
    }
  }
  EXPECT_EQ(one.records.front().items, 1);
  EXPECT_EQ(sixteen.records.front().items, 16);
  EXPECT_EQ(sixteen.summary.embeddings->items, 16 * sixteen.summary.embeddings->requests);
  // Light load (2 rps): E2E ~ the prefill, 4 ms + 20 us/token: ~6.6 ms for 128 tokens,
  // ~45 ms for 16 x 128.
  EXPECT_NEAR(one.summary.e2e_ms.p50, 4 + 128 * 0.02, 0.5);
  EXPECT_NEAR(sixteen.summary.e2e_ms.p50, 4 + 16 * 128 * 0.02, 2);
  EXPECT_GT(sixteen.summary.e2e_ms.p50, 5 * one.summary.e2e_ms.p50);
}

// An embeddings trace replay in the twin: every row a prefill-only request of the row's
// input tokens in batch_size inputs, at the row's time.
TEST(SimulationEmbeddingsTest, TraceReplayIsEveryRowsTokensAtItsTime) {
  const std::string trace = testing::SourceDir() + "/src/trace/testdata/mooncake-conv-short.jsonl";
  std::ifstream in(trace);
  std::vector<int64_t> tokens;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) tokens.push_back(nlohmann::json::parse(line)["input_length"].get<int64_t>());
  }
  ASSERT_EQ(tokens.size(), 203u);
  auto c = card::ParseCard("name: emb\nproduct: {modality: embeddings}\ntraffic:\n  arrival: {process: trace, file: " +
                               trace + ", speed: 20}\n  batch_size: 3\nbench: {warmup: 0s, seed: 5}\n",
                           "emb.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const SimulationResult r = SimulateCard(*c);
  ASSERT_EQ(r.records.size(), tokens.size());
  std::vector<metrics::RequestRecord> recs = r.records;
  std::sort(recs.begin(), recs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (size_t i = 0; i < recs.size(); ++i) {
    ASSERT_TRUE(recs[i].ok()) << recs[i].error_message;
    EXPECT_EQ(recs[i].prompt_tokens, tokens[i]) << "row " << i;
    EXPECT_EQ(recs[i].items, 3);
    EXPECT_EQ(recs[i].completion_tokens, 0);
  }
  ASSERT_TRUE(r.summary.embeddings.has_value());
}

}  // namespace
}  // namespace infereng::twin
