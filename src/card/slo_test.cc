#include "card/slo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "card/card_parser.h"
#include "card/templates.h"

namespace infereng::card {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

WorkloadCard Parse(const std::string& slo) {
  auto card = ParseCard("name: t\ntraffic:\n  input_tokens: 512\n  output_tokens: 128\nslo:\n" + slo, "c.yaml");
  EXPECT_TRUE(card.ok()) << card.status().ToString();
  return card.ok() ? *card : WorkloadCard{};
}

// The card: a p50 objective must not become the per-request bar 99% must clear.
TEST(SloTest, DefaultThresholdIsEachMetricsHighestPercentileObjective) {
  WorkloadCard c = Parse("  ttft: {p50: 200ms, p99: 500ms}\n  e2e: {p99.9: 20s, p95: 8s}\n  attainment: 0.99\n");
  const std::vector<RequestThreshold> t = GoodputThresholds(c.slo);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].metric, "ttft_ms");
  EXPECT_DOUBLE_EQ(t[0].threshold_ms, 500);
  EXPECT_EQ(t[0].origin, "ttft p99");
  EXPECT_EQ(t[1].metric, "e2e_ms");
  EXPECT_DOUBLE_EQ(t[1].threshold_ms, 20000);
  EXPECT_EQ(DescribeGoodputThresholds(t),
            "ttft <= 500 ms, e2e <= 20000 ms (default: the card's highest-percentile objectives: ttft p99, e2e p99.9)");
  EXPECT_THAT(SloAmbiguities(c), IsEmpty());
}

TEST(SloTest, ExplicitGoodputThresholdsReplaceTheDefault) {
  WorkloadCard c = Parse("  ttft: {p50: 200ms, p99: 500ms}\n  tpot: {p99: 60ms}\n  goodput: {ttft: 800ms, tpot_ms: 50}\n");
  const std::vector<RequestThreshold> t = GoodputThresholds(c.slo);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].threshold_ms, 800);
  EXPECT_DOUBLE_EQ(t[1].threshold_ms, 50);
  EXPECT_EQ(t[1].origin, "slo.goodput");
  EXPECT_EQ(DescribeGoodputThresholds(t), "ttft <= 800 ms, tpot <= 50 ms (slo.goodput)");
  EXPECT_TRUE(c.Has("slo.goodput.ttft"));
}

// Reasoning models: time to the first visible (non-reasoning) token as an objective and a
// goodput threshold, spelled like the other latencies.
TEST(SloTest, TtftVisibleIsAnObjectiveAndAGoodputThreshold) {
  WorkloadCard c = Parse("  ttft: {p99: 500ms}\n  ttft_visible: {p50: 2s, p99: 4s}\n");
  ASSERT_EQ(c.slo.latency.size(), 3u);
  EXPECT_EQ(c.slo.latency[1].metric, "ttft_visible_ms");
  EXPECT_DOUBLE_EQ(c.slo.latency[2].threshold_ms, 4000);
  EXPECT_EQ(DescribeGoodputThresholds(GoodputThresholds(c.slo)),
            "ttft <= 500 ms, ttft_visible <= 4000 ms (default: the card's highest-percentile objectives: ttft p99, "
            "ttft_visible p99)");
  WorkloadCard g = Parse("  ttft_visible_ms: {p99: 3000}\n  goodput: {ttft_visible: 3s}\n");
  ASSERT_EQ(g.slo.goodput.size(), 1u);
  EXPECT_EQ(g.slo.goodput[0].metric, "ttft_visible_ms");
  EXPECT_DOUBLE_EQ(g.slo.goodput[0].threshold_ms, 3000);
  auto dup = ParseCard("name: t\nslo:\n  ttft_visible: {p99: 1s}\n  ttft_visible_ms: {p99: 900}\n", "c.yaml");
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("(ttft_visible and ttft_visible_ms are the same metric)"));
}

TEST(SloTest, BadGoodputThresholdsAreLocatedErrors) {
  const std::string base = "name: t\ntraffic:\n  input_tokens: 512\n  output_tokens: 128\nslo:\n";
  auto dup = ParseCard(base + "  goodput: {ttft: 1s, ttft_ms: 500}\n", "c.yaml");
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("c.yaml:6: slo.goodput.ttft_ms: is given twice"));
  auto unit = ParseCard(base + "  goodput: {tpot: 50}\n", "c.yaml");
  ASSERT_FALSE(unit.ok());
  EXPECT_THAT(unit.status().message(), HasSubstr("c.yaml:6: slo.goodput.tpot"));
  auto key = ParseCard(base + "  goodput: {ttf: 1s}\n", "c.yaml");
  ASSERT_FALSE(key.ok());
  EXPECT_THAT(key.status().message(), HasSubstr("did you mean \"ttft\""));
  auto shape = ParseCard(base + "  goodput: 500ms\n", "c.yaml");
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("per-request thresholds like"));
}

TEST(SloTest, AmbiguousCardsAreWarnedAbout) {
  // A p50-only objective under a 99% attainment target.
  auto p50 = SloAmbiguities(Parse("  ttft: {p50: 200ms}\n  attainment: 0.99\n"));
  ASSERT_EQ(p50.size(), 1u);
  EXPECT_THAT(p50[0], HasSubstr("slo.ttft"));
  EXPECT_THAT(p50[0], HasSubstr("a p99 bar, not a p50 one"));
  EXPECT_THAT(p50[0], HasSubstr("slo.goodput.ttft"));
  // A goodput threshold tighter than an objective it overrides, and one metric left out.
  auto tight = SloAmbiguities(Parse("  ttft: {p99: 500ms}\n  itl: {p99: 50ms}\n  goodput: {ttft: 200ms}\n"));
  ASSERT_EQ(tight.size(), 2u);
  EXPECT_THAT(tight[0], HasSubstr("slo.goodput.ttft 200 ms"));
  EXPECT_THAT(tight[0], HasSubstr("can never bind"));
  EXPECT_THAT(tight[1], HasSubstr("slo.goodput has no itl threshold"));
  // A tail objective alone is not ambiguous.
  EXPECT_THAT(SloAmbiguities(Parse("  ttft: {p99: 500ms}\n")), IsEmpty());
}

TEST(SloTest, ExamplesAreUnambiguous) {
  for (const CardTemplate& t : CardTemplates()) {
    auto card = ParseCard(t.yaml, std::string(t.name) + ".yaml");
    ASSERT_TRUE(card.ok()) << card.status().ToString();
    EXPECT_THAT(SloAmbiguities(*card), IsEmpty()) << t.name;
    EXPECT_FALSE(card->slo.goodput.empty()) << t.name << ": examples state their goodput thresholds";
  }
}

}  // namespace
}  // namespace infereng::card
