// SLO semantics in the summary: percentile objectives are judged on the percentile;
// goodput and attainment count the per-request thresholds (card/slo.h).
#include <gtest/gtest.h>

#include "metrics/summary.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

// 100 requests, one every 10 ms: 95 with TTFT 36 ms, 5 with TTFT 300 ms. P50 36 ms, P99 300 ms.
std::vector<RequestRecord> MostlyFast() {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 100; ++i) {
    const double t = i * 10.0, ttft = i % 20 == 7 ? 300 : 36;
    recs.push_back(Rec(static_cast<uint64_t>(i), t, t, {{t + ttft}, {t + ttft + 10}}, t + ttft + 10));
  }
  return recs;
}

AccumulatorOptions IssueCard() {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 50, .threshold_ms = 200},
                   {.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500}};
  o.slo.attainment = 0.99;
  return o;
}

// The issue: `ttft: {p50: 200ms, p99: 500ms}` with attainment 0.99 applied the p50 threshold
// to every request, so this run (P50 36 ms, P99 300 ms: both objectives pass) failed with
// 95% attainment. Each objective is now judged on its percentile, and attainment on the
// default per-request threshold (the p99 objective's 500 ms).
TEST(SummarySlo, PercentileObjectivesAreJudgedOnThePercentile) {
  Summary s = Summarize(MostlyFast(), IssueCard());
  ASSERT_EQ(s.slo.size(), 2u);
  EXPECT_DOUBLE_EQ(s.slo[0].value_ms, 36);
  EXPECT_TRUE(s.slo[0].pass);
  EXPECT_EQ(s.slo[0].samples, 100);
  EXPECT_TRUE(s.slo[1].pass);
  EXPECT_EQ(s.slo[0].requests_met, 95);  // informational: requests under 200 ms
  ASSERT_EQ(s.goodput_thresholds.size(), 1u);
  EXPECT_DOUBLE_EQ(s.goodput_thresholds[0].threshold.threshold_ms, 500);
  EXPECT_EQ(s.goodput_thresholds[0].threshold.origin, "ttft p99");
  EXPECT_EQ(s.goodput_thresholds[0].requests_met, 100);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0);
  EXPECT_TRUE(s.slo_attainment_pass);
  EXPECT_TRUE(s.slo_pass);
  EXPECT_DOUBLE_EQ(s.goodput_rps, s.requests_per_s);
}

TEST(SummarySlo, ExplicitGoodputThresholdsDriveAttainmentAndGoodput) {
  AccumulatorOptions o = IssueCard();
  o.slo.goodput = {{.metric = "ttft_ms", .threshold_ms = 250, .origin = "slo.goodput"}};
  Summary s = Summarize(MostlyFast(), o);
  EXPECT_TRUE(s.slo[0].pass);  // the objectives do not change
  EXPECT_TRUE(s.slo[1].pass);
  EXPECT_EQ(s.counts.slo_met, 95);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 0.95);
  EXPECT_FALSE(s.slo_attainment_pass);
  EXPECT_FALSE(s.slo_pass);
  EXPECT_LT(s.goodput_rps, s.requests_per_s);
}

TEST(SummarySlo, AFailingObjectiveFailsTheVerdictWhateverTheAttainment) {
  AccumulatorOptions o = IssueCard();
  o.slo.latency[0].threshold_ms = 30;  // P50 36 ms > 30 ms
  Summary s = Summarize(MostlyFast(), o);
  EXPECT_FALSE(s.slo[0].pass);
  EXPECT_TRUE(s.slo_attainment_pass);  // every request under the 500 ms threshold
  EXPECT_FALSE(s.slo_pass);
}

TEST(SummarySlo, EmptyDistributionHasNoSamplesAndDoesNotPass) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "tpot_ms", .percentile = 99, .threshold_ms = 50}};
  Summary s = Summarize({Rec(1, 0, 0, {{20}}, 20), Rec(2, 10, 10, {{30}}, 30)}, o);  // one token each
  ASSERT_EQ(s.slo.size(), 1u);
  EXPECT_EQ(s.slo[0].samples, 0);
  EXPECT_FALSE(s.slo[0].pass);
  EXPECT_EQ(s.goodput_thresholds[0].requests_met, 2);  // per request, TPOT n/a counts as met
}

// 1,000 requests scheduled within a microsecond made a window of 999 ns and printed
// "offered 999400000000/s". A window under 1 ms is a burst: rates over the completion span,
// and no offered rate.
TEST(SummarySlo, TinyWindowIsABurstWithoutAnOfferedRate) {
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 1000; ++i) {
    RequestRecord r = Rec(static_cast<uint64_t>(i), 0, 0, {{100}, {200}}, 200);
    r.t_sched = r.t_send = i;  // nanoseconds apart
    recs.push_back(r);
  }
  Summary s = Summarize(recs, AccumulatorOptions{});
  EXPECT_EQ(s.rate_basis, "completion_span");
  EXPECT_DOUBLE_EQ(s.rate_basis_s, 0.2);
  EXPECT_DOUBLE_EQ(s.offered_rps, 0);
  EXPECT_DOUBLE_EQ(s.achieved_rps, 0);
  EXPECT_DOUBLE_EQ(s.requests_per_s, 1000 / 0.2);
}

}  // namespace
}  // namespace infereng::metrics
