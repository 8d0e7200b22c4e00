#include "metrics/summary.h"

#include <cmath>

#include <gtest/gtest.h>

#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

// t0 = 1000 ms, warm-up 100 ms: the window is [100, 1100] ms after t0 (1.0 s long).
//   A sched  50: before the window (excluded), but its tokens at 150/160 count for throughput.
//   B sched 100, send 100, tokens at 200, 210, 220          TTFT 100, TPOT 10
//   C sched 300, send 302, tokens at 352 (1), 392 (4)      TTFT 50 (incl. queue 52), TPOT 10
//   D sched 500, send 500, timeout at 1500
//   E sched 1100, send 1100, one token at 1400             TTFT 300, TPOT undefined
std::vector<RequestRecord> Scenario() {
  auto at = [](RequestRecord r) {
    const Nanos t0 = MillisToNanos(1000);
    r.t_sched += t0;
    if (r.t_send >= 0) r.t_send += t0;
    if (r.t_end >= 0) r.t_end += t0;
    for (Chunk& c : r.chunks) c.t += t0;
    return r;
  };
  return {
      at(Rec(1, 50, 50, {{150}, {160}}, 160)),
      at(Rec(2, 100, 100, {{200}, {210}, {220}}, 220)),
      at(Rec(3, 300, 302, {{352}, {392, 4}}, 392)),
      at(Rec(4, 500, 500, {}, 1500, ErrorClass::kTimeout)),
      at(Rec(5, 1100, 1100, {{1400}}, 1400)),
  };
}

AccumulatorOptions ScenarioOptions(AccumulatorOptions::Mode mode) {
  AccumulatorOptions o;
  o.mode = mode;
  o.t0 = MillisToNanos(1000);
  o.warmup = MillisToNanos(100);
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 120},
                   {.metric = "tpot_ms", .percentile = 50, .threshold_ms = 10}};
  o.slo.attainment = 0.99;
  return o;
}

TEST(Summary, HandComputedScenarioExact) {
  Summary s = Summarize(Scenario(), ScenarioOptions(AccumulatorOptions::Mode::kExact));
  EXPECT_EQ(s.percentile_method, "exact");
  EXPECT_DOUBLE_EQ(s.window_start_s, 0.1);
  EXPECT_DOUBLE_EQ(s.window_end_s, 1.1);
  EXPECT_DOUBLE_EQ(s.rate_basis_s, 1.0);
  EXPECT_EQ(s.rate_basis, "window");

  EXPECT_EQ(s.counts.records, 5);
  EXPECT_EQ(s.counts.excluded_before, 1);
  EXPECT_EQ(s.counts.in_window, 4);
  EXPECT_EQ(s.counts.succeeded, 3);
  EXPECT_EQ(s.counts.failed, 1);
  EXPECT_EQ(s.counts.output_tokens, 3 + 5 + 1);
  EXPECT_EQ(s.counts.window_output_tokens, 2 + 3 + 5);  // E's token arrives after the window
  EXPECT_EQ(s.counts.window_completed, 3);              // A, B, C

  // TTFT from send: B 100, C 50, E 300 (A excluded).
  EXPECT_EQ(s.ttft_ms.count, 3);
  EXPECT_DOUBLE_EQ(s.ttft_ms.min, 50);
  EXPECT_DOUBLE_EQ(s.ttft_ms.p50, 100);
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 150);
  EXPECT_DOUBLE_EQ(s.ttft_ms.max, 300);
  // Incl. queue: [52, 100, 300]; p99 = 100 + 0.98 * 200.
  EXPECT_DOUBLE_EQ(s.ttft_incl_queue_ms.p99, 296);
  EXPECT_DOUBLE_EQ(s.e2e_ms.p50, 120);  // B 120, C 90, E 300
  EXPECT_EQ(s.tpot_ms.count, 2);        // E has one token: excluded, not 0
  EXPECT_DOUBLE_EQ(s.tpot_ms.min, 10);
  EXPECT_DOUBLE_EQ(s.tpot_ms.max, 10);
  EXPECT_EQ(s.itl_ms.count, 6);         // B: 2 gaps; C: one gap of 40 ms over 4 tokens
  EXPECT_DOUBLE_EQ(s.itl_ms.max, 10);
  EXPECT_EQ(s.inter_chunk_ms.count, 3);  // [10, 10, 40]
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.p50, 10);
  EXPECT_DOUBLE_EQ(s.inter_chunk_ms.max, 40);
  EXPECT_EQ(s.itl_p99_per_request_ms.count, 2);
  EXPECT_EQ(s.ttft_visible_ms.count, s.ttft_ms.count);  // no reasoning: TTFT visible is TTFT
  EXPECT_DOUBLE_EQ(s.ttft_visible_ms.p50, s.ttft_ms.p50);
  EXPECT_EQ(s.counts.with_reasoning, 0);
  EXPECT_TRUE(s.reasoning_tokens.empty());
  EXPECT_DOUBLE_EQ(s.visible_output_tokens_per_s, s.output_tokens_per_s);
  EXPECT_TRUE(s.queue_ms.empty());

  // Schedule lag over in-window sends [0, 2, 0, 0]: p99 = 0 + 0.97 * 2 = 1.94 > 1 ms.
  EXPECT_EQ(s.schedule_lag_ms.count, 4);
  EXPECT_NEAR(s.schedule_lag_ms.p99, 1.94, 1e-12);
  EXPECT_TRUE(s.schedule_lag_flagged);

  EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 10);
  EXPECT_DOUBLE_EQ(s.requests_per_s, 3);
  EXPECT_DOUBLE_EQ(s.offered_rps, 4);
  EXPECT_DOUBLE_EQ(s.achieved_rps, 4);

  // B and C meet both SLOs; D failed; E's TTFT incl. queue is 300 > 120.
  EXPECT_EQ(s.counts.slo_met, 2);
  EXPECT_EQ(s.counts.good, 2);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 0.5);
  // Goodput counts good completions inside the window, like requests_per_s: A (a warm-up
  // request that completes in the window and meets both SLOs), B and C.
  EXPECT_DOUBLE_EQ(s.goodput_rps, 3);
  EXPECT_LE(s.goodput_rps, s.requests_per_s);
  EXPECT_FALSE(s.slo_attainment_pass);
  ASSERT_EQ(s.slo.size(), 2u);
  EXPECT_EQ(s.slo[0].measured_as, "ttft_incl_queue_ms");
  EXPECT_DOUBLE_EQ(s.slo[0].value_ms, 296);
  EXPECT_FALSE(s.slo[0].pass);
  EXPECT_EQ(s.slo[0].requests_checked, 4);
  EXPECT_EQ(s.slo[0].requests_met, 2);
  EXPECT_EQ(s.slo[1].measured_as, "tpot_ms");
  EXPECT_DOUBLE_EQ(s.slo[1].value_ms, 10);
  EXPECT_TRUE(s.slo[1].pass);
  EXPECT_EQ(s.slo[1].requests_met, 3);  // E: TPOT undefined, not applicable
  EXPECT_FALSE(s.slo_pass);

  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_EQ(s.errors.at("timeout"), 1);
  EXPECT_EQ(s.token_source, "client_count");
  EXPECT_TRUE(s.histograms.empty());
}

TEST(Summary, ClosedLoopUsesTtftFromSend) {
  AccumulatorOptions o = ScenarioOptions(AccumulatorOptions::Mode::kExact);
  o.open_loop = false;
  Summary s = Summarize(Scenario(), o);
  EXPECT_EQ(s.slo[0].measured_as, "ttft_ms");
  EXPECT_DOUBLE_EQ(s.slo[0].value_ms, 100 + 0.98 * 200);
}

TEST(Summary, HistogramModeAgreesWithinStatedError) {
  Summary exact = Summarize(Scenario(), ScenarioOptions(AccumulatorOptions::Mode::kExact));
  Summary hist = Summarize(Scenario(), ScenarioOptions(AccumulatorOptions::Mode::kHistogram));
  EXPECT_EQ(hist.percentile_method, "histogram");
  EXPECT_GT(hist.histogram_relative_error, 0);
  EXPECT_LE(hist.histogram_relative_error, 0.01);
  EXPECT_EQ(hist.counts, exact.counts);
  EXPECT_EQ(hist.ttft_ms.count, exact.ttft_ms.count);
  EXPECT_DOUBLE_EQ(hist.ttft_ms.min, exact.ttft_ms.min);
  EXPECT_DOUBLE_EQ(hist.ttft_ms.max, exact.ttft_ms.max);
  EXPECT_NEAR(hist.ttft_ms.mean, exact.ttft_ms.mean, 1e-9);
  EXPECT_NEAR(hist.ttft_incl_queue_ms.p99, exact.ttft_incl_queue_ms.p99, 0.01 * 296);
  EXPECT_NEAR(hist.output_tokens_per_s, exact.output_tokens_per_s, 0.01);
  EXPECT_DOUBLE_EQ(hist.slo_attainment, exact.slo_attainment);
  EXPECT_EQ(hist.histograms.count("ttft_ms"), 1u);
  EXPECT_EQ(hist.histograms.at("itl_ms").count(), 6u);
}

TEST(Summary, ExplicitWindowEndExcludesLaterRecords) {
  for (auto mode : {AccumulatorOptions::Mode::kExact, AccumulatorOptions::Mode::kHistogram}) {
    AccumulatorOptions o = ScenarioOptions(mode);
    o.window_end = MillisToNanos(1000 + 600);  // window [100, 600] ms: E is after it
    Summary s = Summarize(Scenario(), o);
    EXPECT_EQ(s.counts.excluded_after, 1);
    EXPECT_EQ(s.counts.in_window, 3);
    EXPECT_EQ(s.ttft_ms.count, 2);
    EXPECT_DOUBLE_EQ(s.rate_basis_s, 0.5);
    EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 10 / 0.5);  // exact in both modes: end known
    EXPECT_DOUBLE_EQ(s.requests_per_s, 3 / 0.5);
    EXPECT_DOUBLE_EQ(s.slo_attainment, 2.0 / 3);
  }
}

TEST(Summary, ZeroOutputRequestMissesTtftSloButCountsAsSuccess) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 1000}};
  std::vector<RequestRecord> recs = {Rec(1, 0, 0, {}, 30), Rec(2, 0, 0, {{20}, {30}}, 30)};
  Summary s = Summarize(recs, o);
  EXPECT_EQ(s.counts.succeeded, 2);
  EXPECT_EQ(s.counts.zero_output, 1);
  EXPECT_EQ(s.ttft_ms.count, 1);
  EXPECT_EQ(s.counts.slo_met, 1);
  // Zero-length window (everything scheduled at 0): rates use the completion span (30 ms).
  EXPECT_EQ(s.rate_basis, "completion_span");
  EXPECT_DOUBLE_EQ(s.rate_basis_s, 0.03);
  EXPECT_NEAR(s.output_tokens_per_s, 2 / 0.03, 1e-9);
}

TEST(Summary, QualityFailureIsNotGoodput) {
  std::vector<RequestRecord> recs = {Rec(1, 0, 0, {{10}}, 10), Rec(2, 500, 500, {{510}}, 510),
                                     Rec(3, 1000, 1000, {{1010}}, 1010)};
  recs[0].quality_pass = 0;
  recs[1].quality_pass = 1;
  recs[2].quality_pass = 1;
  Summary s = Summarize(recs, {});
  EXPECT_EQ(s.counts.slo_met, 3);  // no latency SLOs
  EXPECT_EQ(s.counts.good, 2);
  EXPECT_EQ(s.counts.quality_checked, 3);
  EXPECT_EQ(s.counts.quality_passed, 2);
  // Window [0, 1 s]: requests 1 and 2 complete inside it; only 2 passed quality.
  EXPECT_DOUBLE_EQ(s.requests_per_s, 2);
  EXPECT_DOUBLE_EQ(s.goodput_rps, 1);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1);
}

// A request the client cancelled at an interrupt is no outcome of the server: counted apart,
// in no failure, error class, rate or attainment (it used to count as a failed "cancelled").
TEST(Summary, InterruptedRequestsAreCountedApartNotAsFailures) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 1000}};
  std::vector<RequestRecord> recs = {Rec(1, 0, 0, {{10}}, 10), Rec(2, 500, 500, {{510}}, 510),
                                     Rec(3, 900, 900, {{950}}, 990, ErrorClass::kInterrupted),
                                     Rec(4, 1000, 1000, {}, 1010, ErrorClass::kInterrupted)};
  Summary s = Summarize(recs, o);
  EXPECT_EQ(s.counts.records, 4);
  EXPECT_EQ(s.counts.interrupted, 2);
  EXPECT_EQ(s.counts.in_window, 2);
  EXPECT_EQ(s.counts.failed, 0);
  EXPECT_TRUE(s.errors.empty());
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1);
  EXPECT_EQ(s.ttft_ms.count, 2);
  EXPECT_DOUBLE_EQ(s.window_end_s, 0.5);  // the last counted send, not the cancelled ones
}

TEST(Summary, ReasoningAndServerQueue) {
  RequestRecord r = Rec(1, 0, 0, {{40, 1, true}, {90}}, 90);
  r.t_server_scheduled = MillisToNanos(5);
  r.token_source = TokenSource::kSimulated;
  Summary s = Summarize({r}, {});
  EXPECT_EQ(s.counts.with_reasoning, 1);
  EXPECT_EQ(s.counts.reasoning_tokens, 1);
  EXPECT_EQ(s.counts.reasoning_from_stream, 1);
  EXPECT_DOUBLE_EQ(s.reasoning_share, 0.5);
  EXPECT_DOUBLE_EQ(s.ttft_ms.p50, 40);
  EXPECT_DOUBLE_EQ(s.ttft_visible_ms.p50, 90);
  EXPECT_DOUBLE_EQ(s.queue_ms.p50, 5);
  EXPECT_EQ(s.token_source, "simulated");
}

// Reported phases become the TTFT split's distributions; a malformed `timings` is counted
// (and gives no phases); records without timings add nothing (no zeros in the percentiles).
TEST(Summary, TtftSplitAndMalformedTimingsCount) {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 4; ++i) {
    RequestRecord r = Rec(static_cast<uint64_t>(i), 10.0 * i, 10.0 * i, {{10.0 * i + 100}}, 10.0 * i + 100);
    r.server_queue = MillisToNanos(10.0 * i);
    r.server_prefill = MillisToNanos(40);
    recs.push_back(r);
  }
  RequestRecord plain = Rec(9, 5, 5, {{300}}, 300);  // an engine that reports nothing
  recs.push_back(plain);
  plain.id = 10;
  plain.server_timings_malformed = true;
  recs.push_back(plain);
  Summary s = Summarize(recs, {});
  EXPECT_EQ(s.queue_ms.count, 4);
  EXPECT_EQ(s.prefill_ms.count, 4);
  EXPECT_EQ(s.ttft_client_network_ms.count, 4);
  EXPECT_DOUBLE_EQ(s.ttft_client_network_ms.max, 60);  // 100 - 0 - 40
  EXPECT_DOUBLE_EQ(s.ttft_client_network_ms.p50, 45);  // 60, 50, 40, 30
  EXPECT_EQ(s.counts.server_timings_malformed, 1);
  EXPECT_EQ(s.counts.ttft_split_without_queue, 0);
}

TEST(Summary, ThroughputFloorAndUnknownMetric) {
  AccumulatorOptions o;
  o.slo.attainment = 0.5;
  o.slo.min_output_tokens_per_s = 1000;
  std::vector<RequestRecord> recs = {Rec(1, 0, 0, {{10}}, 10), Rec(2, 1000, 1000, {{1010}}, 1010)};
  Summary s = Summarize(recs, o);
  EXPECT_TRUE(s.slo_attainment_pass);
  EXPECT_FALSE(s.slo_pass);  // 1 tok/s < 1000
  o.slo.min_output_tokens_per_s.reset();
  EXPECT_TRUE(Summarize(recs, o).slo_pass);
  o.slo.latency = {{.metric = "bogus_ms", .percentile = 99, .threshold_ms = 1e9}};
  Summary bad = Summarize(recs, o);
  EXPECT_EQ(bad.counts.slo_met, 0);  // never silently met
  EXPECT_FALSE(bad.slo_pass);
}

TEST(Summary, TimeSeriesBucketsAndCoarsening) {
  AccumulatorOptions o;
  o.timeseries_bucket_s = 0.1;
  o.max_timeseries_buckets = 4;
  SummaryAccumulator acc(o);
  acc.Add(Rec(1, 0, 0, {{50}, {250}}, 250));
  Summary s1 = acc.Finish();
  ASSERT_EQ(s1.timeseries.size(), 3u);
  EXPECT_EQ(s1.timeseries[0].sent, 1);
  EXPECT_EQ(s1.timeseries[0].output_tokens, 1);
  EXPECT_EQ(s1.timeseries[0].ttft_count, 1);
  EXPECT_DOUBLE_EQ(s1.timeseries[0].ttft_mean_ms, 50);
  EXPECT_DOUBLE_EQ(s1.timeseries[1].in_flight, 1.0);
  EXPECT_DOUBLE_EQ(s1.timeseries[2].in_flight, 0.5);
  EXPECT_EQ(s1.timeseries[2].completed, 1);

  acc.Add(Rec(2, 750, 750, {{760}}, 760));  // beyond 4 x 100 ms: buckets double to 200 ms
  Summary s2 = acc.Finish();
  EXPECT_DOUBLE_EQ(s2.timeseries_bucket_s, 0.2);
  ASSERT_EQ(s2.timeseries.size(), 4u);
  EXPECT_DOUBLE_EQ(s2.timeseries[0].in_flight, 1.0);
  EXPECT_DOUBLE_EQ(s2.timeseries[1].in_flight, 0.25);
  EXPECT_EQ(s2.timeseries[1].completed, 1);
  EXPECT_EQ(s2.timeseries[3].completed, 1);
  EXPECT_DOUBLE_EQ(s2.timeseries[3].start_s, 0.6);
}

TEST(Summary, HistogramModeMemoryIsBounded) {
  AccumulatorOptions o;
  o.mode = AccumulatorOptions::Mode::kHistogram;
  o.max_timeseries_buckets = 64;
  SummaryAccumulator acc(o);
  for (int i = 0; i < 20000; ++i) {
    const double t = i * 50.0;  // one request every 50 ms for 1000 s
    acc.Add(Rec(static_cast<uint64_t>(i), t, t, {{t + 20 + i % 7}, {t + 40, 3}}, t + 40));
  }
  Summary s = acc.Finish();
  EXPECT_EQ(s.counts.in_window, 20000);
  EXPECT_LE(s.timeseries.size(), 64u);
  for (const auto& [key, h] : s.histograms) {
    EXPECT_LE(h.bucket_counts().size(), static_cast<size_t>(h.NumBuckets())) << key;
  }
  EXPECT_EQ(s.itl_ms.count, 60000);
  EXPECT_NEAR(s.output_tokens_per_s, 80000.0 / (19999 * 0.05), 80000.0 / (19999 * 0.05) * 0.001);
}

}  // namespace
}  // namespace infereng::metrics
