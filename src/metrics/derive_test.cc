#include "metrics/derive.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;
using ::testing::ElementsAre;
using ::testing::DoubleEq;

TEST(DeriveRequest, MultiTokenChunksAreTokenExpanded) {
  // Sent at 1 ms (scheduled 0); events at 101 (1 token), 111 (1), 131 (2 tokens); closed 132.
  RequestMetrics m = DeriveRequest(Rec(1, 0, 1, {{101}, {111}, {131, 2}}, 132));
  EXPECT_EQ(m.output_tokens, 4);
  EXPECT_DOUBLE_EQ(*m.schedule_lag_ms, 1);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 100);
  EXPECT_DOUBLE_EQ(*m.ttft_incl_queue_ms, 101);
  EXPECT_DOUBLE_EQ(*m.e2e_ms, 130);
  EXPECT_DOUBLE_EQ(*m.e2e_incl_queue_ms, 131);
  EXPECT_DOUBLE_EQ(*m.stream_close_ms, 1);
  EXPECT_DOUBLE_EQ(*m.tpot_ms, 10);  // (131 - 101) / (4 - 1)
  EXPECT_THAT(m.inter_chunk_ms, ElementsAre(DoubleEq(10), DoubleEq(20)));
  EXPECT_THAT(m.itl_ms, ElementsAre(DoubleEq(10), DoubleEq(10), DoubleEq(10)));
  EXPECT_DOUBLE_EQ(*m.itl_p99_ms, 10);
  EXPECT_DOUBLE_EQ(*m.ttft_visible_ms, 100);  // no reasoning: the first token is visible
  EXPECT_DOUBLE_EQ(*m.ttft_visible_incl_queue_ms, 101);
  EXPECT_EQ(m.reasoning_tokens, 0);
  EXPECT_EQ(m.visible_output_tokens, 4);
  EXPECT_FALSE(m.queue_ms.has_value());
}

// The TTFT split from the durations an engine reported: client+network = TTFT - queue -
// prefill; without a queue time (llama.cpp) it keeps the queue and says so; without
// timings there is no split at all (never zeros).
TEST(DeriveRequest, ServerPhasesSplitTtft) {
  RequestRecord r = Rec(3, 0, 0, {{100}, {120}}, 121);  // TTFT 100 ms
  RequestMetrics none = DeriveRequest(r);
  EXPECT_FALSE(none.queue_ms || none.prefill_ms || none.decode_ms || none.ttft_client_network_ms);

  r.server_queue = MillisToNanos(30);
  r.server_prefill = MillisToNanos(45);
  r.server_decode = MillisToNanos(19);
  RequestMetrics m = DeriveRequest(r);
  EXPECT_DOUBLE_EQ(*m.queue_ms, 30);
  EXPECT_DOUBLE_EQ(*m.prefill_ms, 45);
  EXPECT_DOUBLE_EQ(*m.decode_ms, 19);
  EXPECT_DOUBLE_EQ(*m.ttft_client_network_ms, 25);
  EXPECT_FALSE(m.split_includes_queue);

  r.server_queue = -1;
  RequestMetrics no_queue = DeriveRequest(r);
  EXPECT_FALSE(no_queue.queue_ms.has_value());
  EXPECT_DOUBLE_EQ(*no_queue.ttft_client_network_ms, 55);
  EXPECT_TRUE(no_queue.split_includes_queue);

  r.chunks.clear();  // no first token: no TTFT, no split (the phases stay)
  RequestMetrics no_token = DeriveRequest(r);
  EXPECT_FALSE(no_token.ttft_client_network_ms.has_value());
  EXPECT_DOUBLE_EQ(*no_token.prefill_ms, 45);
}

// An answer not streamed (one event with every token): the decode is inside its TTFT, so the
// split takes it off too, and without a reported decode there is no split.
TEST(DeriveRequest, WholeAnswerSplitTakesTheDecodeOff) {
  RequestRecord r = Rec(4, 0, 0, {{300, 12}}, 300);  // TTFT = E2E = 300 ms
  r.server_queue = MillisToNanos(30);
  r.server_prefill = MillisToNanos(45);
  RequestMetrics no_decode = DeriveRequest(r);
  EXPECT_DOUBLE_EQ(*no_decode.ttft_ms, 300);
  EXPECT_FALSE(no_decode.ttft_client_network_ms.has_value());
  r.server_decode = MillisToNanos(200);
  RequestMetrics m = DeriveRequest(r);
  EXPECT_DOUBLE_EQ(*m.ttft_client_network_ms, 25);  // 300 - 30 - 45 - 200
  // A streamed answer of one token is not "whole": its first token is its last.
  RequestRecord one = Rec(5, 0, 0, {{100}}, 100);
  one.server_prefill = MillisToNanos(45);
  EXPECT_DOUBLE_EQ(*DeriveRequest(one).ttft_client_network_ms, 55);
}

TEST(DeriveRequest, ReasoningGivesVisibleTtft) {
  RequestMetrics m = DeriveRequest(Rec(2, 0, 0, {{50, 1, true}, {60, 1, true}, {80}}, 80));
  EXPECT_TRUE(m.has_reasoning);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 50);  // reasoning text is output
  EXPECT_DOUBLE_EQ(*m.ttft_visible_ms, 80);
  EXPECT_DOUBLE_EQ(*m.tpot_ms, 15);  // (80 - 50) / 2
  EXPECT_EQ(m.reasoning_tokens, 2);  // from the stream: the reasoning chunks' tokens
  EXPECT_FALSE(m.reasoning_from_usage);
  EXPECT_EQ(m.visible_output_tokens, 1);
}

// The server's usage count wins over the stream's: a chunk that carried the last reasoning
// text together with the first answer text is visible to the stream, but usage counts its
// reasoning token. A count above the output is clamped to it.
TEST(DeriveRequest, UsageReasoningTokensWinOverTheStream) {
  RequestRecord r = Rec(2, 0, 0, {{50, 1, true}, {60, 2}, {80}}, 80);
  r.completion_tokens = 4;
  r.reasoning_tokens = 2;
  RequestMetrics m = DeriveRequest(r);
  EXPECT_EQ(m.reasoning_tokens, 2);
  EXPECT_TRUE(m.reasoning_from_usage);
  EXPECT_EQ(m.visible_output_tokens, 2);
  EXPECT_EQ(m.visible_chunk_tokens, 3);
  EXPECT_DOUBLE_EQ(*m.ttft_visible_ms, 60);
  r.reasoning_tokens = 9;
  EXPECT_EQ(DeriveRequest(r).reasoning_tokens, 4);
  EXPECT_EQ(DeriveRequest(r).visible_output_tokens, 0);
}

// Every chunk reasoning (max_tokens hit while thinking): the answer never started, so
// there is no visible TTFT (a miss for a ttft_visible threshold), though TTFT exists.
TEST(DeriveRequest, AnAnswerThatNeverStartedHasNoVisibleTtft) {
  RequestMetrics m = DeriveRequest(Rec(2, 0, 0, {{50, 1, true}, {60, 1, true}}, 61));
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 50);
  EXPECT_FALSE(m.ttft_visible_ms.has_value());
  EXPECT_FALSE(m.ttft_visible_incl_queue_ms.has_value());
  EXPECT_EQ(m.reasoning_tokens, 2);
  EXPECT_EQ(m.visible_output_tokens, 0);
}

TEST(DeriveRequest, ZeroAndOneTokenLeaveUndefinedMetrics) {
  RequestMetrics zero = DeriveRequest(Rec(3, 0, 0, {}, 40));
  EXPECT_EQ(zero.output_tokens, 0);
  EXPECT_FALSE(zero.ttft_ms.has_value());
  EXPECT_FALSE(zero.e2e_ms.has_value());
  EXPECT_FALSE(zero.tpot_ms.has_value());
  EXPECT_TRUE(zero.itl_ms.empty());
  EXPECT_FALSE(zero.itl_p99_ms.has_value());

  RequestMetrics one = DeriveRequest(Rec(4, 0, 0, {{25}}, 26));
  EXPECT_EQ(one.output_tokens, 1);
  EXPECT_DOUBLE_EQ(*one.ttft_ms, 25);
  EXPECT_DOUBLE_EQ(*one.e2e_ms, 25);
  EXPECT_FALSE(one.tpot_ms.has_value());  // never 0
  EXPECT_TRUE(one.itl_ms.empty());
  EXPECT_FALSE(RequestItlPercentile(one, 99).has_value());
}

TEST(DeriveRequest, SingleEventWithManyTokensHasNoTpot) {
  RequestMetrics m = DeriveRequest(Rec(5, 0, 0, {{70, 5}}, 70));
  EXPECT_EQ(m.output_tokens, 5);
  EXPECT_FALSE(m.tpot_ms.has_value());
  EXPECT_TRUE(m.itl_ms.empty());
}

TEST(DeriveRequest, UsageCountDrivesTpot) {
  RequestRecord r = Rec(6, 0, 0, {{100}, {190}}, 190);
  r.completion_tokens = 10;
  RequestMetrics m = DeriveRequest(r);
  EXPECT_EQ(m.output_tokens, 10);
  EXPECT_EQ(m.chunk_tokens, 2);
  EXPECT_DOUBLE_EQ(*m.tpot_ms, 10);  // 90 / 9
}

TEST(DeriveRequest, ServerSideBreakdownAndOwnItlPercentile) {
  RequestRecord r = Rec(7, 0, 0, {{10}, {20}, {50}, {60}}, 60);
  r.t_server_scheduled = MillisToNanos(3);
  r.t_prefill_done = MillisToNanos(9);
  RequestMetrics m = DeriveRequest(r);
  EXPECT_DOUBLE_EQ(*m.queue_ms, 3);
  EXPECT_DOUBLE_EQ(*m.prefill_ms, 6);
  // ITL samples [10, 30, 10]: sorted [10, 10, 30]; p50 = 10, p90 = 10 + 0.8 * 20 = 26.
  EXPECT_DOUBLE_EQ(*RequestItlPercentile(m, 50), 10);
  EXPECT_DOUBLE_EQ(*RequestItlPercentile(m, 90), 26);
  EXPECT_DOUBLE_EQ(*m.itl_p99_ms, 10 + 0.98 * 20);
}

TEST(DeriveRequest, IntoReusedMetricsEqualsFresh) {
  // One RequestMetrics reused across records that define different fields: nothing may
  // leak from one record into the next.
  RequestRecord server = Rec(7, 0, 1, {{5, 1, true}, {20}, {35, 3}, {36}}, 40);
  server.t_server_scheduled = MillisToNanos(2);
  server.t_prefill_done = MillisToNanos(4);
  const std::vector<RequestRecord> records = {
      server, Rec(8, 0, 0, {}, 40), Rec(9, 0, 0, {{25}}, 26), Rec(10, 5, -1, {{30}, {31}}, 31),
      server, Rec(11, 0, 1, {{101}, {111}, {131, 2}}, 132)};
  RequestMetrics out;
  for (const RequestRecord& r : records) {
    DeriveRequestInto(r, DeriveOptions{}, out);
    const RequestMetrics fresh = DeriveRequest(r);
    SCOPED_TRACE(r.id);
    EXPECT_EQ(out.output_tokens, fresh.output_tokens);
    EXPECT_EQ(out.chunk_tokens, fresh.chunk_tokens);
    EXPECT_EQ(out.schedule_lag_ms, fresh.schedule_lag_ms);
    EXPECT_EQ(out.ttft_ms, fresh.ttft_ms);
    EXPECT_EQ(out.ttft_incl_queue_ms, fresh.ttft_incl_queue_ms);
    EXPECT_EQ(out.ttft_visible_ms, fresh.ttft_visible_ms);
    EXPECT_EQ(out.e2e_ms, fresh.e2e_ms);
    EXPECT_EQ(out.e2e_incl_queue_ms, fresh.e2e_incl_queue_ms);
    EXPECT_EQ(out.stream_close_ms, fresh.stream_close_ms);
    EXPECT_EQ(out.tpot_ms, fresh.tpot_ms);
    EXPECT_EQ(out.queue_ms, fresh.queue_ms);
    EXPECT_EQ(out.prefill_ms, fresh.prefill_ms);
    EXPECT_EQ(out.itl_ms, fresh.itl_ms);
    EXPECT_EQ(out.inter_chunk_ms, fresh.inter_chunk_ms);
    EXPECT_EQ(out.itl_p99_ms, fresh.itl_p99_ms);
    EXPECT_EQ(out.has_reasoning, fresh.has_reasoning);
  }
}

}  // namespace
}  // namespace infereng::metrics
