// Prefill/decode disaggregation in the twin (ClusterConfig::prefill_replicas): the timing
// of one request by hand, transfers queueing on a prefill replica's link, the pools'
// trade (no prefill in the decode steps: lower TPOT tail, transfer added to TTFT), and the
// configurations it refuses.
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "twin/cost_model.h"
#include "twin/simulation.h"

namespace infereng::twin {
namespace {

using Dist = card::Distribution;

card::WorkloadCard Card(card::ArrivalSpec::Kind kind, double rate, int in, int out, double duration_s) {
  card::WorkloadCard c;
  c.name = "disaggregation";
  c.traffic.arrival.kind = kind;
  c.traffic.arrival.rate_rps = rate;
  c.traffic.input_tokens = Dist::Fixed(in);
  c.traffic.output_tokens = Dist::Fixed(out);
  c.bench.duration_s = duration_s;
  c.bench.warmup_s = 0;
  c.bench.seed = 3;
  return c;
}

// 5 ms per step + 50 us per prefill token; 1 MB of KV per token over a 1 GB/s link with
// 1 ms of latency: a 100-token prompt is 100 ms on the link.
TwinSetup Twin(int replicas, int prefill_replicas, double per_prefill_token_s = 50e-6) {
  TwinSettings s;
  s.engine.kv_cache_tokens = 1 << 20;
  s.cluster.replicas = replicas;
  s.cluster.prefill_replicas = prefill_replicas;
  s.cluster.kv_transfer_gb_s = 1;
  s.cluster.kv_transfer_latency_s = 1e-3;
  TwinSetup t = ManualTwin(s, std::make_shared<LinearCostModel>(LinearCostOptions{
                                  .fixed_s = 5e-3, .per_prefill_token_s = per_prefill_token_s}));
  t.kv_bytes_per_token = 1e6;
  return t;
}

// n requests, all sent at t = 0 (bench --requests n with n users).
SimulationOptions Burst(int n) {
  SimulationOptions o;
  o.keep_records = true;
  o.concurrency = n;
  o.max_requests = n;
  o.count_limited = true;
  return o;
}

// Prefill replica: 5 + 100 x 0.05 = 10 ms, then the transfer: 100 MB / 1 GB/s + 1 ms = 101 ms;
// the decode replica computes the last prompt token and samples the first output token
// (5.05 ms), then decodes (5 ms a token).
TEST(SimulationDisaggregation, OneRequestByHand) {
  auto r = RunSimulation(Card(card::ArrivalSpec::Kind::kConstant, 1, 100, 3, 10), Twin(2, 1), Burst(1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->records.size(), 1u);
  const metrics::RequestRecord& rec = r->records[0];
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  ASSERT_EQ(rec.chunks.size(), 3u);
  EXPECT_EQ(rec.t_prefill_done - rec.t_send, 10'000'000);
  EXPECT_EQ(rec.chunks[0].t - rec.t_send, 10'000'000 + 101'000'000 + 5'050'000);
  EXPECT_EQ(rec.chunks[1].t - rec.chunks[0].t, 5'000'000);
  EXPECT_EQ(rec.chunks[2].t - rec.chunks[1].t, 5'000'000);
  EXPECT_EQ(rec.completion_tokens, 3);
  EXPECT_EQ(rec.replica, 1);  // the decode replica streamed the answer
  ASSERT_TRUE(r->twin.disaggregation.has_value());
  const DisaggregationReport& d = *r->twin.disaggregation;
  EXPECT_EQ(d.prefill_replicas, 1);
  EXPECT_EQ(d.decode_replicas, 1);
  EXPECT_EQ(d.transfers, 1);
  EXPECT_DOUBLE_EQ(d.transferred_gb, 0.1);
  EXPECT_NEAR(d.transfer_ms_mean, 101, 1e-9);
  EXPECT_EQ(d.link_wait_ms_mean, 0);
  const nlohmann::json j = SimulationResultToJson(*r);
  EXPECT_EQ(j["twin"]["disaggregation"]["transfers"], 1);
  EXPECT_EQ(j["twin"]["disaggregation"]["decode_replicas"], 1);
}

// Two prompts prefilled in one step leave together: the second waits for the first's 100 ms
// on the link. Two prefill replicas have a link each: no wait.
TEST(SimulationDisaggregation, TransfersFromOneReplicaTakeItsLinkInTurn) {
  const SimulationOptions o = Burst(2);
  auto one = RunSimulation(Card(card::ArrivalSpec::Kind::kConstant, 1, 100, 2, 10), Twin(2, 1), o);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  ASSERT_EQ(one->records.size(), 2u);
  std::vector<Nanos> ttft;
  for (const metrics::RequestRecord& rec : one->records) ttft.push_back(rec.chunks.at(0).t - rec.t_send);
  std::sort(ttft.begin(), ttft.end());
  // Prefill of 2 x 100 tokens: 15 ms. First: +101 ms link, +5.05 ms. Second: 100 ms later
  // on the link; its last token rides with the first request's decode step (5.05 ms).
  EXPECT_EQ(ttft[0], 15'000'000 + 101'000'000 + 5'050'000);
  EXPECT_EQ(ttft[1], 15'000'000 + 201'000'000 + 5'050'000);
  EXPECT_NEAR(one->twin.disaggregation->link_wait_ms_mean, 50, 1e-6);

  auto two = RunSimulation(Card(card::ArrivalSpec::Kind::kConstant, 1, 100, 2, 10), Twin(3, 2), o);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->twin.disaggregation->link_wait_ms_mean, 0);  // one request per prefill replica
  EXPECT_EQ(two->twin.disaggregation->prefill_replicas, 2);
}

// The trade disaggregation makes, at the same number of replicas: long prompts no longer
// stall the decode steps (TPOT tail drops), while TTFT pays the transfer.
TEST(SimulationDisaggregation, DecodeStepsLoseThePrefillStallsAndTtftPaysTheTransfer) {
  card::WorkloadCard c = Card(card::ArrivalSpec::Kind::kPoisson, 6, 2000, 100, 300);
  TwinSetup agg = Twin(2, 0);
  TwinSetup dis = Twin(2, 1);
  dis.kv_bytes_per_token = 1e5;  // 200 MB a prompt over 1 GB/s: 201 ms
  SimulationOptions o;
  o.exact_percentiles = true;
  auto a = RunSimulation(c, agg, o);
  auto d = RunSimulation(c, dis, o);
  ASSERT_TRUE(a.ok() && d.ok());
  // Aggregated: a 2000-token prefill (105 ms) joins decode steps now and then.
  EXPECT_GT(a->summary.tpot_ms.p99, 2 * d->summary.tpot_ms.p99);
  EXPECT_NEAR(d->summary.tpot_ms.p50, 5, 0.5);  // decode steps only (plus the odd last prompt token)
  EXPECT_GT(d->summary.ttft_ms.p50, a->summary.ttft_ms.p50 + 200);
  EXPECT_FALSE(a->twin.disaggregation.has_value());
  EXPECT_GT(d->twin.disaggregation->prefill_busy, 0.4);  // 6 rps x ~105 ms of prefill
  EXPECT_LT(d->twin.disaggregation->decode_busy, d->twin.disaggregation->prefill_busy + 0.6);
}

// An embeddings request is prefill only: it ends on the prefill replica (10 ms for 100
// tokens), with no transfer and no decode replica.
TEST(SimulationDisaggregation, EmbeddingsEndOnThePrefillReplica) {
  auto c = card::ParseCard("name: emb\nproduct: {modality: embeddings}\ntraffic:\n  arrival: 1rps\n  batch_size: 1\n"
                           "  input_tokens: 100\nbench: {duration: 10s, warmup: 0s, seed: 5}\n",
                           "emb.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto r = RunSimulation(*c, Twin(2, 1), Burst(1));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->records.size(), 1u);
  const metrics::RequestRecord& rec = r->records[0];
  ASSERT_TRUE(rec.ok()) << rec.error_message;
  EXPECT_EQ(rec.t_end - rec.t_send, 10'000'000);
  EXPECT_EQ(rec.replica, 0);
  EXPECT_EQ(r->twin.disaggregation->transfers, 0);
}

// A link of 1 kB/s (the lowest the key takes) and 100 MB of KV per token: a 1,000-token prompt
// would take 3,000 years on the link, past the clock's range; the clock saturates instead of
// overflowing (UBSan halts on signed overflow), and the requests end incomplete at the drain limit.
TEST(SimulationDisaggregation, AnAbsurdlySlowLinkSaturatesTheClock) {
  TwinSetup t = Twin(2, 1);
  t.settings.cluster.kv_transfer_gb_s = 1e-6;
  t.kv_bytes_per_token = 1e8;
  SimulationOptions o;
  o.keep_records = true;
  o.drain_s = 10;
  auto r = RunSimulation(Card(card::ArrivalSpec::Kind::kConstant, 5, 1000, 2, 4), t, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->records.empty());
  for (const metrics::RequestRecord& rec : r->records) EXPECT_EQ(rec.error, metrics::ErrorClass::kIncomplete);
  EXPECT_GT(r->twin.disaggregation->transfers, 10);
  EXPECT_GT(r->twin.disaggregation->link_wait_ms_mean, 1e11);  // queued behind the first: ~73 years
  EXPECT_LT(r->twin.simulated_s, 60);  // the run still ends at the drain limit
}

TEST(SimulationDisaggregation, RefusesWhatItCannotModel) {
  card::WorkloadCard c = Card(card::ArrivalSpec::Kind::kConstant, 1, 100, 2, 5);
  auto expect_error = [&](TwinSetup t, const std::string& needle) {
    auto r = RunSimulation(c, t, {});
    ASSERT_FALSE(r.ok()) << needle;
    EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().ToString();
  };
  expect_error(Twin(1, 1), "must leave at least one of cluster.replicas (1) for the decode pool");
  TwinSetup no_kv = Twin(2, 1);
  no_kv.kv_bytes_per_token = 0;
  expect_error(no_kv, "KV bytes per token");
  TwinSetup llama = Twin(2, 1);
  llama.settings.engine.scheduler = EngineScheduler::kLlamaCpp;
  llama.settings.engine.max_num_seqs = 1;
  expect_error(llama, "not llamacpp");
  TwinSetup slow = Twin(2, 1);
  slow.settings.cluster.kv_transfer_latency_s = 7200;
  expect_error(slow, "cluster.kv_transfer_latency must be between 0 and 1h");
  TwinSetup scaled = Twin(2, 1);
  scaled.settings.cluster.autoscale = AutoscaleMetric::kQueueDepth;
  expect_error(scaled, "not autoscaled");
  TwinSettings s;
  EXPECT_TRUE(ApplyTwinAssignment(s, "cluster.prefill_replicas=2").ok());
  EXPECT_TRUE(ApplyTwinAssignment(s, "cluster.kv_transfer_bandwidth=25").ok());
  EXPECT_TRUE(ApplyTwinAssignment(s, "cluster.kv_transfer_latency=2ms").ok());
  EXPECT_EQ(s.cluster.prefill_replicas, 2);
  EXPECT_DOUBLE_EQ(s.cluster.kv_transfer_gb_s, 25);
  EXPECT_DOUBLE_EQ(s.cluster.kv_transfer_latency_s, 2e-3);
  EXPECT_FALSE(ApplyTwinAssignment(s, "cluster.kv_transfer_bandwidth=0").ok());
}

}  // namespace
}  // namespace infereng::twin
