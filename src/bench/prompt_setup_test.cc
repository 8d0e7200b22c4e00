// Prompt length calibration against scripted engines on 127.0.0.1: the /tokenize probe and
// its use agree on the request shape, tokens the server adds for the chat template are
// measured from usage.prompt_tokens, and the label says what was actually done.
#include "bench/prompt_setup.h"

#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "client/test_server.h"

namespace infereng::bench {
namespace {

using client::testing::Exchange;
using client::testing::PlainResponse;
using client::testing::ScriptedServer;
using json = nlohmann::json;
using Req = boost::beast::http::request<boost::beast::http::string_body>;

int64_t CountWords(const std::string& text) {
  if (text.empty()) return 0;
  int64_t n = 1;
  for (char c : text) n += c == ' ';
  return n;
}

struct EngineShape {
  const char* tokenize_field = "content";  // the field /tokenize reads ("" = no /tokenize)
  int64_t chat_overhead = 28;               // chat template tokens in usage.prompt_tokens
  double tokens_per_word = 1.0;
  bool usage = true;                        // generation answers carry usage
};

// Answers like llama-server: /tokenize reads only its field (any other: 200 with no tokens),
// and usage.prompt_tokens of a chat request includes the chat template.
void Answer(const EngineShape& shape, const Req& req, Exchange& ex) {
  const std::string target(req.target());
  auto ok = [&](const json& j) { ex.Write(PlainResponse(200, "OK", "application/json", j.dump())); };
  if (target == "/v1/models") return ok({{"data", json::array({json{{"id", "m"}, {"owned_by", "llamacpp"}}})}});
  json body = json::parse(req.body(), nullptr, false);
  if (target == "/tokenize" && *shape.tokenize_field != '\0') {
    const bool has = body.is_object() && body.contains(shape.tokenize_field);
    json tokens = json::array();
    const int64_t n = has ? std::llround(CountWords(body[shape.tokenize_field].get<std::string>()) * shape.tokens_per_word) : 0;
    for (int64_t i = 0; i < n; ++i) tokens.push_back(i);
    return ok({{"tokens", tokens}});
  }
  if (target == "/v1/chat/completions" && body.is_object() && shape.usage) {
    const std::string text = body["messages"][0]["content"].get<std::string>();
    const int64_t n = std::llround(CountWords(text) * shape.tokens_per_word) + shape.chat_overhead;
    return ok({{"choices", json::array()}, {"usage", {{"prompt_tokens", n}, {"completion_tokens", 1}}}});
  }
  ex.Write(PlainResponse(404, "Not Found", "application/json", R"({"error":{"message":"File Not Found"}})"));
}

struct Engine {
  explicit Engine(EngineShape s) : shape(s), server([this](const Req& r, Exchange& ex) { Answer(shape, r, ex); }) {
    client.base_url = server.url();
    client.request_timeout = 5 * kNanosPerSecond;
  }
  PromptSetup SetUp() {
    Result<ServerInfo> probed = ProbeServer(client, 5 * kNanosPerSecond);
    EXPECT_TRUE(probed.ok()) << probed.status().ToString();
    info = probed.ok() ? *probed : ServerInfo{};
    PromptSetupInputs in;
    in.client = &client;
    in.server = &info;
    in.endpoint = ApiEndpoint::kChat;
    in.model = "m";
    in.seed = 3;
    in.timeout = 5 * kNanosPerSecond;
    return SetUpPrompts(in);
  }
  EngineShape shape;
  ScriptedServer server;
  client::ClientOptions client;
  ServerInfo info;
};

workload::RequestSpec Spec(uint64_t index, int32_t input) {
  workload::RequestSpec s;
  s.index = index;
  s.input_tokens = input;
  s.seed = 50 + index;
  return s;
}

// The issue: 256 tokens asked, 284-285 reached llama-server (chat template), and the
// manifest said "exact". Now the template's tokens are measured and counted.
TEST(PromptSetupTest, ChatTemplateTokensAreMeasuredFromUsageAndCounted) {
  Engine e(EngineShape{});
  PromptSetup ps = e.SetUp();
  EXPECT_EQ(e.info.tokenize_field, "content");  // the probe found the field that counts
  ASSERT_TRUE(ps.builder);
  EXPECT_EQ(ps.method, "tokenize+usage");
  EXPECT_EQ(ps.server_overhead, 28);
  std::vector<workload::RequestSpec> specs = {Spec(0, 256), Spec(1, 256), Spec(2, 100)};
  Result<int64_t> exact = ps.builder->Prepare(specs);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(*exact, 3);
  for (const auto& spec : specs) {
    Result<std::string> text = ps.builder->Build(spec);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(CountWords(*text) + 28, spec.input_tokens) << spec.index;  // what the server will report
  }
  EXPECT_NE(CalibrationLabel(ps).find("28 tokens the server adds"), std::string::npos) << CalibrationLabel(ps);
}

// The probe used to send {"content","prompt"} (200) while the counter sent only "prompt"
// (400): now the counter sends exactly what the probe found to work.
TEST(PromptSetupTest, TheCounterSendsTheFieldTheProbeFound) {
  Engine e(EngineShape{.tokenize_field = "prompt", .chat_overhead = 0});
  PromptSetup ps = e.SetUp();
  EXPECT_EQ(e.info.tokenize_field, "prompt");
  EXPECT_EQ(ps.method, "tokenize+usage") << ::testing::PrintToString(ps.notes);
  EXPECT_TRUE(ps.notes.empty()) << ::testing::PrintToString(ps.notes);
  TokenCountFn counter = MakeTokenizeCounter(e.client, e.info, ApiEndpoint::kCompletions);
  Result<int64_t> n = counter("one two three");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 3);
}

TEST(PromptSetupTest, WithoutTokenizeTwoPreRunRequestsFitTheModel) {
  Engine e(EngineShape{.tokenize_field = "", .chat_overhead = 10, .tokens_per_word = 1.25});
  PromptSetup ps = e.SetUp();
  EXPECT_FALSE(e.info.has_tokenize);
  EXPECT_EQ(ps.method, "usage-probe");
  EXPECT_NEAR(ps.builder->model().tokens_per_word, 1.25, 0.01);
  EXPECT_NEAR(ps.builder->model().overhead_tokens, 10, 1);
  EXPECT_NE(CalibrationLabel(ps).find("approximate"), std::string::npos) << CalibrationLabel(ps);
}

// Nothing answered with usage and there was no warm-up: the label must not claim a fit.
TEST(PromptSetupTest, NothingFittedIsSaid) {
  Engine e(EngineShape{.tokenize_field = "", .usage = false});
  PromptSetup ps = e.SetUp();
  EXPECT_EQ(ps.method, "assumed");
  ASSERT_EQ(ps.notes.size(), 1u);
  EXPECT_NE(ps.notes[0].find("HTTP 404"), std::string::npos) << ps.notes[0];
  EXPECT_EQ(CalibrationLabel(ps), "none (1 token per word assumed; nothing was fitted)");
}

}  // namespace
}  // namespace infereng::bench
