// canary's paired statistics on fake records: a candidate slower by a fixed 4 ms on every
// request, over requests whose latencies vary far more than that (prompt lengths), is seen by
// the paired test where the unpaired comparison (compare's bootstrap on P99) is too wide, and
// the step's verdict says no-go naming the paired criterion; identical targets with noise
// are not flagged; the Wilcoxon signed-rank test itself checked against a textbook value.
#include "job/canary_paired.h"

#include <gtest/gtest.h>

#include <random>

#include "core/rank_stats.h"
#include "job/canary.h"
#include "job/compare.h"
#include "job/compare_inputs.h"
#include "metrics/summary.h"

namespace infereng::job {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

// Request i: sent at i * 100 ms, TTFT base_ms[i] + shift (+ noise), then 8 tokens 5 ms apart.
std::vector<metrics::RequestRecord> Records(const std::vector<double>& base_ms, double shift_ms, double noise_ms,
                                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, noise_ms > 0 ? noise_ms : 1);
  std::vector<metrics::RequestRecord> out;
  for (std::size_t i = 0; i < base_ms.size(); ++i) {
    metrics::RequestRecord r;
    r.id = i;
    r.t_sched = r.t_send = static_cast<Nanos>(i) * 100 * kMs;
    r.t_first_byte = r.t_send + kMs;
    const double ttft = base_ms[i] + shift_ms + (noise_ms > 0 ? noise(rng) : 0);
    Nanos t = r.t_send + static_cast<Nanos>(ttft * kMs);
    for (int k = 0; k < 8; ++k, t += 5 * kMs) r.chunks.push_back({.t = t, .tokens = 1});
    r.t_end = t;
    r.http_status = 200;
    r.completion_tokens = 8;
    r.output_tokens_target = 8;
    out.push_back(r);
  }
  return out;
}

std::vector<double> PromptBoundTtfts(int n) {  // 20..220 ms: prefill of prompts of many lengths
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(20, 220);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

RunInputs Inputs(const std::vector<metrics::RequestRecord>& records) {
  return RunInputsFromRecords(metrics::Summarize(records, metrics::AccumulatorOptions{}), records);
}

TEST(CanaryPaired, FixedFewMsSlowdownPairedDetectsWhereUnpairedCannot) {
  const std::vector<double> base = PromptBoundTtfts(40);
  const auto a = Records(base, 0, 0.3, 1), b = Records(base, 4, 0.3, 2);
  // Unpaired (what canary had before): the P99 and median intervals include 0.
  auto cmp = CompareRuns(Inputs(a), Inputs(b), CompareOptions{});
  ASSERT_TRUE(cmp.ok()) << cmp.status().ToString();
  for (const char* key : {"ttft_ms.p99", "e2e_ms.p99", "ttft_ms.p50"}) {
    const MetricDelta* d = cmp->Find(key);
    ASSERT_NE(d, nullptr) << key;
    EXPECT_NE(d->verdict, DeltaVerdict::kWorse) << key << ": the unpaired test must not see 4 ms here";
  }
  // Paired: every pair is ~4 ms slower.
  const PairedComparison p = ComparePaired(a, b);
  EXPECT_EQ(p.pairs, 40);
  const PairedMetric* ttft = p.Find("ttft_ms.p99");
  ASSERT_NE(ttft, nullptr);
  EXPECT_EQ(ttft->verdict, PairedVerdict::kWorse);
  EXPECT_LT(ttft->p_value, 1e-6);
  EXPECT_NEAR(ttft->median, 4, 0.5);
  EXPECT_LT(ttft->median_low, 4);
  EXPECT_GT(ttft->median_high, 4);
  EXPECT_GT(ttft->median_low, 3);
  EXPECT_EQ(ttft->candidate_slower, 40);
  EXPECT_EQ(p.Find("e2e_ms.p99")->verdict, PairedVerdict::kWorse);
  EXPECT_EQ(p.Find("itl_ms.p99")->verdict, PairedVerdict::kNoDifference) << "the decode pace did not change";

  // The step's verdict uses the paired result: no-go, naming it.
  CanaryOptions o;
  o.min_effect = 0.01;  // 4 ms of a ~120 ms median: 3%
  CanaryStep step;
  step.comparison = *cmp;
  step.paired = p;
  JudgeCanaryStep(o, &step);
  EXPECT_FALSE(step.go);
  std::vector<std::string> criteria;
  for (const CanaryReason& r : step.reasons) criteria.push_back(r.criterion);
  EXPECT_EQ(criteria, (std::vector<std::string>{"ttft_ms.paired", "e2e_ms.paired"}));
  // Without pairs (what the step had before), the same step is go.
  step.paired = {};
  JudgeCanaryStep(o, &step);
  EXPECT_TRUE(step.go);
  // And above min_effect's floor the paired slowdown is judged negligible.
  step.paired = p;
  o.min_effect = 0.05;
  JudgeCanaryStep(o, &step);
  EXPECT_TRUE(step.go);
}

TEST(CanaryPaired, IdenticalTargetsWithNoiseAreNotFlagged) {
  const std::vector<double> base = PromptBoundTtfts(200);
  const PairedComparison p = ComparePaired(Records(base, 0, 1.0, 3), Records(base, 0, 1.0, 4));
  for (const PairedMetric& m : p.metrics) {
    EXPECT_NE(m.verdict, PairedVerdict::kWorse) << m.key << " p=" << m.p_value;
    EXPECT_LT(m.median_low, 0.0 + 1e-9) << m.key;
    EXPECT_GT(m.median_high, 0.0 - 1e-9) << m.key;
  }
}

TEST(CanaryPaired, PairsOnlyRequestsOkOnBothAndTooFewHasNoVerdict) {
  const std::vector<double> base = PromptBoundTtfts(12);
  auto a = Records(base, 0, 0, 1), b = Records(base, 10, 0, 1);
  a[0].error = metrics::ErrorClass::kTimeout;
  b[1].error = metrics::ErrorClass::kHttp5xx;
  b.pop_back();
  const PairedComparison p = ComparePaired(a, b);
  EXPECT_EQ(p.pairs, 9);
  EXPECT_EQ(p.Find("ttft_ms.p99")->verdict, PairedVerdict::kTooFew);
  EXPECT_NEAR(p.Find("ttft_ms.p99")->median, 10, 1e-6);
}

TEST(WilcoxonSignedRank, MatchesTheNormalApproximationByHand) {
  // d = 1..10: W+ = 55, mean 27.5, var 96.25; z = (55 - 27.5 - 0.5) / 9.811 = 2.752.
  std::vector<double> d;
  for (int i = 1; i <= 10; ++i) d.push_back(i);
  const stats::SignedRankResult r = stats::WilcoxonSignedRank(d);
  EXPECT_EQ(r.n, 10);
  EXPECT_DOUBLE_EQ(r.w_plus, 55);
  EXPECT_NEAR(r.z, 2.752, 1e-3);
  EXPECT_NEAR(r.p_value, 2 * (1 - stats::NormalCdf(2.752)), 1e-4);
  // Symmetric about 0 (zeros dropped): no evidence.
  const stats::SignedRankResult s = stats::WilcoxonSignedRank(std::vector<double>{-3, -2, -1, 0, 1, 2, 3});
  EXPECT_EQ(s.n, 6);
  EXPECT_DOUBLE_EQ(s.p_value, 1);
}

}  // namespace
}  // namespace infereng::job
