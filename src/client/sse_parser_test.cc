#include "client/sse_parser.h"

#include <gtest/gtest.h>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

std::vector<SseEvent> ParseAll(std::string_view text, std::size_t step = 0) {
  SseParser parser;
  std::vector<SseEvent> out;
  if (step == 0) step = text.size() == 0 ? 1 : text.size();
  for (std::size_t i = 0; i < text.size(); i += step) {
    EXPECT_TRUE(parser.Feed(text.substr(i, step), out).ok());
  }
  EXPECT_TRUE(parser.Finish(out).ok());
  return out;
}

TEST(SseParser, LlamaCppChatStreamFixtureWholeAndByteByByte) {
  auto cap = testing::LoadCapture("v1_chat_stream_usage.txt");
  ASSERT_FALSE(cap.body.empty());
  auto whole = ParseAll(cap.body);
  ASSERT_EQ(whole.size(), 14u);  // 12 content chunks, the finish chunk, [DONE]
  EXPECT_EQ(whole.back().data, "[DONE]");
  EXPECT_TRUE(whole[0].data.starts_with("{\"choices\""));
  auto bytewise = ParseAll(cap.body, 1);
  ASSERT_EQ(bytewise.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) EXPECT_EQ(bytewise[i].data, whole[i].data) << i;
}

TEST(SseParser, DataWithAndWithoutSpace) {
  auto ev = ParseAll("data:{\"a\":1}\n\ndata: {\"b\":2}\n\ndata:  two spaces\n\n");
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].data, "{\"a\":1}");  // TGI framing: no space
  EXPECT_EQ(ev[1].data, "{\"b\":2}");
  EXPECT_EQ(ev[2].data, " two spaces");  // only one space is removed
}

TEST(SseParser, CommentsAndKeepAlivesAreSkipped) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed(":\n\n: keep-alive\n\ndata:x\n\n:\n\n", out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
  EXPECT_EQ(parser.comments_seen(), 3u);
}

TEST(SseParser, EventIdRetryFields) {
  auto ev = ParseAll("event: message\nid: 7\nretry: 1000\ndata: x\n\nevent: ping\n\nid: 9\ndata: y\n\n");
  ASSERT_EQ(ev.size(), 2u);  // an event without data is not dispatched
  EXPECT_EQ(ev[0].event, "message");
  EXPECT_EQ(ev[0].id, "7");
  EXPECT_EQ(ev[0].data, "x");
  EXPECT_EQ(ev[1].event, "");
  EXPECT_EQ(ev[1].id, "9");
}

TEST(SseParser, CrLfAndLoneCrLineEndingsSplitAnywhere) {
  const std::string crlf = "data: a\r\n\r\ndata: b\r\ndata: c\r\n\r\ndata: d\r\rdata: e\n\n";
  for (std::size_t step = 1; step <= crlf.size(); ++step) {
    auto ev = ParseAll(crlf, step);
    ASSERT_EQ(ev.size(), 4u) << "step " << step;
    EXPECT_EQ(ev[0].data, "a");
    EXPECT_EQ(ev[1].data, "b\nc");  // multi-line data joined with \n
    EXPECT_EQ(ev[2].data, "d");
    EXPECT_EQ(ev[3].data, "e");
  }
}

TEST(SseParser, TrailingSpaceIsKeptForTheDialectToTrim) {
  auto ev = ParseAll("data: {\"role\":\"assistant\"} \n\n");  // TensorRT-LLM role chunk
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "{\"role\":\"assistant\"} ");
}

TEST(SseParser, LegacyLlamaCppErrorFieldFromFixture) {
  auto cap = testing::LoadCapture("err_ctx_exceeded_v1_chat_stream.txt");
  auto ev = ParseAll(cap.body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_TRUE(ev[0].is_error_field);
  EXPECT_NE(ev[0].data.find("exceeds the available context size"), std::string::npos);
  EXPECT_FALSE(ev[1].is_error_field);
  EXPECT_EQ(ev[1].data, "[DONE]");
}

TEST(SseParser, FinishFlushesAnUnterminatedEvent) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: a\n\ndata: last", out).ok());
  EXPECT_EQ(out.size(), 1u);
  ASSERT_TRUE(parser.Finish(out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].data, "last");
}

TEST(SseParser, UnknownFieldsAndBareLinesAreIgnoredButCounted) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("foo: bar\n{\"raw\":1}\ndata: x\n\n", out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(parser.ignored_lines(), 2u);
}

TEST(SseParser, LineLimitIsAProtocolErrorAndSticky) {
  SseParser parser(SseParserOptions{.max_line_bytes = 16, .max_event_bytes = 1024});
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: 0123456789", out).ok());
  Status st = parser.Feed("abcdef", out);  // the unterminated line crosses 16 bytes
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Status::Code::kProtocolError);
  EXPECT_NE(st.message().find("longer than 16"), std::string::npos);
  EXPECT_FALSE(parser.Feed("\n\n", out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(SseParser, EventLimitIsAProtocolError) {
  SseParser parser(SseParserOptions{.max_line_bytes = 64, .max_event_bytes = 20});
  std::vector<SseEvent> out;
  Status st = parser.Feed("data: 0123456789\ndata: 0123456789\n\n", out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("larger than 20"), std::string::npos);
}

}  // namespace
}  // namespace infereng::client
