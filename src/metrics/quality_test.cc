// Quality statistics on hand-made outcomes: the Wilson interval, the threshold rule, the
// window, the breakdowns, the kept failures, the JSON round trip and the terminal lines.
#include "metrics/quality.h"

#include <gtest/gtest.h>

namespace infereng::metrics {
namespace {

// Reference values: Wilson score interval, z = 1.959964 (e.g. statsmodels
// proportion_confint(method="wilson")).
TEST(Quality, WilsonIntervalMatchesReferenceValues) {
  ProportionCi a = WilsonInterval(7, 10);
  EXPECT_NEAR(a.low, 0.39677, 1e-4);
  EXPECT_NEAR(a.high, 0.89222, 1e-4);
  ProportionCi b = WilsonInterval(140, 200);
  EXPECT_NEAR(b.low, 0.63322, 1e-4);
  EXPECT_NEAR(b.high, 0.75925, 1e-4);
  // The edges stay inside [0, 1] and are exact at 0 and n (Wald would give [0, 0]).
  ProportionCi none = WilsonInterval(0, 10);
  EXPECT_EQ(none.low, 0);
  EXPECT_NEAR(none.high, 0.27753, 1e-4);
  ProportionCi all = WilsonInterval(10, 10);
  EXPECT_EQ(all.high, 1);
  EXPECT_NEAR(all.low, 0.72247, 1e-4);
  ProportionCi empty = WilsonInterval(0, 0);
  EXPECT_EQ(empty.low, 0);
  EXPECT_EQ(empty.high, 1);
}

TEST(Quality, ThresholdRule) {
  EXPECT_TRUE(QualityMeetsThreshold(5, 10, 0.5));
  EXPECT_FALSE(QualityMeetsThreshold(4, 10, 0.5));
  EXPECT_TRUE(QualityMeetsThreshold(0, 10, 0));   // no floor
  EXPECT_TRUE(QualityMeetsThreshold(0, 0, 0.9));  // nothing checked: nothing to judge
}

TEST(Quality, ExcerptIsOneBoundedLineCutOnUtf8) {
  EXPECT_EQ(QualityExcerpt("a\n\n b\x1b[31m c\t"), "a b [31m c");
  const std::string e = QualityExcerpt("h\xc3\xa9llo world", 3);  // "hé" is 3 bytes
  EXPECT_EQ(e, "h\xc3\xa9...");
  EXPECT_EQ(QualityExcerpt("h\xc3\xa9llo", 2), "h...");  // never half of the é
}

QualityOutcome Outcome(uint64_t id, double t_s, bool pass, const std::string& check = "exact") {
  QualityOutcome o;
  o.request_id = id;
  o.item = static_cast<int>(id % 3);
  o.check = check;
  o.pass = pass;
  o.t_sched = SecondsToNanos(t_s);
  o.t_done = SecondsToNanos(t_s + 0.5);
  if (!pass) {
    o.prompt = "prompt " + std::to_string(id);
    o.expected = "42";
    o.got = "41";
    o.why = "differs";
  }
  return o;
}

TEST(Quality, ReportKeepsTheWindowTheBreakdownsAndTheFirstFailures) {
  std::vector<QualityOutcome> outs;
  outs.push_back(Outcome(0, 0.1, false));  // warm-up: outside the window
  for (uint64_t i = 1; i <= 30; ++i) outs.push_back(Outcome(i, static_cast<double>(i) * 0.1 + 1, i % 3 != 0, i % 2 ? "exact" : "number"));
  outs.push_back(Outcome(99, 20, false));  // scheduled after the window
  const QualityWindow w{.t0 = 0, .start = SecondsToNanos(1), .end = SecondsToNanos(10), .bucket_s = 1};
  const QualityReport q = BuildQualityReport(outs, w, 0.8);
  EXPECT_EQ(q.checked, 30);
  EXPECT_EQ(q.passed, 20);
  EXPECT_FALSE(q.Pass());
  EXPECT_EQ(q.by_check.at("exact").checked, 15);
  EXPECT_EQ(q.by_check.at("number").checked, 15);
  EXPECT_EQ(q.by_check.at("exact").passed + q.by_check.at("number").passed, 20);
  ASSERT_EQ(q.failures.size(), 10u);
  EXPECT_EQ(q.failures[0].request_id, 3u);  // completion order, warm-up left out
  EXPECT_EQ(q.failures[0].got, "41");
  // Completions from 1.6 s to 4.5 s: buckets [1, 2) .. [4, 5).
  ASSERT_EQ(q.timeseries.size(), 4u);
  EXPECT_EQ(q.timeseries[0].start_s, 1);
  int64_t sum = 0;
  for (const QualityBucket& b : q.timeseries) sum += b.checked;
  EXPECT_EQ(sum, 30);

  Result<QualityReport> back = QualityReportFromJson(QualityReportToJson(q));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, q);
  const nlohmann::json j = QualityReportToJson(q);
  EXPECT_EQ(j["pass"], false);
  EXPECT_NEAR(j["ci_low"].get<double>(), WilsonInterval(20, 30).low, 1e-12);
}

TEST(Quality, FailuresAreBounded) {
  std::vector<QualityOutcome> outs;
  for (uint64_t i = 0; i < 100; ++i) outs.push_back(Outcome(i, static_cast<double>(i), false));
  const QualityReport q = BuildQualityReport(outs, QualityWindow{}, 0.5);
  EXPECT_EQ(q.failures.size(), kMaxQualityFailures);
  EXPECT_EQ(q.checked, 100);
}

TEST(Quality, TerminalLinesSayRateIntervalThresholdVerdictAndCases) {
  std::vector<QualityOutcome> outs;
  for (uint64_t i = 0; i < 10; ++i) outs.push_back(Outcome(i, static_cast<double>(i), i < 3));
  const QualityReport q = BuildQualityReport(outs, QualityWindow{}, 0.5);
  const std::string t = FormatQualityLines(q, 3, false);
  EXPECT_NE(t.find("quality: 3 of 10 passed (30.0%, 95% CI [10.8%, 60.3%]), threshold 50.0% FAIL"), std::string::npos) << t;
  EXPECT_NE(t.find("failed item"), std::string::npos) << t;
  EXPECT_NE(t.find("expected 42; got \"41\""), std::string::npos) << t;
  EXPECT_NE(t.find("4 more failing case(s)"), std::string::npos) << t;
  EXPECT_EQ(QualityFailureReason(q), "quality pass rate 30.0% (3 of 10, 95% CI [10.8%, 60.3%]) is below the threshold 50.0%");
  QualityReport ok = q;
  ok.pass_threshold = 0.3;
  EXPECT_EQ(QualityFailureReason(ok), "");
  EXPECT_NE(FormatQualityLines(ok, 0, false).find("threshold 30.0% PASS"), std::string::npos);
}

}  // namespace
}  // namespace infereng::metrics
