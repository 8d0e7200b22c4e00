#include "twin/simulation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "twin/cost_model.h"

namespace infereng::twin {
namespace {

using Dist = card::Distribution;

card::WorkloadCard Card(double rate, int in, int out, double duration_s) {
  card::WorkloadCard c;
  c.name = "test";
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kPoisson;
  c.traffic.arrival.rate_rps = rate;
  c.traffic.input_tokens = Dist::Fixed(in);
  c.traffic.output_tokens = Dist::Fixed(out);
  c.bench.duration_s = duration_s;
  c.bench.warmup_s = 0;
  c.bench.seed = 7;
  return c;
}

TwinSetup LinearTwin(double fixed_s, int max_num_seqs, int replicas = 1, int64_t kv_tokens = 1 << 20,
                double per_prefill_token_s = 0) {
  TwinSettings s;
  s.engine.kv_cache_tokens = kv_tokens;
  s.engine.max_num_seqs = max_num_seqs;
  s.cluster.replicas = replicas;
  return ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{
                           .fixed_s = fixed_s, .per_prefill_token_s = per_prefill_token_s}),
                    /*price_per_replica_hour=*/2.0);
}

void ExpectLittle(const TwinReport& t) {
  ASSERT_GT(t.little_l, 0);
  EXPECT_NEAR(t.little_l, t.little_lambda * t.little_w_s, 1e-9 * t.little_l + 1e-12);
}

// One replica serving one request at a time with a fixed service time S = out * step,
// Poisson arrivals: M/D/1. Pollaczek-Khinchine: Wq = rho * S / (2 (1 - rho)).
TEST(SimulationTest, MD1MeanWaitMatchesPollaczekKhinchine) {
  // 100k requests: the standard error of the mean wait is ~1.3%, so 5% is ~4 sigma.
  const double step = 0.025, lambda = 5;
  const int out = 4;
  const double s = out * step, rho = lambda * s;
  const double wq = rho * s / (2 * (1 - rho));
  card::WorkloadCard c = Card(lambda, 16, out, 20000);
  SimulationOptions o;
  auto r = RunSimulation(c, LinearTwin(step, 1), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double measured = r->summary.queue_ms.mean / 1000;
  EXPECT_NEAR(measured, wq, 0.05 * wq) << "n=" << r->summary.queue_ms.count;
  EXPECT_GT(r->summary.queue_ms.count, 90000);
  ExpectLittle(r->twin);
}

TEST(SimulationTest, SameSeedSameResultsDifferentSeedDifferent) {
  card::WorkloadCard c = Card(20, 200, 50, 60);
  c.traffic.input_tokens.kind = card::Distribution::Kind::kUniform;
  c.traffic.input_tokens.min = 10;
  c.traffic.input_tokens.max = 800;
  auto run = [&](uint64_t seed, bool thread = true) {
    SimulationOptions o;
    o.seed = seed;
    o.summary_thread = thread;
    auto r = RunSimulation(c, LinearTwin(0.01, 16, 2, 1 << 14, 20e-6), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    nlohmann::json j = SimulationResultToJson(*r);
    j["twin"].erase("wall_s");
    j["twin"].erase("speedup_vs_real_time");
    return j.dump();
  };
  const std::string a = run(1), b = run(1), d = run(2), inline_summary = run(1, false);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, inline_summary);  // the summary thread changes nothing
  EXPECT_NE(a, d);
}

TEST(SimulationTest, LittlesLawHoldsAcrossConfigurations) {
  for (int replicas : {1, 3}) {
    for (int64_t kv : {int64_t{1} << 20, int64_t{2048}}) {
      card::WorkloadCard c = Card(30, 300, 80, 40);
      c.traffic.prefix = card::PrefixSpec{.share = 0.5, .distinct = 3, .tokens = 128, .tenants = 2};
      TwinSetup s = LinearTwin(0.008, 32, replicas, kv, 10e-6);
      s.settings.cluster.router = RouterPolicy::kPrefixAffinity;
      auto r = RunSimulation(c, s, SimulationOptions{});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ExpectLittle(r->twin);
      EXPECT_EQ(r->twin.incomplete, 0);
      if (kv == 2048) {
        EXPECT_GT(r->twin.preemptions, 0) << "a 2048-token KV cache must preempt";
      }
    }
  }
}

TEST(SimulationTest, PrefixCachingCutsPrefillByTheSharedShare) {
  card::WorkloadCard c = Card(5, 1024, 4, 200);
  c.traffic.prefix = card::PrefixSpec{.share = 0.6, .distinct = 1, .tokens = 512, .tenants = 1};
  auto with = RunSimulation(c, LinearTwin(0.01, 64), SimulationOptions{});
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  const double expected_hit = 0.6 * 512.0 / 1024.0;
  EXPECT_NEAR(with->twin.prefix_hit_rate, expected_hit, 0.03);
  TwinSetup off = LinearTwin(0.01, 64);
  off.settings.engine.enable_prefix_caching = false;
  auto without = RunSimulation(c, off, SimulationOptions{});
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->twin.prefix_hit_rate, 0);
  const double ratio = static_cast<double>(with->twin.prefill_tokens_computed) /
                       static_cast<double>(without->twin.prefill_tokens_computed);
  EXPECT_NEAR(ratio, 1 - expected_hit, 0.03);
}

TEST(SimulationTest, RecordsCarryServerSideTimestamps) {
  card::WorkloadCard c = Card(10, 100, 20, 10);
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(c, LinearTwin(0.01, 8, 2), o);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->records.empty());
  for (const metrics::RequestRecord& rec : r->records) {
    ASSERT_TRUE(rec.ok());
    EXPECT_GE(rec.replica, 0);
    EXPECT_LE(rec.t_sched, rec.t_server_scheduled);
    EXPECT_LT(rec.t_server_scheduled, rec.t_prefill_done);
    EXPECT_EQ(rec.chunks.front().t, rec.t_prefill_done);
    EXPECT_EQ(rec.chunks.back().t, rec.t_end);
    EXPECT_EQ(rec.OutputTokens(), 20);
    EXPECT_EQ(rec.token_source, metrics::TokenSource::kSimulated);
  }
  EXPECT_EQ(r->summary.source, "simulated");
}

TEST(SimulationTest, AdmissionControlRejectsUnderOverload) {
  card::WorkloadCard c = Card(50, 100, 100, 20);
  TwinSetup s = LinearTwin(0.02, 4);
  s.settings.engine.max_waiting_requests = 8;
  auto r = RunSimulation(c, s, SimulationOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->twin.rejections, 0);
  EXPECT_GT(r->twin.rejections_by_reason.at("waiting_requests_full"), 0);
  EXPECT_GT(r->summary.errors.at("rejected"), 0);
  EXPECT_LT(r->summary.slo_attainment, 1.0);
  EXPECT_TRUE(r->twin.near_saturation);
  EXPECT_FALSE(r->twin.saturation_note.empty());
  // Offered load past the capacity is "overloaded" by a factor, not "near saturation".
  EXPECT_GT(r->twin.utilisation_estimate, 1);
  EXPECT_EQ(r->twin.saturation_note.rfind("overloaded: the offered 50 rps is ", 0), 0u) << r->twin.saturation_note;
  EXPECT_NE(r->twin.saturation_note.find("x the estimated capacity of ~"), std::string::npos);
  EXPECT_EQ(r->twin.saturation_note.find("e+"), std::string::npos) << r->twin.saturation_note;
  ExpectLittle(r->twin);
}

TEST(SimulationTest, CardClientTimeoutAbortsSlowRequests) {
  card::WorkloadCard c = Card(50, 100, 100, 20);
  c.product.timeout_s = 2;
  auto r = RunSimulation(c, LinearTwin(0.02, 4), SimulationOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->twin.timeouts, 0);
  EXPECT_GT(r->summary.errors.at("timeout"), 0);
  EXPECT_EQ(r->twin.incomplete, 0);  // timeouts bound the backlog
  ExpectLittle(r->twin);
}

TEST(SimulationTest, LightLoadIsNotFlaggedAsSaturated) {
  auto r = RunSimulation(Card(2, 100, 20, 60), LinearTwin(0.01, 64), SimulationOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->twin.near_saturation) << r->twin.saturation_note;
  EXPECT_LT(r->twin.utilisation_estimate, 0.5);
  EXPECT_NEAR(r->twin.cost_per_hour_usd, 2.0, 1e-9);
}

TEST(SimulationTest, AutoscalerScalesFromZeroWithColdStart) {
  card::WorkloadCard c = Card(4, 100, 20, 120);
  TwinSetup s = LinearTwin(0.01, 4, 1);
  s.settings.cluster.autoscale = AutoscaleMetric::kInFlight;
  s.settings.cluster.autoscale_target = 2;
  s.settings.cluster.min_replicas = 0;
  s.settings.cluster.max_replicas = 6;
  s.settings.cluster.replicas = 0 + 1;
  s.settings.cluster.cold_start_s = 20;
  s.settings.cluster.cooldown_s = 30;
  s.settings.cluster.autoscale_interval_s = 5;
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(c, s, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->twin.scale_events, 0);
  EXPECT_GT(r->twin.replicas_max, 1);
  EXPECT_EQ(r->twin.incomplete, 0);
  ExpectLittle(r->twin);
  // Starting from one warm replica at 4 rps with 4-seq batches, requests queue at first;
  // scaled-up replicas only serve 20 s after they were started.
  bool saw_second = false;
  for (const metrics::RequestRecord& rec : r->records) {
    if (rec.replica >= 1) {
      saw_second = true;
      EXPECT_GE(rec.t_server_scheduled, SecondsToNanos(20));
    }
  }
  EXPECT_TRUE(saw_second);
}

TEST(SimulationTest, ScaleToZeroMakesTheFirstRequestWaitForAColdStart) {
  card::WorkloadCard c = Card(1, 50, 5, 30);
  TwinSetup s = LinearTwin(0.01, 4, 1);
  s.settings.cluster.autoscale = AutoscaleMetric::kInFlight;
  s.settings.cluster.min_replicas = 0;
  s.settings.cluster.replicas = 0 + 1;
  s.settings.cluster.cold_start_s = 10;
  s.settings.cluster.cooldown_s = 1;
  s.settings.cluster.autoscale_interval_s = 1;
  s.settings.cluster.autoscale_target = 100;
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kOnOff;
  c.traffic.arrival.on_s = 5;
  c.traffic.arrival.off_s = 20;
  c.traffic.arrival.rate_rps = 2;
  SimulationOptions o;
  o.keep_records = true;
  auto r = RunSimulation(c, s, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // During the 20 s gap the cluster scales to zero; the next burst waits ~10 s.
  Nanos worst = 0;
  for (const metrics::RequestRecord& rec : r->records) worst = std::max(worst, rec.t_server_scheduled - rec.t_sched);
  EXPECT_GE(worst, SecondsToNanos(5));
  EXPECT_LT(r->twin.replicas_mean, 1.0);
}

}  // namespace
}  // namespace infereng::twin
