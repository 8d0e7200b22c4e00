// Rerank in the twin: a request is the embeddings kind of request (prefill only, no decode),
// its items the (query, document) pairs, so its prefill tokens are Σ (query + document_k),
// the same requests the generator draws for bench.
#include <gtest/gtest.h>

#include <map>

#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"
#include "workload/generator.h"

namespace infereng::twin {
namespace {

card::WorkloadCard Card(const std::string& documents) {
  auto c = card::ParseCard("name: rr\nproduct: {modality: rerank}\ntraffic:\n  arrival: 2rps\n  input_tokens: {uniform: [10, 30]}\n"
                           "  documents: " + documents + "\n  document_tokens: {uniform: [50, 150]}\n"
                           "bench: {duration: 60s, warmup: 0s, seed: 5}\n",
                           "rr.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

SimulationResult Simulate(const card::WorkloadCard& card) {
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

TEST(SimulationRerankTest, PrefillTokensAreTheSumOfQueryPlusEachDocument) {
  const card::WorkloadCard card = Card("{uniform: [2, 12]}");
  // The generator's requests for the same card and seed, by id.
  auto g = workload::Generator::FromCard(card, 5);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::map<uint64_t, workload::RequestSpec> specs;
  for (int i = 0; i < 400; ++i) {
    std::optional<workload::RequestSpec> s = g->Next();
    ASSERT_TRUE(s.has_value());
    specs[s->index] = *s;
  }
  const SimulationResult r = Simulate(card);
  ASSERT_GT(r.records.size(), 50u);
  ASSERT_TRUE(r.summary.embeddings.has_value());
  EXPECT_TRUE(r.summary.embeddings->rerank);
  EXPECT_EQ(r.summary.ttft_ms.count, 0);
  EXPECT_EQ(r.summary.counts.output_tokens, 0);
  for (const metrics::RequestRecord& rec : r.records) {
    ASSERT_TRUE(rec.ok()) << rec.error_message;
    const workload::RequestSpec& spec = specs.at(rec.id);
    int64_t pairs = 0;
    for (int32_t t : spec.item_tokens) pairs += t;
    int64_t by_hand = 0;  // Σ (query + document_k), from the documents' own lengths
    for (size_t k = 0; k < spec.item_tokens.size(); ++k) {
      by_hand += spec.query_tokens + workload::EmbeddingItemSpec(spec, k).input_tokens;
    }
    EXPECT_EQ(by_hand, pairs);
    EXPECT_EQ(rec.prompt_tokens, pairs);  // what the engine prefilled
    EXPECT_EQ(rec.input_tokens_target, pairs);
    EXPECT_EQ(rec.items, static_cast<int32_t>(spec.item_tokens.size()));
    EXPECT_EQ(rec.query_tokens, spec.query_tokens);
    EXPECT_TRUE(rec.chunks.empty());
    EXPECT_EQ(rec.completion_tokens, 0);
    EXPECT_EQ(rec.t_end, rec.t_prefill_done);  // the scores are ready when the prefill ends
  }
}

TEST(SimulationRerankTest, E2eGrowsWithTheDocuments) {
  const SimulationResult two = Simulate(Card("2")), twenty = Simulate(Card("20"));
  // Light load: E2E ~ the prefill, 4 ms + 20 us per pair token (~120 tokens per pair).
  EXPECT_NEAR(two.summary.e2e_ms.p50, 4 + 2 * 120 * 0.02, 1.5);
  EXPECT_NEAR(twenty.summary.e2e_ms.p50, 4 + 20 * 120 * 0.02, 6);
  EXPECT_GT(twenty.summary.e2e_ms.p50, 3 * two.summary.e2e_ms.p50);
  EXPECT_EQ(twenty.summary.embeddings->items, 20 * twenty.summary.embeddings->requests);
}

}  // namespace
}  // namespace infereng::twin
