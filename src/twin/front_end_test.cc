// The per-request front end (twin/front_end.h): where its figures come from, and what it
// does to a request's client-visible times in the simulation, against hand-computed values.
#include "twin/front_end.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

TEST(FrontEndTest, KnobsBeatTheCardWhichBeatsTheDefaults) {
  card::ProductSpec p;
  CostKnobs k;
  FrontEnd f = ResolveFrontEnd(p, k);
  EXPECT_DOUBLE_EQ(f.preprocess_s, kDefaultPreprocessS);
  EXPECT_DOUBLE_EQ(f.postprocess_s, kDefaultPostprocessS);
  EXPECT_DOUBLE_EQ(f.network_s, kDefaultNetworkS);
  EXPECT_EQ(f.source, "vLLM-like default for preprocess, network, postprocess (the card sets none)");

  p.preprocess_ms = 5;
  p.network_ms = 30;
  k.postprocess_s = 0.002;
  f = ResolveFrontEnd(p, k);
  EXPECT_DOUBLE_EQ(f.preprocess_s, 0.005);
  EXPECT_DOUBLE_EQ(f.network_s, 0.030);
  EXPECT_DOUBLE_EQ(f.postprocess_s, 0.002);
  EXPECT_EQ(f.Inbound(), 20 * kNanosPerMilli);   // 30/2 + 5
  EXPECT_EQ(f.Outbound(), 17 * kNanosPerMilli);  // 2 + 30/2
  EXPECT_NE(f.source.find("cost.postprocess set"), std::string::npos) << f.source;
  EXPECT_NE(f.source.find("card product.preprocess, network"), std::string::npos) << f.source;
  EXPECT_EQ(f.source.find("default"), std::string::npos) << f.source;

  // A measured profile's front end stands in for the defaults (all of it as preprocess).
  f = ResolveFrontEnd(card::ProductSpec{}, CostKnobs{}, 0.004);
  EXPECT_DOUBLE_EQ(f.preprocess_s, 0.004);
  EXPECT_DOUBLE_EQ(f.network_s + f.postprocess_s, 0);
  EXPECT_NE(f.source.find("measured profile"), std::string::npos) << f.source;
}

// The default front end follows the engine: vLLM-like 30 + 5 ms, TensorRT-LLM 4 + 1 ms,
// SGLang 0.3 2.5 + 0.5 ms; the card and the knobs still win over it.
TEST(FrontEndTest, TheDefaultFollowsTheEngine) {
  const FrontEnd v = ResolveFrontEnd(card::ProductSpec{}, CostKnobs{}, std::nullopt, EngineScheduler::kVllmV0);
  EXPECT_DOUBLE_EQ(v.preprocess_s + v.postprocess_s, 0.035);
  const FrontEnd t = ResolveFrontEnd(card::ProductSpec{}, CostKnobs{}, std::nullopt, EngineScheduler::kTrtLlm);
  EXPECT_DOUBLE_EQ(t.preprocess_s, 0.004);
  EXPECT_DOUBLE_EQ(t.postprocess_s, 0.001);
  EXPECT_EQ(t.source, "TensorRT-LLM-like default for preprocess, network, postprocess (the card sets none)");
  const FrontEnd g = ResolveFrontEnd(card::ProductSpec{}, CostKnobs{}, std::nullopt, EngineScheduler::kSglang);
  EXPECT_NE(g.source.find("SGLang-0.3-like default"), std::string::npos) << g.source;
  EXPECT_DOUBLE_EQ(g.preprocess_s + g.postprocess_s, 0.003);
  card::ProductSpec p;
  p.preprocess_ms = 12;
  const FrontEnd c = ResolveFrontEnd(p, CostKnobs{}, std::nullopt, EngineScheduler::kTrtLlm);
  EXPECT_DOUBLE_EQ(c.preprocess_s, 0.012);
  EXPECT_DOUBLE_EQ(c.postprocess_s, 0.001);
}

card::WorkloadCard OneUser() {
  card::WorkloadCard c;
  c.name = "front-end";
  c.traffic.concurrency = 1;
  c.traffic.input_tokens = card::Distribution::Fixed(100);
  c.traffic.output_tokens = card::Distribution::Fixed(5);
  c.bench.duration_s = 1;
  c.bench.warmup_s = 0;
  c.bench.seed = 3;
  return c;
}

SimulationResult Simulate(const FrontEnd& fe, const card::WorkloadCard& card = OneUser()) {
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 16;
  // Every step 10 ms, prefill 100 tokens x 0.1 ms = +10 ms: TTFT 20 ms, ITL 10 ms.
  TwinSetup setup = ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{.fixed_s = 0.01,
                                                                                    .per_prefill_token_s = 1e-4}));
  setup.front_end = fe;
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(card, setup, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::sort(r->records.begin(), r->records.end(), [](const auto& a, const auto& b) { return a.t_send < b.t_send; });
  return std::move(r).value();
}

// One user, one request at a time: TTFT and E2E grow by exactly inbound + outbound
// (10 + 2 and 3 + 2 ms), ITL does not move, the engine's queue and prefill do not move
// (the split puts the front end in client+network), and the user's next request goes
// when the client saw the previous one end, not when the engine finished it.
TEST(FrontEndTest, ChargesInboundAndOutboundToEveryRequest) {
  const SimulationResult bare = Simulate(FrontEnd{});
  FrontEnd f;
  f.preprocess_s = 0.010;
  f.network_s = 0.004;
  f.postprocess_s = 0.003;
  const SimulationResult fe = Simulate(f);
  ASSERT_GE(bare.records.size(), 10u);
  ASSERT_GE(fe.records.size(), 10u);
  EXPECT_NEAR(bare.summary.ttft_ms.p50, 20.0, 1e-6);
  EXPECT_NEAR(fe.summary.ttft_ms.p50, 20.0 + 17.0, 1e-6);
  EXPECT_NEAR(fe.summary.e2e_ms.p50, bare.summary.e2e_ms.p50 + 17.0, 1e-6);
  EXPECT_NEAR(fe.summary.itl_ms.p50, bare.summary.itl_ms.p50, 1e-9);
  EXPECT_NEAR(fe.summary.queue_ms.p50, bare.summary.queue_ms.p50, 1e-9);
  EXPECT_NEAR(fe.summary.prefill_ms.p50, bare.summary.prefill_ms.p50, 1e-9);
  EXPECT_NEAR(fe.summary.ttft_client_network_ms.p50, 17.0, 1e-6);
  for (size_t i = 1; i < fe.records.size(); ++i) {
    EXPECT_EQ(fe.records[i].t_send, fe.records[i - 1].t_end) << i;
  }
  // 1 s of one user: 1 s / (E2E 60 ms) vs 1 s / (E2E 77 ms) requests.
  EXPECT_GT(bare.records.size(), fe.records.size());
  EXPECT_NEAR(fe.twin.little_l, fe.twin.little_lambda * fe.twin.little_w_s, 1e-6 * fe.twin.little_l);
}

// The jitter's draws: never below the fixed way in, exponential with the set mean (the mean
// of 20,000 draws within 3%; an exponential's standard error there is 0.7%), the same for
// the same seed and request, different for another seed; none when no jitter is set.
TEST(FrontEndTest, JitterDrawsAreExponentialAndRepeatable) {
  FrontEnd f;
  f.preprocess_s = 0.002;
  EXPECT_EQ(f.InboundFor(7, 3), f.Inbound());
  f.jitter_s = 0.001;
  const int n = 20000;
  double sum = 0, above_mean = 0;
  int differs = 0;
  for (int i = 0; i < n; ++i) {
    const Nanos d = f.InboundFor(7, static_cast<uint64_t>(i));
    ASSERT_GE(d, f.Inbound()) << i;
    EXPECT_EQ(d, f.InboundFor(7, static_cast<uint64_t>(i)));
    if (d != f.InboundFor(8, static_cast<uint64_t>(i))) ++differs;
    sum += NanosToSeconds(d - f.Inbound());
    if (NanosToSeconds(d - f.Inbound()) > 0.001) ++above_mean;
  }
  EXPECT_NEAR(sum / n, 0.001, 0.00003);
  EXPECT_NEAR(above_mean / n, std::exp(-1.0), 0.01);  // P(X > mean) of an exponential
  EXPECT_GT(differs, n * 99 / 100);
}

// Four identical users whose prompts the engine prefills in one step: without a jitter they
// send at the same virtual instants every cycle (lockstep for ever: every TTFT the same).
// With one, the first request to reach an idle engine is prefilled alone and the others wait
// for that step, so their answers and their next sends come apart (FIDELITY.md (b5): how
// llama.cpp's lockstep broke). The same seed gives the same run.
TEST(FrontEndTest, JitterSplitsTheLockstepOfUsersThatEndTogether) {
  card::WorkloadCard c = OneUser();
  c.traffic.concurrency = 4;
  auto sends = [](const SimulationResult& r) {
    std::set<Nanos> t;
    for (const auto& rec : r.records) t.insert(rec.t_send);
    return t.size();
  };
  auto ttft_spread = [](const SimulationResult& r) {
    return r.summary.ttft_ms.max - r.summary.ttft_ms.min;
  };
  const SimulationResult lock = Simulate(FrontEnd{}, c);
  ASSERT_GE(lock.records.size(), 40u);
  EXPECT_EQ(sends(lock) * 4, lock.records.size());  // four at each instant
  EXPECT_NEAR(ttft_spread(lock), 0.0, 1e-6);
  FrontEnd f;
  f.jitter_s = 0.001;
  const SimulationResult split = Simulate(f, c);
  ASSERT_GE(split.records.size(), 40u);
  // Users answered in one step still send together, but the trains differ from cycle to cycle.
  EXPECT_GT(sends(split), sends(lock) * 3 / 2);
  EXPECT_GT(ttft_spread(split), 10.0);  // a follower waits for a 10 ms step at least
  const SimulationResult again = Simulate(f, c);
  ASSERT_EQ(again.records.size(), split.records.size());
  for (size_t i = 0; i < split.records.size(); ++i) EXPECT_EQ(again.records[i].t_send, split.records[i].t_send) << i;
}

}  // namespace
}  // namespace infereng::twin
