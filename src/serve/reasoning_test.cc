// The embedded engine playing a reasoning model (EnginePort::ReasoningTokensFor): the first
// N tokens of a chat answer stream as delta.reasoning_content, as vLLM's reasoning parsers
// send them, and usage reports completion_tokens_details.reasoning_tokens. Over real HTTP
// on 127.0.0.1 with the paced engine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;
using testing::TestResponse;

TestResponse Post(ServerOptions opt, const std::string& path, const json& body, int32_t reasoning = 3) {
  opt.port = 0;
  opt.merge_late_tokens = false;  // one chunk per token (per stream interval) however loaded
  Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{
                         .ttft_base = 2 * kNanosPerMilli, .prefill_per_token = 0, .itl = 1 * kNanosPerMilli,
                         .reasoning_tokens = reasoning}));
  Result<uint16_t> port = server.Start();
  EXPECT_TRUE(port.ok()) << port.status().ToString();
  TestClient c(port.ok() ? *port : 0);
  return c.Call("POST", path, body.dump());
}

json Chat(int max_tokens, bool stream) {
  json j = {{"messages", {{{"role", "user"}, {"content", "one two three"}}}},
            {"max_tokens", max_tokens},
            {"ignore_eos", true},
            {"stream", stream}};
  if (stream) j["stream_options"] = {{"include_usage", true}, {"continuous_usage_stats", true}};
  return j;
}

TEST(ServeReasoning, ReasoningTokensStreamFirstAsReasoningContent) {
  TestResponse r = Post({}, "/v1/chat/completions", Chat(5, true));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string> ev = r.Events();
  ASSERT_EQ(ev.size(), 1u + 5u + 1u + 1u) << r.body;  // role, 3 reasoning + 2 answer, usage, [DONE]
  for (int i = 1; i <= 5; ++i) {
    const json d = json::parse(ev[static_cast<size_t>(i)])["choices"][0]["delta"];
    EXPECT_EQ(d.contains("reasoning_content"), i <= 3) << ev[static_cast<size_t>(i)];
    EXPECT_EQ(d.contains("content"), i > 3) << ev[static_cast<size_t>(i)];
    EXPECT_EQ(json::parse(ev[static_cast<size_t>(i)])["usage"]["completion_tokens"], i);  // continuous usage
  }
  const json usage = json::parse(ev[6])["usage"];
  EXPECT_EQ(usage["completion_tokens"], 5);  // reasoning included, as OpenAI and vLLM count
  EXPECT_EQ(usage["completion_tokens_details"]["reasoning_tokens"], 3);
}

// Tokens written together (a stream interval, or a late server) that straddle the end of the
// reasoning go out as a reasoning event and an answer event in the same write, so each
// event is one kind and its continuous usage counts it exactly.
TEST(ServeReasoning, AWriteAcrossTheEndOfTheReasoningIsTwoEvents) {
  ServerOptions o;
  o.faults.stream_interval = 4;
  TestResponse r = Post(o, "/v1/chat/completions", Chat(6, true));
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<std::string> ev = r.Events();
  ASSERT_GE(ev.size(), 5u) << r.body;  // role, reasoning x3, answer x1, answer x2 (final), usage, [DONE]
  const json a = json::parse(ev[1]), b = json::parse(ev[2]);
  EXPECT_TRUE(a["choices"][0]["delta"].contains("reasoning_content")) << ev[1];
  EXPECT_EQ(a["usage"]["completion_tokens"], 3);
  EXPECT_TRUE(b["choices"][0]["delta"].contains("content")) << ev[2];
  EXPECT_EQ(b["usage"]["completion_tokens"], 4);
}

// At most all but the last token reason (the answer always starts); the completions
// endpoint has no reasoning; a non-streamed chat answer carries message.reasoning_content.
TEST(ServeReasoning, LimitsEndpointsAndNonStreamedAnswers) {
  TestResponse one = Post({}, "/v1/chat/completions", Chat(2, true), 10);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(json::parse(one.Events()[3])["usage"]["completion_tokens_details"]["reasoning_tokens"], 1);

  TestResponse comp = Post({}, "/v1/completions",
                           {{"prompt", "a b c"}, {"max_tokens", 4}, {"stream", true},
                            {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(comp.status, 200);
  EXPECT_EQ(comp.body.find("reasoning"), std::string::npos) << comp.body;

  TestResponse whole = Post({}, "/v1/chat/completions", Chat(5, false));
  ASSERT_EQ(whole.status, 200) << whole.body;
  const json j = json::parse(whole.body);
  const json& msg = j["choices"][0]["message"];
  EXPECT_FALSE(msg["reasoning_content"].get<std::string>().empty());
  EXPECT_FALSE(msg["content"].get<std::string>().empty());
  EXPECT_EQ(j["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
}

}  // namespace
}  // namespace infereng::serve
