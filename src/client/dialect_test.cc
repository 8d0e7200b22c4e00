#include "client/dialect.h"

#include <numeric>

#include <gtest/gtest.h>

#include "client/test_fixture.h"

namespace infereng::client {
namespace {

using metrics::TokenSource;

struct StreamResult {
  std::vector<ChunkInfo> infos;
  StreamTokenCounter counter;
  TokenSource source = TokenSource::kClientCount;
  bool done = false;
  std::string finish;
  int errors = 0;
};

StreamResult Interpret(Dialect dialect, std::string_view body) {
  StreamResult r;
  SseParser parser;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser.Feed(body, events).ok());
  EXPECT_TRUE(parser.Finish(events).ok());
  Nanos t = 0;
  for (const SseEvent& e : events) {
    auto info = InterpretEvent(dialect, e);
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) continue;
    r.counter.On(t += 10, *info);
    r.done |= info->done;
    if (!info->finish_reason.empty()) r.finish = info->finish_reason;
    r.errors += info->error;
    r.infos.push_back(*info);
  }
  r.source = r.counter.Finish();
  return r;
}

int64_t SumTokens(const StreamTokenCounter& c) {
  int64_t sum = 0;
  for (const auto& ch : c.chunks()) sum += ch.tokens;
  return sum;
}

TEST(Dialect, LlamaCppChatFixtureFinalUsageOnLastChunk) {
  auto r = Interpret(Dialect::kOpenAiChat, testing::LoadCapture("v1_chat_stream_usage.txt").body);
  EXPECT_EQ(r.counter.chunks().size(), 12u);  // finish chunk (delta:{}) and [DONE] carry no output
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.finish, "length");
  EXPECT_EQ(r.source, TokenSource::kUsageFinal);
  EXPECT_EQ(r.counter.last_usage().prompt_tokens, 55);
  EXPECT_EQ(r.counter.last_usage().completion_tokens, 12);
  EXPECT_EQ(SumTokens(r.counter), 12);
  EXPECT_EQ(r.infos[0].text, "Supp");
}

// llama.cpp's `timings` on the last chunk (and in a non-streamed body): prompt_ms is the
// prefill, predicted_ms the decode; it reports no queue time, so that stays -1 (not 0).
TEST(Dialect, LlamaCppTimingsGiveServerPhases) {
  auto r = Interpret(Dialect::kOpenAiChat, testing::LoadCapture("v1_chat_stream_usage.txt").body);
  ASSERT_GE(r.infos.size(), 2u);
  const ServerTimings& t = r.infos[r.infos.size() - 2].timings;  // the chunk before [DONE]
  EXPECT_TRUE(t.present());
  EXPECT_DOUBLE_EQ(t.prefill_ms, 112.074);
  EXPECT_DOUBLE_EQ(t.decode_ms, 181.195);
  EXPECT_EQ(t.queue_ms, -1);
  EXPECT_FALSE(t.malformed);
  EXPECT_FALSE(r.infos[0].timings.present());  // content chunks carry none

  auto body = InterpretData(Dialect::kOpenAiChat, testing::LoadCapture("v1_chat_nonstream.txt").body);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_DOUBLE_EQ(body->timings.prefill_ms, 58.502);
  EXPECT_DOUBLE_EQ(body->timings.decode_ms, 172.025);

  auto native = Interpret(Dialect::kLlamaCppCompletion, testing::LoadCapture("native_completion_stream.txt").body);
  EXPECT_DOUBLE_EQ(native.infos.back().timings.prefill_ms, 14.49);
  EXPECT_DOUBLE_EQ(native.infos.back().timings.decode_ms, 109.875);
}

// The embedded engine's object adds queue_ms; an engine that sends none leaves all phases
// unknown; a broken object is ignored whole and marked malformed, never a crash or zeros.
TEST(Dialect, TimingsQueueAbsentAndMalformed) {
  auto ours = InterpretData(Dialect::kOpenAiChat,
                            R"({"choices":[],"timings":{"queue_ms":4.5,"prompt_n":3,"prompt_ms":1.25,"cache_n":0,)"
                            R"("predicted_n":2,"predicted_ms":0}})");
  ASSERT_TRUE(ours.ok());
  EXPECT_DOUBLE_EQ(ours->timings.queue_ms, 4.5);
  EXPECT_DOUBLE_EQ(ours->timings.prefill_ms, 1.25);
  EXPECT_DOUBLE_EQ(ours->timings.decode_ms, 0);
  auto null_field = InterpretData(Dialect::kOpenAiChat, R"({"choices":[],"timings":{"prompt_ms":1,"predicted_ms":null}})");
  ASSERT_TRUE(null_field.ok());
  EXPECT_DOUBLE_EQ(null_field->timings.prefill_ms, 1);  // a null phase: not reported
  EXPECT_EQ(null_field->timings.decode_ms, -1);
  EXPECT_FALSE(null_field->timings.malformed);

  for (const char* none : {R"({"choices":[]})", R"({"choices":[],"timings":null})", R"({"choices":[],"timings":{}})",
                           R"({"choices":[],"timings":{"prompt_n":3}})"}) {
    auto r = InterpretData(Dialect::kOpenAiChat, none);
    ASSERT_TRUE(r.ok()) << none;
    EXPECT_FALSE(r->timings.present()) << none;
    EXPECT_FALSE(r->timings.malformed) << none;
  }
  for (const char* bad : {R"({"choices":[],"timings":"fast"})", R"({"choices":[],"timings":[1,2]})",
                          R"({"choices":[],"timings":{"prompt_ms":-3}})",
                          R"({"choices":[],"timings":{"prompt_ms":"12"}})",
                          R"({"choices":[],"timings":{"queue_ms":1e300,"prompt_ms":1}})"}) {
    auto r = InterpretData(Dialect::kOpenAiChat, bad);
    ASSERT_TRUE(r.ok()) << bad;  // the chunk itself is still read
    EXPECT_TRUE(r->timings.malformed) << bad;
    EXPECT_FALSE(r->timings.present()) << bad;
  }
}

TEST(Dialect, LlamaCppChatWithoutStreamOptionsStillSendsUsage) {
  auto r = Interpret(Dialect::kOpenAiChat, testing::LoadCapture("v1_chat_stream_no_usage_opt.txt").body);
  EXPECT_EQ(r.counter.chunks().size(), 4u);
  EXPECT_EQ(r.counter.last_usage().completion_tokens, 4);
  EXPECT_EQ(r.counter.last_usage().prompt_tokens, 29);
}

TEST(Dialect, CompletionsFixtureEmptyTextChunkIsNotOutput) {
  auto r = Interpret(Dialect::kOpenAiCompletions, testing::LoadCapture("v1_completions_stream.txt").body);
  EXPECT_EQ(r.counter.chunks().size(), 12u);
  ASSERT_GE(r.infos.size(), 2u);
  const ChunkInfo& finish = r.infos[r.infos.size() - 2];
  EXPECT_FALSE(finish.has_output());  // {"text":"", "finish_reason":"length", usage}
  EXPECT_EQ(finish.finish_reason, "length");
  EXPECT_EQ(finish.usage.completion_tokens, 12);
  EXPECT_TRUE(r.done);
}

TEST(Dialect, NativeLlamaCppStreamHasNoDoneAndContinuousCounts) {
  auto r = Interpret(Dialect::kLlamaCppCompletion, testing::LoadCapture("native_completion_stream.txt").body);
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.finish, "limit");  // stop:true, stop_type "limit"
  EXPECT_EQ(r.counter.chunks().size(), 8u);
  EXPECT_EQ(r.source, TokenSource::kUsageContinuous);  // tokens_predicted grows 1 per chunk
  EXPECT_EQ(SumTokens(r.counter), 8);
  EXPECT_EQ(r.counter.last_usage().prompt_tokens, 6);
}

TEST(Dialect, LegacyErrorLineFixturesAreStreamErrors) {
  for (const char* name : {"err_ctx_exceeded_native_stream.txt", "err_ctx_exceeded_v1_chat_stream.txt",
                           "err_ctx_exceeded_v1_completions_stream.txt"}) {
    auto r = Interpret(Dialect::kOpenAiChat, testing::LoadCapture(name).body);
    EXPECT_EQ(r.errors, 1) << name;
    ASSERT_FALSE(r.infos.empty()) << name;
    EXPECT_EQ(r.infos[0].error_message,
              "invalid_request_error: the request exceeds the available context size. try increasing the "
              "context size or enable context shift");
    EXPECT_TRUE(r.counter.chunks().empty());
  }
}

TEST(Dialect, ErrorLineThatIsNotJsonIsStillAnError) {
  auto info = InterpretData(Dialect::kOpenAiChat, "something broke", /*is_error_field=*/true);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->error);
  EXPECT_EQ(info->error_message, "something broke");
}

TEST(Dialect, NamedErrorEventIsAnError) {
  SseEvent e;
  e.event = "error";
  e.data = R"({"message":"overloaded","type":"overloaded_error"})";
  auto info = InterpretEvent(Dialect::kOpenAiChat, e);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->error);
  EXPECT_EQ(info->error_message, "overloaded_error: overloaded");
}

TEST(Dialect, ErrorObjectInsideA200Stream) {
  auto vllm = InterpretData(Dialect::kOpenAiChat,
                            R"({"error":{"message":"The request queue is full.","type":"ServiceUnavailable","code":503}})");
  ASSERT_TRUE(vllm.ok());
  EXPECT_TRUE(vllm->error);
  EXPECT_EQ(vllm->error_message, "ServiceUnavailable: The request queue is full.");
  auto tgi = InterpretData(Dialect::kTgiGenerate, R"({"error":"Model is overloaded","error_type":"overloaded"})");
  ASSERT_TRUE(tgi.ok());
  EXPECT_TRUE(tgi->error);
  EXPECT_EQ(tgi->error_message, "overloaded: Model is overloaded");
}

TEST(Dialect, RoleOnlyEmptyAndUsageOnlyChunksAreNotOutput) {
  const char* role = R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})";
  const char* null_content = R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]})";
  const char* usage_only = R"({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})";
  for (const char* d : {role, null_content, usage_only}) {
    auto info = InterpretData(Dialect::kOpenAiChat, d);
    ASSERT_TRUE(info.ok()) << d;
    EXPECT_FALSE(info->has_output()) << d;
  }
  auto u = InterpretData(Dialect::kOpenAiChat, usage_only);
  EXPECT_EQ(u->usage.completion_tokens, 5);
}

TEST(Dialect, ZeroedUsageIsIgnored) {
  auto info = InterpretData(Dialect::kOpenAiCompletions,
                            R"({"choices":[{"text":"hi","finish_reason":null}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}})");
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->usage.present());
  EXPECT_TRUE(info->has_output());
}

TEST(Dialect, ContinuousUsageGivesTokensPerChunk) {
  // vLLM continuous_usage_stats with --stream-interval: several tokens per event.
  std::string body =
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":0}}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":1}}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"bcd\"}}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"ef\"},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":6}}\n\n"
      "data: [DONE]\n\n";
  auto r = Interpret(Dialect::kOpenAiChat, body);
  ASSERT_EQ(r.counter.chunks().size(), 3u);
  EXPECT_EQ(r.source, TokenSource::kUsageContinuous);
  EXPECT_EQ(r.counter.chunks()[0].tokens, 1);
  EXPECT_EQ(r.counter.chunks()[1].tokens, 3);
  EXPECT_EQ(r.counter.chunks()[2].tokens, 2);
}

TEST(Dialect, FinalUsageIsSpreadOverChunks) {
  std::string body =
      "data: {\"choices\":[{\"delta\":{\"content\":\"ab\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"cd\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"e\"},\"finish_reason\":\"stop\"}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":7}}\n\n";
  auto r = Interpret(Dialect::kOpenAiChat, body);
  EXPECT_EQ(r.source, TokenSource::kUsageFinal);
  ASSERT_EQ(r.counter.chunks().size(), 3u);
  EXPECT_EQ(SumTokens(r.counter), 7);
  EXPECT_FALSE(r.done);  // [DONE] is optional
  EXPECT_EQ(r.finish, "stop");
}

TEST(Dialect, NoUsageMeansOneTokenPerChunk) {
  std::string body = "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n";
  auto r = Interpret(Dialect::kOpenAiCompletions, body);
  EXPECT_EQ(r.source, TokenSource::kClientCount);
  EXPECT_EQ(SumTokens(r.counter), 2);
}

TEST(Dialect, ReasoningContentIsFlagged) {
  auto a = InterpretData(Dialect::kOpenAiChat, R"({"choices":[{"delta":{"reasoning_content":"think"}}]})");
  auto b = InterpretData(Dialect::kOpenAiChat, R"({"choices":[{"delta":{"reasoning":"hmm"}}]})");
  auto c = InterpretData(Dialect::kOpenAiChat, R"({"choices":[{"delta":{"content":"answer"}}]})");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(a->has_output() && a->reasoning_only());
  EXPECT_TRUE(b->has_output() && b->reasoning_only());
  EXPECT_TRUE(c->has_output() && !c->reasoning_only());
  StreamTokenCounter counter;
  counter.On(1, *a);
  counter.On(2, *c);
  EXPECT_TRUE(counter.chunks()[0].reasoning);
  EXPECT_FALSE(counter.chunks()[1].reasoning);
}

TEST(Dialect, TgiGenerateStreamNoSpaceFramingAndDetails) {
  std::string body =
      ":\n\n"
      "data:{\"index\":1,\"token\":{\"id\":5,\"text\":\"Hel\",\"logprob\":-0.1,\"special\":false},\"generated_text\":null,\"details\":null}\n\n"
      ": keep-alive\n\n"
      "data:{\"index\":2,\"token\":{\"id\":6,\"text\":\"lo\",\"logprob\":-0.1,\"special\":false},\"generated_text\":null,\"details\":null}\n\n"
      "data:{\"index\":3,\"token\":{\"id\":2,\"text\":\"</s>\",\"logprob\":0,\"special\":true},\"generated_text\":\"Hello\","
      "\"details\":{\"finish_reason\":\"eos_token\",\"generated_tokens\":3}}\n\n";
  auto r = Interpret(Dialect::kTgiGenerate, body);
  EXPECT_EQ(r.counter.chunks().size(), 2u);  // the special EOS token carries no visible text
  EXPECT_EQ(r.finish, "eos_token");
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.counter.last_usage().completion_tokens, 3);
}

TEST(Dialect, TgiCompletionsEmptyFinishReasonMeansNone) {
  auto info = InterpretData(Dialect::kOpenAiCompletions, R"({"id":"","choices":[{"text":"x","finish_reason":""}]})");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->finish_reason, "");
}

TEST(Dialect, TrailingWhitespaceBeforeJsonIsTrimmed) {
  auto info = InterpretData(Dialect::kOpenAiChat, "{\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]} \t");
  EXPECT_TRUE(info.ok());
  auto done = InterpretData(Dialect::kOpenAiChat, "[DONE] ");
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->done);
}

TEST(Dialect, GarbageIsAProtocolError) {
  auto a = InterpretData(Dialect::kOpenAiChat, "{\"choices\":[");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kProtocolError);
  EXPECT_NE(a.status().message().find("not JSON"), std::string::npos);
  auto b = InterpretData(Dialect::kOpenAiChat, "[1,2]");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("not a JSON object"), std::string::npos);
}

// Hostile inputs of the kind the chunk fuzzer generates: absurd counts are clamped (no
// signed overflow), deep nesting neither crashes nor recurses without bound.
TEST(Dialect, HostileUsageAndNestingAreSafe) {
  auto huge = InterpretData(Dialect::kOpenAiChat,
                            R"({"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":-5,"completion_tokens":1e300}})");
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->usage.completion_tokens, int64_t{1} << 40);
  EXPECT_EQ(huge->usage.prompt_tokens, -1);
  StreamTokenCounter counter;
  counter.On(1, *huge);
  EXPECT_EQ(counter.Finish(), TokenSource::kUsageContinuous);
  EXPECT_EQ(counter.chunks()[0].tokens, INT32_MAX);  // clamped, never negative

  std::string deep(100000, '[');
  auto nested = InterpretData(Dialect::kOpenAiChat, deep);
  EXPECT_FALSE(nested.ok());
  std::string deep_ok = std::string(20000, '[') + std::string(20000, ']');
  auto closed = InterpretData(Dialect::kTgiGenerate, deep_ok);
  EXPECT_FALSE(closed.ok());  // valid JSON but not an object
}

TEST(Dialect, UsageThatDoesNotGrowFallsBackToFinalCounting) {
  // A server that repeats the same usage on a chunk with text (e.g. a token split over two
  // events) is not a continuous counter: every chunk counts 1, reconciled with the total.
  StreamTokenCounter counter;
  ChunkInfo a;
  a.text = "x";
  a.usage.completion_tokens = 1;
  ChunkInfo b = a;  // same usage, new text
  counter.On(1, a);
  counter.On(2, b);
  EXPECT_EQ(counter.Finish(), TokenSource::kUsageFinal);
  EXPECT_EQ(counter.chunks()[0].tokens, 1);
  EXPECT_EQ(counter.chunks()[1].tokens, 1);
}

TEST(Dialect, NamesRoundTripAndUnknownNameListsValidOnes) {
  for (Dialect d : {Dialect::kOpenAiChat, Dialect::kOpenAiCompletions, Dialect::kTgiGenerate,
                    Dialect::kLlamaCppCompletion}) {
    auto parsed = ParseDialect(TraitsOf(d).name);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, d);
  }
  auto bad = ParseDialect("grpc");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("chat, completions, tgi, llamacpp"), std::string::npos);
  EXPECT_FALSE(TraitsOf(Dialect::kTgiGenerate).sends_done);
}

}  // namespace
}  // namespace infereng::client
