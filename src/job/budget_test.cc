// The latency budget on a twin with a linear cost model, where every part can be worked out
// by hand: the card's fixed parts, prefill = 5 ms + 0.1 ms per prompt token, decode steps of
// 5 ms, and the derived limits re-checked from the parts they were built from.
#include "job/budget.h"

#include <gtest/gtest.h>

#include <cmath>

#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

using Dist = card::Distribution;

card::WorkloadCard Card(double rate) {
  card::WorkloadCard c;
  c.name = "budget";
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kPoisson;
  c.traffic.arrival.rate_rps = rate;
  c.traffic.input_tokens = Dist::Fixed(400);
  c.traffic.output_tokens = Dist::Fixed(20);
  c.bench.duration_s = 120;
  c.bench.warmup_s = 0;
  c.bench.seed = 5;
  c.product.network_ms = 10;
  c.product.preprocess_ms = 5;
  c.product.postprocess_ms = 3;
  c.slo.latency = {{"ttft_ms", 99, 100}, {"e2e_ms", 95, 400}};
  return c;
}

twin::TwinSetup Twin() {
  twin::TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  s.engine.max_num_seqs = 8;
  s.engine.max_model_len = 4096;
  return twin::ManualTwin(s, std::make_shared<twin::LinearCostModel>(twin::LinearCostOptions{
                                 .fixed_s = 0.005, .per_prefill_token_s = 1e-4}),
                          1.0);
}

double Part(const BudgetLine& l, const std::string& name) {
  for (const BudgetPart& p : l.parts) {
    if (p.name == name) return p.ms;
  }
  return 0;
}

TEST(BudgetTest, PartsAddUpAndLimitsFollowFromThem) {
  const card::WorkloadCard card = Card(1);
  auto b = BuildBudget(card, Twin(), BudgetOptions{});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->lines.size(), 2u);
  const BudgetLine& ttft = b->lines[0];
  EXPECT_EQ(ttft.metric, "ttft_ms");
  EXPECT_DOUBLE_EQ(Part(ttft, "network"), 10);
  EXPECT_DOUBLE_EQ(Part(ttft, "preprocess"), 5);
  // A 400-token prefill: 5 ms + 40 ms, more only when it shares a step (rare at 1 rps).
  EXPECT_GE(Part(ttft, "prefill"), 45 - 1e-9);
  EXPECT_LT(Part(ttft, "prefill"), 60);
  double sum = 0;
  for (const BudgetPart& p : ttft.parts) sum += p.ms;
  EXPECT_DOUBLE_EQ(ttft.parts_sum_ms, sum);
  EXPECT_DOUBLE_EQ(ttft.headroom_ms, ttft.target_ms - ttft.expected_ms);
  EXPECT_TRUE(ttft.pass) << ttft.expected_ms;

  // The twin's own TTFT P99 plus the card's fixed parts.
  twin::SimulationOptions so;
  so.duration_s = 120;
  so.exact_percentiles = true;  // the budget keeps its records: exact percentiles
  auto sim = twin::RunSimulation(card, Twin(), so);
  ASSERT_TRUE(sim.ok());
  EXPECT_NEAR(ttft.expected_ms, sim->summary.ttft_incl_queue_ms.p99 + 15, 1e-6);

  const BudgetLine& e2e = b->lines[1];
  EXPECT_DOUBLE_EQ(Part(e2e, "postprocess"), 3);
  EXPECT_GE(Part(e2e, "decode"), 19 * 5 - 1e-9);  // 19 decode steps of 5 ms after the first token

  // Longest prompt: network + preprocess + queue P99 + (5 + 0.1 L) ms <= 100 ms.
  const double before = 15 + Part(ttft, "queue") + Part(ttft, "client_wait");
  ASSERT_TRUE(b->limits.longest_prompt_tokens);
  const int64_t want = static_cast<int64_t>(std::floor((100 - before - 5) / 0.1 + 1e-9));
  EXPECT_NEAR(static_cast<double>(*b->limits.longest_prompt_tokens), static_cast<double>(want), 1);

  // Longest output: (400 - fixed - queue - prefill at P95) / TPOT P95 + 1.
  ASSERT_TRUE(b->limits.longest_output_tokens);
  const double e2e_before = 18 + Part(e2e, "queue") + Part(e2e, "prefill") + Part(e2e, "client_wait");
  EXPECT_EQ(*b->limits.longest_output_tokens,
            static_cast<int64_t>(std::floor((400 - e2e_before) / b->limits.tpot_ms)) + 1);

  // The queueing limit: the TTFT P99 objective holds a little below it and misses above.
  ASSERT_TRUE(b->limits.queueing_limit_rps) << BudgetText(*b);
  const double limit = *b->limits.queueing_limit_rps;
  EXPECT_GT(limit, 1);
  auto ttft_p99_at = [&](double rps) {
    twin::SimulationOptions o;
    o.duration_s = 120;
    o.rate_rps = rps;
    auto r = twin::RunSimulation(card, Twin(), o);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->summary.ttft_incl_queue_ms.p99 + 15 : 0;
  };
  EXPECT_LE(ttft_p99_at(limit * 0.9), 100);
  EXPECT_GT(ttft_p99_at(limit * 1.25), 100);
}

TEST(BudgetTest, MissingCardPartsAreListedAndCountedAsZero) {
  card::WorkloadCard card = Card(1);
  card.product.network_ms.reset();
  auto b = BuildBudget(card, Twin(), BudgetOptions{.search_load = false});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->missing, std::vector<std::string>{"product.network"});
  EXPECT_DOUBLE_EQ(Part(b->lines[0], "network"), 0);
  EXPECT_FALSE(b->limits.queueing_limit_rps);
  EXPECT_NE(BudgetText(*b).find("Not in the card (counted as 0 ms): product.network"), std::string::npos);
}

TEST(BudgetTest, OverBudgetAndNoObjective) {
  card::WorkloadCard card = Card(1);
  card.slo.latency = {{"ttft_ms", 99, 30}};  // less than the fixed parts and one prefill
  auto b = BuildBudget(card, Twin(), BudgetOptions{.search_load = false});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_FALSE(b->lines[0].pass);
  EXPECT_LT(b->lines[0].headroom_ms, 0);
  EXPECT_EQ(b->limits.longest_prompt_tokens, 0);
  const nlohmann::json j = BudgetToJson(*b);
  EXPECT_EQ(j["objectives"][0]["pass"], false);
  EXPECT_EQ(j["limits"]["longest_prompt_tokens"], 0);

  card.slo.latency.clear();
  auto none = BuildBudget(card, Twin(), BudgetOptions{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kFailedPrecondition);
}

}  // namespace
}  // namespace infereng::job
