#include "serve/request_parser.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/faults.h"
#include "serve/text_model.h"

namespace infereng::serve {
namespace {

const ParseLimits kLimits{.model_name = "m", .max_model_len = 100, .default_max_tokens = 16};

ParseOutcome Chat(const std::string& body) { return ParseCompletionRequest(body, Endpoint::kChat, kLimits); }

TEST(RequestParser, ChatDefaultsToTheRestOfTheContext) {
  auto r = Chat(R"({"model":"m","messages":[{"role":"user","content":"a b c"}]})");
  ASSERT_FALSE(r.error) << r.error->message;
  EXPECT_EQ(r.params.prompt_ids.size(), 3u);
  EXPECT_EQ(r.params.max_tokens, 97);
  EXPECT_FALSE(r.params.stream);
}

TEST(RequestParser, ReadsEveryKnob) {
  auto r = Chat(R"({"messages":[{"role":"system","content":[{"type":"text","text":"x y"}]},{"role":"user","content":"z"}],
    "max_tokens":5,"min_tokens":2,"ignore_eos":true,"stop":["a","b"],"stream":true,"seed":3,
    "stream_options":{"include_usage":true,"continuous_usage_stats":true},"temperature":0.5})");
  ASSERT_FALSE(r.error) << r.error->message;
  const auto& p = r.params;
  EXPECT_EQ(p.prompt_ids.size(), 3u);
  EXPECT_EQ(p.max_tokens, 5);
  EXPECT_EQ(p.min_tokens, 2);
  EXPECT_TRUE(p.ignore_eos && p.stream && p.include_usage && p.continuous_usage);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(p.seed, 3u);
}

TEST(RequestParser, CompletionsPromptForms) {
  auto ids = ParseCompletionRequest(R"({"prompt":[1,2,3,4],"max_tokens":1})", Endpoint::kCompletions, kLimits);
  ASSERT_FALSE(ids.error);
  EXPECT_EQ(ids.params.prompt_ids, (std::vector<uint32_t>{1, 2, 3, 4}));
  auto one = ParseCompletionRequest(R"({"prompt":["a b"]})", Endpoint::kCompletions, kLimits);
  ASSERT_FALSE(one.error);
  EXPECT_EQ(one.params.max_tokens, 16);
  auto two = ParseCompletionRequest(R"({"prompt":["a","b"]})", Endpoint::kCompletions, kLimits);
  ASSERT_TRUE(two.error);
  EXPECT_EQ(two.error->param, "prompt");
}

struct BadCase {
  const char* body;
  int status;
  const char* param;
  const char* needle;
};

TEST(RequestParser, RejectsWithANamedParameter) {
  const BadCase cases[] = {
      {"", 400, "", "empty"},
      {"[1]", 400, "", "JSON object"},
      {"{\"messages\": [", 400, "", "not valid JSON"},
      {"30e3166666", 400, "", "not valid JSON"},  // number overflow (found by the fuzzer)
      {R"({"messages":"hi"})", 400, "messages", "expected an array"},
      {R"({"messages":[{"content":"x"}]})", 400, "messages", "role"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":2})", 400, "n", "n=1"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{}]})", 400, "tools", "tool"},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})", 400, "logprobs", "log prob"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":"5"})", 400, "max_tokens", "integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", 400, "max_tokens", "at least 1"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1000})", 400, "max_tokens", "context length"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}})", 400,
       "stream_options", "stream=True"},
      {R"({"messages":[{"role":"user","content":"x"}],"min_tokens":9,"max_tokens":3})", 400, "min_tokens", "max_tokens"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":7})", 400, "stop", "string"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", 400, "temperature", "number"},
      {R"({"model":"other","messages":[{"role":"user","content":"x"}]})", 404, "model", "does not exist"},
  };
  for (const BadCase& c : cases) {
    auto r = Chat(c.body);
    ASSERT_TRUE(r.error) << c.body;
    EXPECT_EQ(r.error->http_status, c.status) << c.body;
    EXPECT_EQ(r.error->param, c.param) << c.body;
    EXPECT_NE(r.error->message.find(c.needle), std::string::npos) << c.body << " -> " << r.error->message;
    auto j = nlohmann::json::parse(r.error->ToJson());
    EXPECT_TRUE(j["error"].contains("message") && j["error"].contains("type") && j["error"].contains("param") &&
                j["error"].contains("code"));
  }
}

// fuzz/regressions/http_request/max-tokens-huge: 2^64 parses as a double and once reached a bare
// cast to int64_t (undefined behaviour; UBSan float-cast-overflow).
TEST(RequestParser, IntegersBeyondInt64AreTooLargeNotCast) {
  for (const char* v : {"18446744073709551616", "1e300", "-1e300", "9223372036854775808.0"}) {
    for (const char* key : {"max_tokens", "min_tokens", "seed", "n"}) {
      const std::string body = std::string(R"({"messages":[{"role":"user","content":"x"}],")") + key + "\":" + v + "}";
      auto r = Chat(body);
      ASSERT_TRUE(r.error) << body;
      EXPECT_EQ(r.error->param, key) << body;
      EXPECT_NE(r.error->message.find("too large"), std::string::npos) << body << " -> " << r.error->message;
    }
  }
  auto whole = Chat(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":5.0,"seed":1e3})");
  ASSERT_FALSE(whole.error) << whole.error->message;
  EXPECT_EQ(whole.params.max_tokens, 5);
  EXPECT_EQ(whole.params.seed, 1000u);
  auto frac = Chat(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":2.5})");
  ASSERT_TRUE(frac.error);
  EXPECT_NE(frac.error->message.find("expected an integer"), std::string::npos) << frac.error->message;
}

// Issue 10: max_tokens = 2^63-1 made the context-length message add prompt + max_tokens in
// int64_t (signed overflow: "you requested -9223372036854775808 tokens").
TEST(RequestParser, ContextLengthMessageDoesNotOverflow) {
  auto r = Chat(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":9223372036854775807})");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->param, "max_tokens");
  EXPECT_NE(r.error->message.find("you requested 9223372036854775808 tokens (1 in the messages, "
                                  "9223372036854775807 in the completion)"),
            std::string::npos)
      << r.error->message;
}

TEST(RequestParser, DeepNestingIsRefusedNotRecursed) {
  std::string body = R"({"messages":)" + std::string(100000, '[');
  auto r = Chat(body);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("deeper"), std::string::npos);
}

TEST(Tokenize, WordsAreTokens) {
  std::vector<uint32_t> ids;
  ASSERT_FALSE(ParseTokenizeRequest(R"({"content":"The quick brown fox"})", ids));
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(CountTokens("  a\tb\nc  "), 3);
  EXPECT_EQ(CountTokens(""), 0);
}

TEST(TextModel, BlockHashesShareALeadingPrefix) {
  std::vector<uint32_t> a, b;
  TokenizeAppend("s1 s2 s3 s4 x", a);
  TokenizeAppend("s1 s2 s3 s4 y z", b);
  auto ha = BlockHashes(a, 2), hb = BlockHashes(b, 2);
  ASSERT_EQ(ha.size(), 2u);
  ASSERT_EQ(hb.size(), 3u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  std::vector<uint32_t> c;
  TokenizeAppend("s0 s2 s3 s4", c);
  EXPECT_NE(BlockHashes(c, 2)[1], ha[1]);  // chained: a different first block changes all
}

TEST(TextModel, OutputIsDeterministicAndStopScanFindsTheCut) {
  EXPECT_EQ(OutputTokenText(5, 3), OutputTokenText(5, 3));
  EXPECT_EQ(OutputTokenText(5, 3).front(), ' ');
  EXPECT_NE(OutputTokenText(5, 0).front(), ' ');
  std::string w2(OutputTokenText(5, 2));
  StopScan s = ScanForStop(5, 50, {w2});
  EXPECT_TRUE(s.stopped);
  EXPECT_LE(s.tokens, 3);
  EXPECT_EQ(ScanForStop(5, 50, {"#never#"}).tokens, 50);
}

TEST(FaultSpec, ParsesAndNamesErrors) {
  auto f = ParseFaultSpec("error5xx=0.05, stream_error=0.02,stall=0.01:500ms,drop=0.01,interval=4,cold_start=10s");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_DOUBLE_EQ(f->error5xx, 0.05);
  EXPECT_EQ(f->stall_duration, 500 * kNanosPerMilli);
  EXPECT_EQ(f->stream_interval, 4);
  EXPECT_EQ(f->cold_start, 10 * kNanosPerSecond);
  for (const char* bad : {"error5xx=2", "stall=0.1", "bogus=1", "interval=0", "cold_start=fast", "drop"}) {
    auto r = ParseFaultSpec(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseFaultSpec("bogus=1").status().message().find("bogus"), std::string::npos);
}

// A duration beyond int64 nanoseconds was rounded with std::llround (unspecified result:
// a negative cold start); it is refused instead.
TEST(FaultSpec, DurationsBeyondInt64NanosAreRefused) {
  for (const char* bad : {"cold_start=1e300", "cold_start=9.3e9", "stall=0.1:1e10s", "cold_start=1e17ms"}) {
    auto r = ParseFaultSpec(bad);
    EXPECT_FALSE(r.ok()) << bad << " -> cold_start " << (r.ok() ? r->cold_start : 0);
  }
  auto ok = ParseFaultSpec("cold_start=9e9");  // just under 2^63 ns (~292 years)
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->cold_start, int64_t{9'000'000'000} * kNanosPerSecond);
}

}  // namespace
}  // namespace infereng::serve
