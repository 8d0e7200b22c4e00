// Reasoning models in the metrics: the twin's reasoning marks (reasoning.h), reasoning token
// counts and their source, visible output, and TTFT visible as an SLO and a goodput
// threshold (docs/metrics.md, "Reasoning models").
#include "metrics/reasoning.h"

#include <gtest/gtest.h>

#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "metrics/summary_table.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

TEST(MarkReasoning, MarksWholeChunksAndSplitsTheOneThatStraddles) {
  std::vector<Chunk> chunks = {{.t = 10, .tokens = 1}, {.t = 20, .tokens = 3}, {.t = 30, .tokens = 2}};
  EXPECT_EQ(MarkReasoning(chunks, 3), 3);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_TRUE(chunks[0].reasoning);
  EXPECT_EQ(chunks[1].t, 20);
  EXPECT_EQ(chunks[1].tokens, 2);
  EXPECT_TRUE(chunks[1].reasoning);
  EXPECT_EQ(chunks[2].t, 20);  // the answer's part of the same event, at its time
  EXPECT_EQ(chunks[2].tokens, 1);
  EXPECT_FALSE(chunks[2].reasoning);
  EXPECT_FALSE(chunks[3].reasoning);

  std::vector<Chunk> short_stream = {{.t = 10, .tokens = 1}, {.t = 20, .tokens = 1}};
  EXPECT_EQ(MarkReasoning(short_stream, 5), 2);  // fewer tokens than asked: all of them
  EXPECT_TRUE(short_stream[1].reasoning);
  std::vector<Chunk> none = {{.t = 10, .tokens = 1}};
  EXPECT_EQ(MarkReasoning(none, 0), 0);
  EXPECT_FALSE(none[0].reasoning);
}

// Two reasoning requests (3 and 5 reasoning tokens; one counted by usage, one from its
// chunks) and one plain request, 1 s window. TTFT visible: 150, 100 and (plain) its TTFT 30.
std::vector<RequestRecord> Mixed() {
  RequestRecord a = Rec(1, 0, 0, {{50, 1, true}, {100, 2, true}, {150}, {200}}, 200);  // stream: 3
  RequestRecord b = Rec(2, 500, 500, {{520, 2, true}, {560, 2, true}, {600, 2}, {660}}, 660);
  b.completion_tokens = 7;
  b.reasoning_tokens = 5;  // usage: the mixed event at 600 carried one more reasoning token
  RequestRecord c = Rec(3, 900, 900, {{930}, {940}}, 940);
  return {a, b, c};
}

TEST(SummaryReasoning, CountsSourcesShareAndVisibleRate) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  Summary s = Summarize(Mixed(), o);
  EXPECT_EQ(s.counts.with_reasoning, 2);
  EXPECT_EQ(s.counts.reasoning_tokens, 8);
  EXPECT_EQ(s.counts.reasoning_from_usage, 1);
  EXPECT_EQ(s.counts.reasoning_from_stream, 1);
  EXPECT_EQ(s.reasoning_tokens.count, 2);  // the requests that reasoned only
  EXPECT_DOUBLE_EQ(s.reasoning_tokens.min, 3);
  EXPECT_DOUBLE_EQ(s.reasoning_tokens.max, 5);
  EXPECT_EQ(s.counts.output_tokens, 5 + 7 + 2);
  EXPECT_DOUBLE_EQ(s.reasoning_share, 8.0 / 14.0);
  // Window [0, 1 s]: 14 tokens arrive in it, 8 of them reasoning.
  EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 14);
  EXPECT_DOUBLE_EQ(s.visible_output_tokens_per_s, 6);
  EXPECT_EQ(s.ttft_visible_ms.count, 3);
  EXPECT_DOUBLE_EQ(s.ttft_visible_ms.min, 30);
  EXPECT_DOUBLE_EQ(s.ttft_visible_ms.max, 150);
  EXPECT_DOUBLE_EQ(s.ttft_visible_ms.p50, 100);  // [30, 100, 150]
}

// slo.ttft_visible is judged like TTFT (incl. queue in open loop): the percentile objective
// and the per-request goodput threshold flip exactly at the threshold.
TEST(SummaryReasoning, TtftVisibleObjectiveAndGoodputFlipAtTheThreshold) {
  for (const double threshold : {150.0, 149.9, 148.9}) {
    AccumulatorOptions o;
    o.window_end = MillisToNanos(1000);
    o.slo.latency = {{.metric = "ttft_visible_ms", .percentile = 99, .threshold_ms = threshold}};
    o.slo.attainment = 1.0;
    Summary s = Summarize(Mixed(), o);
    ASSERT_EQ(s.slo.size(), 1u);
    EXPECT_EQ(s.slo[0].measured_as, "ttft_visible_incl_queue_ms");
    // Incl. queue: a 150, b 100, c 30 (sent as scheduled); P99 = 100 + 0.98 * 50 = 149.
    EXPECT_DOUBLE_EQ(s.slo[0].value_ms, 149);
    EXPECT_EQ(s.slo[0].pass, threshold >= 149) << threshold;
    ASSERT_EQ(s.goodput_thresholds.size(), 1u);
    const bool all = threshold >= 150;
    EXPECT_EQ(s.goodput_thresholds[0].requests_met, all ? 3 : 2) << threshold;
    EXPECT_EQ(s.slo_attainment_pass, all) << threshold;
    EXPECT_EQ(s.slo_pass, all) << threshold;
  }
  AccumulatorOptions g;
  g.window_end = MillisToNanos(1000);
  g.slo.goodput = {{.metric = "ttft_visible_ms", .threshold_ms = 120, .origin = "slo.goodput"}};
  Summary s = Summarize(Mixed(), g);
  EXPECT_EQ(s.counts.good, 2);  // b (100) and the plain c (its TTFT, 30); a's 150 misses
}

// An answer that never started (every chunk reasoning) misses a ttft_visible threshold.
TEST(SummaryReasoning, NoVisibleTokenIsAMiss) {
  AccumulatorOptions o;
  o.slo.goodput = {{.metric = "ttft_visible_ms", .threshold_ms = 1000, .origin = "slo.goodput"}};
  Summary s = Summarize({Rec(1, 0, 0, {{10, 1, true}, {20, 1, true}}, 20)}, o);
  EXPECT_EQ(s.counts.succeeded, 1);
  EXPECT_EQ(s.counts.slo_met, 0);
  EXPECT_TRUE(s.ttft_visible_ms.empty());
}

TEST(SummaryReasoning, JsonRoundTripAndTableRows) {
  AccumulatorOptions o;
  o.window_end = MillisToNanos(1000);
  const Summary s = Summarize(Mixed(), o);
  Result<Summary> back = SummaryFromJson(SummaryToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->counts, s.counts);
  EXPECT_DOUBLE_EQ(back->visible_output_tokens_per_s, 6);
  EXPECT_DOUBLE_EQ(back->reasoning_share, s.reasoning_share);
  EXPECT_EQ(back->reasoning_tokens.count, 2);
  EXPECT_EQ(back->ttft_visible_incl_queue_ms.count, 3);

  const TableOptions no_definitions{.show_boundaries = false};
  const std::string table = FormatSummaryTable(s, no_definitions);
  EXPECT_NE(table.find("TTFT visible "), std::string::npos) << table;
  EXPECT_NE(table.find("reasoning: 2 of 3 ok requests"), std::string::npos) << table;
  EXPECT_NE(table.find("57.1% of output tokens | visible output 6.00 tok/s (counted from: usage 1, reasoning "
                       "chunks 1)"),
            std::string::npos)
      << table;
  // Without reasoning neither appears (TTFT visible would repeat TTFT).
  const std::string plain = FormatSummaryTable(Summarize({Mixed()[2]}, {}), no_definitions);
  EXPECT_EQ(plain.find("TTFT visible "), std::string::npos) << plain;
  EXPECT_EQ(plain.find("reasoning:"), std::string::npos) << plain;
}

}  // namespace
}  // namespace infereng::metrics
