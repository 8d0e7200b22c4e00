// The fast chunk path must read exactly what the full parse reads, and decline everything
// else: each test compares InterpretData (fast path first) with InterpretDataFull.
#include "client/fast_chunk.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

void ExpectSame(const ChunkInfo& a, const ChunkInfo& b, std::string_view payload) {
  SCOPED_TRACE(std::string(payload));
  EXPECT_EQ(a.done, b.done);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.reasoning, b.reasoning);
  EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens);
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
  EXPECT_EQ(a.usage.cached_tokens, b.usage.cached_tokens);
  EXPECT_EQ(a.timings.present(), b.timings.present());
  EXPECT_EQ(a.timings.prefill_ms, b.timings.prefill_ms);
  EXPECT_EQ(a.timings.malformed, b.timings.malformed);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_message, b.error_message);
}

// Whether the fast path took `payload`; when it did, its result must equal the full parse's
// (and the full parse must accept it); when it did not, InterpretData must still equal it.
bool Fast(Dialect d, std::string_view payload) {
  ChunkInfo fast;
  const bool took = TryFastOpenAiChunk(d, payload, fast);
  Result<ChunkInfo> full = InterpretDataFull(d, payload);
  Result<ChunkInfo> both = InterpretData(d, payload);
  EXPECT_EQ(both.ok(), full.ok()) << payload;
  if (took) {
    EXPECT_TRUE(full.ok()) << "fast path accepted what the full parse rejects: " << payload;
    if (full.ok()) ExpectSame(fast, *full, payload);
  }
  if (both.ok() && full.ok()) ExpectSame(*both, *full, payload);
  return took;
}

constexpr Dialect kChat = Dialect::kOpenAiChat;
constexpr Dialect kText = Dialect::kOpenAiCompletions;

const char* kVllmChat =
    R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733100000,"model":"m",)"
    R"("choices":[{"index":0,"delta":{"content":" hello"},"logprobs":null,"finish_reason":null}]})";

TEST(FastChunk, TakesTheCommonChatAndCompletionsShapes) {
  EXPECT_TRUE(Fast(kChat, kVllmChat));
  ChunkInfo info;
  ASSERT_TRUE(TryFastOpenAiChunk(kChat, kVllmChat, info));
  EXPECT_EQ(info.text, " hello");
  EXPECT_TRUE(info.finish_reason.empty());
  EXPECT_TRUE(Fast(kText, R"({"id":"c","object":"text_completion","choices":[{"index":0,"text":" a",)"
                          R"("logprobs":null,"finish_reason":"length","stop_reason":null}]})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"));
  EXPECT_TRUE(Fast(kChat, R"( { "choices" : [ { "delta" : { "content" : "x" } } ] } )"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"message":{"content":"m"},"delta":{"content":"d"}}]})"));  // delta first, as the adapter
  EXPECT_TRUE(Fast(kChat, R"({"choices":[1,"x",null,{"delta":"not an object"},{"delta":{"content":7}}]})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":{"not":"an array"}})"));
  EXPECT_TRUE(Fast(kChat, R"({})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"content":"é—中文🙂"}}],"x":[1.5,-0.25,0,true,false,{}]})"));
  // The other dialects never take it.
  EXPECT_FALSE(TryFastOpenAiChunk(Dialect::kTgiGenerate, kVllmChat, info));
  EXPECT_FALSE(TryFastOpenAiChunk(Dialect::kLlamaCppCompletion, R"({"content":"a"})", info));
}

TEST(FastChunk, EscapedStringsDecodeOrDecline) {
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"content":"line\nnext \"q\" back\\slash \/ \t\r\b\f"}}]})"));
  ChunkInfo info;
  ASSERT_TRUE(TryFastOpenAiChunk(kChat, R"({"choices":[{"delta":{"content":"a\nb\"c"}}]})", info));
  EXPECT_EQ(info.text, "a\nb\"c");
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"delta":{"content":"caf\u00e9"}}]})"));  // \u: the full parse
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"delta":{"content":"\ud83d\ude00"}}]})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"delta":{"content":"bad \x escape"}}]})"));
  EXPECT_FALSE(Fast(kChat, R"({"cho\u0069ces":[{"delta":{"content":"k"}}]})"));  // escaped key
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"content":"k"},"finish_reason":"st\"op"}]})"));
}

// The 8-bytes-at-a-time string scan: a special byte (quote, escape, control, UTF-8 lead or
// an ill-formed byte) at every offset within and across blocks, in content strings of every
// length around the block size, must read or decline exactly as the full parse does.
TEST(FastChunk, StringScanFindsEverySpecialByteAtEveryOffset) {
  const std::vector<std::string> specials = {"\\n", "\\\"", "\\\\", "\\u00e9", "\xc3\xa9", "\xe2\x9c\x93",
                                             "\xf0\x9f\x98\x80", "\x01", "\x1f", "\x7f", "\xff", "\xc3", "\xed\xa0\x80",
                                             "/", " ", "~"};
  int fast = 0, total = 0;
  for (const std::string& special : specials) {
    for (std::size_t before = 0; before <= 17; ++before) {
      for (std::size_t after : {0u, 1u, 7u, 8u, 9u}) {
        const std::string text = std::string(before, 'a') + special + std::string(after, 'b');
        const std::string payload = R"({"id":"x","choices":[{"index":0,"delta":{"content":")" + text +
                                    R"("},"finish_reason":null}]})";
        fast += Fast(kChat, payload) ? 1 : 0;
        ++total;
      }
    }
  }
  EXPECT_GT(fast, total / 2);  // the well-formed ones took the fast path
  EXPECT_LT(fast, total);      // the \u, control and ill-formed ones declined
}

TEST(FastChunk, ReasoningAndToolCalls) {
  ChunkInfo info;
  ASSERT_TRUE(TryFastOpenAiChunk(kChat, R"({"choices":[{"delta":{"reasoning_content":"think"}}]})", info));
  EXPECT_EQ(info.reasoning, "think");
  EXPECT_TRUE(info.reasoning_only());
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"reasoning":"r","reasoning_content":"rc","content":"c"}}]})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",)"
                          R"("function":{"name":"get","arguments":"{\"city\": \"Paris\"}"}}]},"finish_reason":null}]})"));
  ChunkInfo tool;
  ASSERT_TRUE(TryFastOpenAiChunk(kChat, R"({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]})", tool));
  EXPECT_FALSE(tool.has_output());  // as the full parse: tool-call deltas carry no text
}

TEST(FastChunk, UsageChunks) {
  ChunkInfo info;
  const char* usage_only = R"({"id":"x","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":64,"total_tokens":72,)"
                           R"("prompt_tokens_details":{"cached_tokens":5}}})";
  ASSERT_TRUE(TryFastOpenAiChunk(kChat, usage_only, info));
  EXPECT_EQ(info.usage.prompt_tokens, 8);
  EXPECT_EQ(info.usage.completion_tokens, 64);
  EXPECT_EQ(info.usage.cached_tokens, 5);
  EXPECT_TRUE(Fast(kChat, usage_only));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[{"delta":{"content":"t"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}})"));
  EXPECT_TRUE(Fast(kText, R"({"choices":[{"text":"t"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}})"));
  EXPECT_TRUE(Fast(kChat, R"({"choices":[],"usage":null,"timings":null})"));
  EXPECT_TRUE(Fast(kChat, R"({"usage":{"prompt_tokens":null,"completion_tokens":2,"prompt_tokens_details":null}})"));
  EXPECT_TRUE(Fast(kChat, R"({"usage":{"completion_tokens":99999999999999}})"));  // clamped as IntAt
  EXPECT_FALSE(Fast(kChat, R"({"usage":{"completion_tokens":2.0}})"));
  EXPECT_FALSE(Fast(kChat, R"({"usage":{"completion_tokens":-1}})"));
  EXPECT_FALSE(Fast(kChat, R"({"usage":{"completion_tokens":"2"}})"));
  EXPECT_FALSE(Fast(kChat, R"({"usage":{"completion_tokens":1,"completion_tokens":2}})"));
  EXPECT_FALSE(Fast(kChat, R"({"usage":{"completion_tokens":1},"usage":null})"));
}

TEST(FastChunk, DeclinesErrorsTimingsDuplicatesAndBadJson) {
  EXPECT_FALSE(Fast(kChat, R"({"error":{"message":"boom","type":"server_error"}})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[],"error":null})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[],"timings":{"prompt_ms":1.5,"predicted_ms":2}})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"delta":{"content":"a"}}],"choices":[]})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"delta":{"content":"a","content":"b"}}]})"));
  EXPECT_FALSE(Fast(kChat, R"({"choices":[{"finish_reason":"a","finish_reason":null}]})"));
  for (const char* bad : {R"({"choices":[]} x)", R"({"choices":[],})", R"({"a":01})", R"({"a":1e5})", R"({"a":.5})",
                          R"({"a":1.})", R"({"a":-})", R"({"a":tru})", R"({"a":nul})", R"({"a" 1})", R"([1])",
                          "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
                          "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xe2\x82\"}", R"({"a":1.000000000000000000001})",
                          ""}) {
    EXPECT_FALSE(Fast(kChat, bad)) << bad;
  }
  EXPECT_FALSE(Fast(kChat, "{\"a\":" + std::string(40, '[') + "1" + std::string(40, ']') + "}"));  // too deep
  EXPECT_TRUE(Fast(kChat, "{\"a\":" + std::string(20, '[') + "1" + std::string(20, ']') + "}"));
  // Every strict prefix of a real chunk is incomplete JSON: declined, and an error in full.
  const std::string chunk = kVllmChat;
  for (std::size_t n = 0; n < chunk.size(); ++n) {
    EXPECT_FALSE(Fast(kChat, std::string_view(chunk).substr(0, n))) << n;
  }
}

// Every event of every captured llama.cpp stream: same meaning through either path.
TEST(FastChunk, LlamaCppFixturesAgreeWithTheFullParse) {
  int taken = 0, events = 0;
  for (auto [file, dialect] : {std::pair{"v1_chat_stream_usage.txt", kChat}, {"v1_chat_stream_no_usage_opt.txt", kChat},
                               {"v1_completions_stream.txt", kText}, {"err_ctx_exceeded_v1_chat_stream.txt", kChat},
                               {"err_ctx_exceeded_v1_completions_stream.txt", kText}}) {
    SseParser parser;
    std::vector<SseEvent> out;
    ASSERT_TRUE(parser.Feed(testing::LoadCapture(file).body, out).ok()) << file;
    ASSERT_TRUE(parser.Finish(out).ok()) << file;
    for (const SseEvent& e : out) {
      if (e.data == "[DONE]" || e.is_error_field) continue;
      ++events;
      taken += Fast(dialect, e.data);
    }
  }
  EXPECT_GT(events, 20);
  EXPECT_GT(taken, events / 2);  // the content chunks; the last (timings) and errors decline
}

}  // namespace
}  // namespace infereng::client
