// A reasoning model's stream through the client's one path (SSE parser -> dialect -> token
// counter) into a record, and the metrics derived from it: reasoning token counts from the
// usage's completion_tokens_details (or, without it, from the reasoning chunks) and TTFT
// visible at the first answer text.
//
// The input, testdata/hand-written/vllm-reasoning-chat.sse, is HAND-WRITTEN after vLLM's
// "Reasoning Outputs" documentation and OpenAI's usage schema; it is NOT a capture (none
// exists in the project's fixtures). Its README says what each event stands for.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "client/dialect.h"
#include "client/sse_parser.h"
#include "metrics/derive.h"
#include "testing/paths.h"

namespace infereng::client {
namespace {

std::vector<SseEvent> HandWrittenVllmStream() {
  std::ifstream in(testing::SourceDir() + "/src/client/testdata/hand-written/vllm-reasoning-chat.sse");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty());
  SseParser parser;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser.Feed(ss.str(), events).ok());
  EXPECT_TRUE(parser.Finish(events).ok());
  return events;
}

// Event i arrives at i ms; the record is sent at 0.
metrics::RequestRecord Record(const std::vector<SseEvent>& events, bool keep_usage) {
  StreamTokenCounter counter;
  for (size_t i = 0; i < events.size(); ++i) {
    Result<ChunkInfo> info = InterpretEvent(Dialect::kOpenAiChat, events[i]);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) continue;
    if (!keep_usage) info->usage = Usage{};
    counter.On(MillisToNanos(static_cast<double>(i)), *info);
  }
  metrics::RequestRecord r;
  r.t_sched = r.t_send = 0;
  r.token_source = counter.Finish();
  r.chunks = counter.chunks();
  r.completion_tokens = counter.last_usage().completion_tokens;
  r.reasoning_tokens = counter.last_usage().reasoning_tokens;
  r.t_end = MillisToNanos(static_cast<double>(events.size()));
  return r;
}

TEST(ReasoningStream, HandWrittenVllmStreamGivesUsageReasoningTokensAndVisibleTtft) {
  const std::vector<SseEvent> events = HandWrittenVllmStream();
  ASSERT_EQ(events.size(), 15u);  // role, 6 reasoning, 1 mixed, 4 content, finish, usage, [DONE]
  const metrics::RequestRecord r = Record(events, true);
  EXPECT_EQ(r.token_source, metrics::TokenSource::kUsageFinal);
  EXPECT_EQ(r.completion_tokens, 13);
  EXPECT_EQ(r.reasoning_tokens, 8);
  ASSERT_EQ(r.chunks.size(), 11u);  // the role, finish and usage events carry no output
  for (size_t i = 0; i < r.chunks.size(); ++i) EXPECT_EQ(r.chunks[i].reasoning, i < 6) << i;  // mixed: visible

  const metrics::RequestMetrics m = metrics::DeriveRequest(r);
  EXPECT_TRUE(m.has_reasoning);
  EXPECT_TRUE(m.reasoning_from_usage);
  EXPECT_EQ(m.reasoning_tokens, 8);
  EXPECT_EQ(m.visible_output_tokens, 5);
  EXPECT_DOUBLE_EQ(*m.ttft_ms, 1);          // the first reasoning delta (event 1)
  EXPECT_DOUBLE_EQ(*m.ttft_visible_ms, 7);  // the delta where the answer starts (event 7)
}

// Without completion_tokens_details (or without usage at all) the count comes from the
// stream: the reasoning-only chunks, one token each here (no usage to spread).
TEST(ReasoningStream, WithoutUsageTheReasoningChunksAreCounted) {
  const metrics::RequestRecord r = Record(HandWrittenVllmStream(), false);
  EXPECT_EQ(r.token_source, metrics::TokenSource::kClientCount);
  EXPECT_EQ(r.reasoning_tokens, -1);
  const metrics::RequestMetrics m = metrics::DeriveRequest(r);
  EXPECT_FALSE(m.reasoning_from_usage);
  EXPECT_EQ(m.reasoning_tokens, 6);
  EXPECT_EQ(m.visible_output_tokens, 5);
}

// Newer vLLM and OpenRouter name the field `reasoning`; both names are reasoning, and the
// usage details are read whichever path (fast or full parse) the event takes.
TEST(ReasoningStream, DeltaReasoningAndUsageDetailsAreRead) {
  Result<ChunkInfo> a = InterpretData(
      Dialect::kOpenAiChat, R"({"id":"x","choices":[{"index":0,"delta":{"reasoning":"Hmm"},"finish_reason":null}]})");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->reasoning_only());
  EXPECT_EQ(a->reasoning, "Hmm");
  Result<ChunkInfo> u = InterpretData(Dialect::kOpenAiChat,
                                      R"({"id":"x","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":40,)"
                                      R"("completion_tokens_details":{"reasoning_tokens":31}}})");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->usage.completion_tokens, 40);
  EXPECT_EQ(u->usage.reasoning_tokens, 31);
  Result<ChunkInfo> n = InterpretData(Dialect::kOpenAiChat,
                                      R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":40,)"
                                      R"("completion_tokens_details":null}})");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->usage.reasoning_tokens, -1);
}

}  // namespace
}  // namespace infereng::client
