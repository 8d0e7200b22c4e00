#include "client/sse_parser.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

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


// ---- the callback (hot path) API ----------------------------------------------------------

// Global allocation counter for the no-allocation test (counts only while armed, this thread).
thread_local bool g_count_allocs = false;
thread_local std::size_t g_allocs = 0;

TEST(SseParser, OneEventPerReadIsSeenInPlaceWithoutCopy) {
  SseParser parser;
  const std::string read = "data: {\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}\n\n";
  int events = 0;
  ASSERT_TRUE(parser.Feed(read, [&](const SseEventView& e) {
    ++events;
    EXPECT_EQ(e.data, "{\"choices\":[{\"delta\":{\"content\":\" hi\"}}]}");
    // The view points into the read's own bytes: nothing was copied.
    EXPECT_GE(e.data.data(), read.data());
    EXPECT_LE(e.data.data() + e.data.size(), read.data() + read.size());
    return true;
  }).ok());
  EXPECT_EQ(events, 1);
}

TEST(SseParser, DataWaitingForItsBlankLineSurvivesTheNextRead) {
  SseParser parser;
  std::vector<std::string> got;
  auto sink = [&](const SseEventView& e) {
    got.emplace_back(e.data);
    return true;
  };
  {
    std::string first = "data: one\n";  // the blank line comes with the next read
    ASSERT_TRUE(parser.Feed(first, sink).ok());
    first.assign(first.size(), 'X');  // the caller reuses its read buffer
  }
  ASSERT_TRUE(parser.Feed("\ndata: tw", sink).ok());
  ASSERT_TRUE(parser.Feed("o\ndata: three\n\n", sink).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], "one");
  EXPECT_EQ(got[1], "two\nthree");
}

TEST(SseParser, ReturningFalseStopsTheParseAndLaterFeedsFail) {
  SseParser parser;
  int seen = 0;
  auto stop_at_first = [&](const SseEventView&) {
    ++seen;
    return false;
  };
  EXPECT_TRUE(parser.Feed("data: a\n\ndata: b\n\n", stop_at_first).ok());
  EXPECT_EQ(seen, 1);  // b was never delivered
  EXPECT_FALSE(parser.Feed("data: c\n\n", stop_at_first).ok());
  EXPECT_EQ(seen, 1);
}

TEST(SseParser, CallbackAndVectorApisAgreeOnEveryFixtureSplit) {
  auto cap = testing::LoadCapture("v1_chat_stream_usage.txt");
  ASSERT_FALSE(cap.body.empty());
  const auto whole = ParseAll(cap.body);
  for (std::size_t step : {1u, 7u, 64u, 4096u}) {
    SseParser parser;
    std::vector<SseEvent> got;
    auto sink = [&](const SseEventView& e) {
      got.push_back(SseEvent{std::string(e.event), std::string(e.data), std::string(e.id), e.is_error_field});
      return true;
    };
    for (std::size_t i = 0; i < cap.body.size(); i += step) {
      std::string read = cap.body.substr(i, step);  // each read in its own, short-lived buffer
      ASSERT_TRUE(parser.Feed(read, sink).ok());
    }
    ASSERT_TRUE(parser.Finish(sink).ok());
    ASSERT_EQ(got.size(), whole.size()) << "step " << step;
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, whole[i].data) << "step " << step << " event " << i;
  }
}

TEST(SseParser, NoAllocationPerEventOnceWarm) {
  SseParser parser;
  const std::string token = "data: {\"choices\":[{\"delta\":{\"content\":\" hello\"}}]}\n\n";
  // Split events too (a line across two reads, the blank line in the next read): the
  // parser's own buffers grow once, then keep their capacity.
  const std::string split_a = "data: {\"choices\":[{\"delta\":{\"con";
  const std::string split_b = "tent\":\" hello\"}}]}\n";
  const std::string split_c = "\n";
  std::size_t bytes = 0;
  auto sink = [&](const SseEventView& e) {
    bytes += e.data.size();
    return true;
  };
  auto round = [&] {
    for (const std::string* read : {&token, &split_a, &split_b, &split_c, &token}) {
      ASSERT_TRUE(parser.Feed(*read, sink).ok());
    }
  };
  round();  // warm-up: the buffers grow here
  g_allocs = 0;
  g_count_allocs = true;
  for (int i = 0; i < 1000; ++i) round();
  g_count_allocs = false;
  EXPECT_EQ(g_allocs, 0u);
  EXPECT_EQ(bytes, 3003u * 44u);
}

}  // namespace
}  // namespace infereng::client

// Counts allocations made while a test arms g_count_allocs (this test binary only). Under
// AddressSanitizer the global operator new must stay the sanitizer's (replacing it loses the
// new/delete mismatch checks, and GCC rejects the malloc/free pair at -O1), so there the count
// comes from the sanitizer's allocation hook instead, which sees every allocation too.
#if defined(__SANITIZE_ADDRESS__)
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void*, std::size_t),
                                                       void (*)(const volatile void*));
namespace {
void CountMalloc(const volatile void*, std::size_t) {
  if (infereng::client::g_count_allocs) ++infereng::client::g_allocs;
}
void IgnoreFree(const volatile void*) {}
[[maybe_unused]] const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(&CountMalloc, &IgnoreFree);
}  // namespace
#else
void* operator new(std::size_t n) {
  if (infereng::client::g_count_allocs) ++infereng::client::g_allocs;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif
