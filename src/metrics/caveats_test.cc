// "No data, no number": n/a with a reason and few-samples notes, in the rules
// (metrics/caveats.h) and in the terminal table that prints them.
#include "metrics/caveats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/summary_table.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testdata::Rec;

TEST(Caveats, MinimumSamplesPerPercentile) {
  EXPECT_EQ(MinSamplesFor(50), 2);
  EXPECT_EQ(MinSamplesFor(90), 10);
  EXPECT_EQ(MinSamplesFor(95), 20);
  EXPECT_EQ(MinSamplesFor(99), 100);
  EXPECT_EQ(MinSamplesFor(99.9), 1000);
  EXPECT_EQ(FewSamplesNote(37, 99), "P99 from 37 samples");
  EXPECT_EQ(FewSamplesNote(100, 99), "");
  EXPECT_EQ(FewSamplesNote(0, 99), "");  // no samples is "n/a", not "few"
}

TEST(Caveats, EmptyRunPrintsNaWithReasonsNotZeros) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500}};
  Summary s = Summarize({}, o);
  EXPECT_EQ(RatesUnavailable(s), "no requests in the measurement window");
  const std::string t = FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_THAT(t, HasSubstr("window: n/a (no requests in the measurement window"));
  EXPECT_THAT(t, HasSubstr("rates n/a: no requests in the measurement window"));
  EXPECT_THAT(t, HasSubstr("(on ttft_incl_queue_ms): n/a (no requests in the measurement window) FAIL"));
  EXPECT_THAT(t, HasSubstr("SLO attainment n/a"));
  EXPECT_THAT(t, Not(HasSubstr("0.00 ms")));
  EXPECT_THAT(t, Not(HasSubstr("window 0.0-0.0")));
}

TEST(Caveats, EmptyDistributionSaysWhyItIsEmpty) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "tpot_ms", .percentile = 99, .threshold_ms = 50}};
  Summary s = Summarize({Rec(1, 0, 0, {{20}}, 20), Rec(2, 500, 500, {{530}}, 530)}, o);
  const std::string t = FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_THAT(t, HasSubstr("SLO tpot_ms p99 <= 50.00 ms (on tpot_ms): n/a (no request had 2+ output tokens over 2+ "
                           "events) FAIL"));
}

TEST(Caveats, BurstHasNoOfferedRate) {
  Summary s = Summarize({Rec(1, 0, 0, {{20}, {30}}, 30), Rec(2, 0, 0, {{25}, {40}}, 40)}, AccumulatorOptions{});
  EXPECT_EQ(OfferedUnavailable(s), "every in-window request was scheduled at the same instant");
  const std::string t = FormatSummaryTable(s, {.show_boundaries = false});
  EXPECT_THAT(t, HasSubstr("offered n/a (every in-window request was scheduled at the same instant)"));
  EXPECT_THAT(t, HasSubstr("zero length: rates over the 0.040 s completion span"));
  EXPECT_THAT(t, HasSubstr("requests 50.00 req/s"));
}

TEST(Caveats, FewSamplesAreFlaggedNextToThePercentilesTheyCannotSupport) {
  AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500}};
  std::vector<RequestRecord> recs;
  for (int i = 0; i < 37; ++i) {
    const double t = i * 100.0;
    recs.push_back(Rec(static_cast<uint64_t>(i), t, t, {{t + 40}, {t + 50}}, t + 50));
  }
  const std::string t = FormatSummaryTable(Summarize(recs, o), {.show_boundaries = false});
  EXPECT_THAT(t, HasSubstr("40.00 ms PASS  [P99 from 37 samples]"));
  EXPECT_THAT(t, HasSubstr("* fewer samples than the percentile needs (P90 10, P95 20, P99 100, P99.9 1000)"));
  EXPECT_THAT(t, HasSubstr("40.00*"));
  EXPECT_THAT(t, HasSubstr("goodput thresholds (per request): ttft <= 500 ms (default: the card's highest-percentile "
                           "objectives: ttft p99)"));
  EXPECT_THAT(t, HasSubstr("met by: ttft 100.0%; all of them: 37 of 37 in-window requests"));
}

}  // namespace
}  // namespace infereng::metrics
