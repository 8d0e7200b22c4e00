// Unit tests of the pure inputs of a bench run: prompts of exact length, datasets, quality
// checks, request bodies, target URLs and API keys, and the load plan.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/dataset.h"
#include "bench/load_plan.h"
#include "bench/prompt.h"
#include "bench/quality.h"
#include "bench/request_body.h"
#include "bench/target.h"

namespace infereng::bench {
namespace {

namespace fs = std::filesystem;

std::string TempFile(const std::string& name, const std::string& content) {
  fs::path p = fs::temp_directory_path() / ("infereng_inputs_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << content;
  return p.string();
}

int64_t Words(const std::string& s) {
  int64_t n = 0;
  bool in = false;
  for (char c : s) {
    const bool ws = c == ' ';
    n += !ws && !in;
    in = !ws;
  }
  return n;
}

workload::RequestSpec Spec(uint64_t index, int32_t input, int32_t prefix_id = -1, int32_t prefix_tokens = 0) {
  workload::RequestSpec s;
  s.index = index;
  s.input_tokens = input;
  s.prefix_id = prefix_id;
  s.prefix_tokens = prefix_tokens;
  s.seed = 1000 + index;
  return s;
}

TEST(PromptTest, ExactLengthsWithATokenizerThatIsNotOneToOne) {
  // A tokenizer that counts 2 tokens per 3-letter-or-longer word + a BOS token.
  int calls = 0;
  TokenCountFn counter = [&](const std::string& text) -> Result<int64_t> {
    ++calls;
    int64_t n = 1;
    size_t i = 0;
    while (i < text.size()) {
      size_t j = text.find(' ', i);
      if (j == std::string::npos) j = text.size();
      n += (j - i) >= 3 ? 2 : 1;
      i = j + 1;
    }
    return n;
  };
  PromptBuilder b(7, counter);
  ASSERT_TRUE(b.Calibrate().ok());
  EXPECT_GT(b.model().tokens_per_word, 1.2);
  for (int32_t target : {5, 17, 100, 777}) {
    Result<std::string> p = b.Build(Spec(static_cast<uint64_t>(target), target));
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*counter(*p), target) << target;
  }
  EXPECT_GT(calls, 4);
}

TEST(PromptTest, SharedPrefixIsIdenticalTextAndRequestsDiffer) {
  PromptBuilder b(7);  // no tokenizer: one token per word
  auto a = b.Build(Spec(1, 100, /*prefix_id=*/3, 40));
  auto c = b.Build(Spec(2, 100, 3, 40));
  auto d = b.Build(Spec(3, 100, 4, 40));
  ASSERT_TRUE(a.ok() && c.ok() && d.ok());
  EXPECT_EQ(Words(*a), 100);
  EXPECT_EQ(a->substr(0, 120).substr(0, a->find(' ', 0)), c->substr(0, c->find(' ', 0)));
  // The first 40 words are the prefix: identical for prefix 3, different for prefix 4.
  auto first_words = [](const std::string& s, int n) {
    size_t pos = 0;
    for (int i = 0; i < n && pos != std::string::npos; ++i) pos = s.find(' ', pos + 1);
    return s.substr(0, pos);
  };
  EXPECT_EQ(first_words(*a, 40), first_words(*c, 40));
  EXPECT_NE(first_words(*a, 40), first_words(*d, 40));
  EXPECT_NE(*a, *c);  // request bodies differ after the prefix
}

// Trace replay (Mooncake hash_ids): prompts whose leading ids agree share exactly those
// blocks' words, the last block cut at the length is a prefix of the whole block, and the
// text changes right where the ids do.
TEST(PromptTest, SharedHashIdsShareExactlyThatTokenPrefix) {
  PromptBuilder b(7);  // no tokenizer: one token per word
  auto spec = [](uint64_t index, int32_t tokens, std::vector<uint64_t> ids) {
    workload::RequestSpec s;
    s.index = index;
    s.seed = 1000 + index;
    s.input_tokens = tokens;
    s.output_tokens = 4;
    s.block_ids = std::move(ids);
    s.block_tokens = 8;
    return s;
  };
  auto split = [](const std::string& s) {
    std::vector<std::string> w;
    std::istringstream in(s);
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  auto common = [](const std::vector<std::string>& x, const std::vector<std::string>& y) {
    std::size_t n = 0;
    while (n < x.size() && n < y.size() && x[n] == y[n]) ++n;
    return n;
  };
  auto a = b.Build(spec(1, 24, {10, 11, 12}));
  auto c = b.Build(spec(2, 24, {10, 11, 99}));   // shares 2 blocks = 16 tokens
  auto d = b.Build(spec(3, 20, {10, 11, 12}));   // the same blocks, the last cut to 4 tokens
  auto e = b.Build(spec(4, 24, {77, 11, 12}));   // the same later ids behind another head
  auto f = b.Build(spec(5, 30, {10, 11, 12}));   // longer than its blocks: a unique tail
  ASSERT_TRUE(a.ok() && c.ok() && d.ok() && e.ok() && f.ok());
  const auto wa = split(*a), wc = split(*c), wd = split(*d), we = split(*e), wf = split(*f);
  EXPECT_EQ(wa.size(), 24u);
  EXPECT_EQ(wd.size(), 20u);
  EXPECT_EQ(wf.size(), 30u);
  // Words are drawn from 128, so a chance match at the boundary is possible but the seeds
  // here are fixed: the shared prefix ends exactly at 16 words.
  EXPECT_EQ(common(wa, wc), 16u);
  EXPECT_EQ(common(wa, wd), 20u);  // all of d: its cut block is a prefix of a's
  EXPECT_EQ(common(wa, we), 0u);   // ids chain: block 2 behind another head is other text
  EXPECT_EQ(common(wa, wf), 24u);
  // A new trial (salt) replays from a cold cache: other text, the same structure.
  b.SetSalt(1);
  auto a2 = b.Build(spec(1, 24, {10, 11, 12}));
  auto c2 = b.Build(spec(2, 24, {10, 11, 99}));
  ASSERT_TRUE(a2.ok() && c2.ok());
  EXPECT_NE(*a2, *a);
  EXPECT_EQ(common(split(*a2), split(*c2)), 16u);
}

TEST(PromptTest, UsageRefitCorrectsTheModelAndReportsAchievedLengths) {
  PromptBuilder b(7);
  // The server says every prompt is 1.5 tokens per word + 3 template tokens.
  for (int words : {10, 50, 200}) b.Observe(words, static_cast<int64_t>(words * 1.5 + 3));
  EXPECT_EQ(b.Report().samples, 3);
  EXPECT_EQ(b.Report().exact, 0);
  ASSERT_TRUE(b.Refit());
  EXPECT_NEAR(b.model().tokens_per_word, 1.5, 1e-9);
  EXPECT_NEAR(b.model().overhead_tokens, 3, 1e-9);
  EXPECT_EQ(b.model().WordsFor(153), 100);
  EXPECT_EQ(b.Report().samples, 0);  // restarted for the measured phase
  EXPECT_FALSE(b.Refit());           // once
}

TEST(DatasetTest, JsonlAndShareGpt) {
  auto jsonl = LoadDataset(TempFile("d.jsonl", R"({"prompt": "hi", "output_tokens": 5}
{"messages": [{"role": "user", "content": "yo"}]}
)"),
                           "auto");
  ASSERT_TRUE(jsonl.ok()) << jsonl.status().ToString();
  ASSERT_EQ(jsonl->size(), 2u);
  EXPECT_EQ((*jsonl)[0].prompt.text, "hi");
  EXPECT_EQ((*jsonl)[0].output_tokens, 5);
  EXPECT_TRUE((*jsonl)[1].prompt.messages.is_array());
  auto sg = LoadDataset(TempFile("sg.json", R"([{"conversations": [{"from": "human", "value": "q?"},
    {"from": "gpt", "value": "one two three"}]}])"),
                        "sharegpt");
  ASSERT_TRUE(sg.ok()) << sg.status().ToString();
  EXPECT_EQ((*sg)[0].prompt.messages[0]["content"], "q?");
  EXPECT_EQ((*sg)[0].output_tokens, 3);
  auto bad = LoadDataset(TempFile("bad.jsonl", "{\"prompt\": \"ok\"}\n{\"nope\": 1}\n"), "jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.jsonl:2"), std::string::npos) << bad.status().message();
}

TEST(QualityTest, ChecksPassAndFailForTheRightReasons) {
  auto evals = LoadEvalSet(TempFile("e.jsonl", R"({"prompt": "a", "expect_exact": "Paris"}
{"prompt": "b", "expect_contains": "42"}
{"prompt": "c", "expect_regex": "^\\d+$"}
{"prompt": "d", "expect_json": true}
{"prompt": "e", "json_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 1}}, "additionalProperties": false}}
)"));
  ASSERT_TRUE(evals.ok()) << evals.status().ToString();
  ASSERT_EQ(evals->size(), 5u);
  const auto& e = *evals;
  EXPECT_TRUE(RunCheck(e[0].check, "  Paris\n"));
  EXPECT_FALSE(RunCheck(e[0].check, "Paris, France"));
  EXPECT_TRUE(RunCheck(e[1].check, "the answer is 42."));
  EXPECT_FALSE(RunCheck(e[1].check, "forty-two"));
  EXPECT_TRUE(RunCheck(e[2].check, "123"));
  EXPECT_FALSE(RunCheck(e[2].check, "12a"));
  EXPECT_TRUE(RunCheck(e[3].check, "```json\n{\"a\": [1]}\n```"));
  EXPECT_FALSE(RunCheck(e[3].check, "{\"a\": "));
  std::string why;
  EXPECT_TRUE(RunCheck(e[4].check, "{\"n\": 3}"));
  EXPECT_FALSE(RunCheck(e[4].check, "{\"n\": 0}", &why));
  EXPECT_NE(why.find("minimum"), std::string::npos) << why;
  EXPECT_FALSE(RunCheck(e[4].check, "{\"n\": 3, \"x\": 1}", &why));
  EXPECT_NE(why.find("\"x\""), std::string::npos) << why;
  EXPECT_FALSE(RunCheck(e[4].check, "{}", &why));
  auto unsupported = LoadEvalSet(TempFile("u.jsonl", R"({"prompt": "a", "json_schema": {"type": "string", "pattern": "x"}})"));
  ASSERT_FALSE(unsupported.ok());
  EXPECT_NE(unsupported.status().message().find("pattern"), std::string::npos);
}

// GSM8K-style numeric answers: the last number in the output, compared as a number.
TEST(QualityTest, NumberCheckReadsTheLastNumber) {
  EXPECT_EQ(LastNumber("Janet has 3 ducks, so 16 - 3 - 4 = 9.\n#### 18"), 18);
  EXPECT_EQ(LastNumber("It costs $1,250.50 in total."), 1250.5);
  EXPECT_EQ(LastNumber("the change is -7"), -7);
  EXPECT_EQ(LastNumber("5-3"), 3);
  EXPECT_FALSE(LastNumber("no digits here").has_value());
  auto evals = LoadEvalSet(TempFile("n.jsonl", R"({"prompt": "q1", "check": {"type": "number", "value": "1250"}}
{"prompt": "q2", "expect_number": 18, "answer": "16 - 3 - 4 = 9, 9 * 2 = 18.\n#### 18"}
{"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q3"}], "expect_regex": "^ok$", "answer": "ok"}
)"));
  ASSERT_TRUE(evals.ok()) << evals.status().ToString();
  const auto& e = *evals;
  EXPECT_TRUE(RunCheck(e[0].check, "The total is 1,250."));
  EXPECT_TRUE(RunCheck(e[0].check, "1250.0000001"));
  std::string why;
  EXPECT_FALSE(RunCheck(e[0].check, "1250 apples and 3 pears", &why));  // the LAST number counts
  EXPECT_EQ(why, "last number differs from the expected number");
  EXPECT_FALSE(RunCheck(e[0].check, "I cannot tell", &why));
  EXPECT_EQ(why, "no number in the output");
  EXPECT_EQ(std::string(CheckKindName(e[1].check.kind)), "number");
  EXPECT_EQ(e[0].answer, "1250");  // derived from the check
  EXPECT_EQ(e[1].answer, "16 - 3 - 4 = 9, 9 * 2 = 18.\n#### 18");
  EXPECT_EQ(e[2].answer, "ok");
  EXPECT_EQ(PromptText(e[2]), "q3");
  EXPECT_EQ(DescribeExpected(e[1].check), "18");
  auto bad = LoadEvalSet(TempFile("nb.jsonl", "{\"prompt\": \"q\", \"expect_number\": \"about 3 or 4\"}\n"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nb.jsonl:1: check \"number\" needs one number"), std::string::npos)
      << bad.status().message();
  auto wrong = LoadEvalSet(TempFile("nw.jsonl", "{\"prompt\": \"q\", \"expect_number\": 3, \"answer\": \"4\"}\n"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("\"answer\" does not pass"), std::string::npos) << wrong.status().message();
}

// Images go as OpenAI content parts: the text part first, then one image_url part each.
TEST(RequestBodyTest, ImagesAreContentPartsAfterTheText) {
  BodyOptions o;
  PromptContent p{"w w w", nullptr, {"data:image/png;base64,AAAA", "data:image/png;base64,BBBB"}};
  const auto j = nlohmann::json::parse(BuildRequestBody(o, p, 4));
  const nlohmann::json& parts = j["messages"][0]["content"];
  ASSERT_EQ(parts.size(), 3u) << j.dump();
  EXPECT_EQ(parts[0], (nlohmann::json{{"type", "text"}, {"text", "w w w"}}));
  EXPECT_EQ(parts[1]["type"], "image_url");
  EXPECT_EQ(parts[1]["image_url"]["url"], "data:image/png;base64,AAAA");
  EXPECT_EQ(parts[2]["image_url"]["url"], "data:image/png;base64,BBBB");
  EXPECT_EQ(j["messages"][0]["role"], "user");
}

TEST(RequestBodyTest, AlwaysStreamsWithUsageAndMaxTokensExtrasOnlyWhereAccepted) {
  BodyOptions o;
  o.model = "m";
  o.caps = CapsForEngine("vllm");
  auto j = nlohmann::json::parse(BuildRequestBody(o, {"hello", nullptr}, 12));
  EXPECT_EQ(j["messages"][0]["content"], "hello");
  EXPECT_EQ(j["max_tokens"], 12);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["min_tokens"], 12);
  o.caps = CapsForEngine("unknown");  // e.g. OpenAI: strict about unknown fields
  o.endpoint = ApiEndpoint::kCompletions;
  j = nlohmann::json::parse(BuildRequestBody(o, {"hello", nullptr}, 12));
  EXPECT_EQ(j["prompt"], "hello");
  EXPECT_EQ(j["max_tokens"], 12);
  EXPECT_FALSE(j.contains("ignore_eos"));
  EXPECT_FALSE(j.contains("min_tokens"));
  EXPECT_FALSE(j["stream_options"].contains("continuous_usage_stats"));
  EXPECT_FALSE(CapsForEngine("tgi").length_controlled());
  EXPECT_TRUE(CapsForEngine("llamacpp").ignore_eos);
}

TEST(TargetTest, UrlsNormaliseAndSecretsNeverEchoed) {
  EXPECT_EQ(ParseTarget("http://h:8000/v1/")->root, "http://h:8000");
  EXPECT_EQ(ParseTarget("https://api.example.com/v1")->root, "https://api.example.com");
  EXPECT_EQ(ParseTarget("http://h:8000/proxy")->root, "http://h:8000/proxy");
  for (const char* bad : {"http://alice:s3cret@h:8000/v1", "http://h:8000/v1?key=s3cret", "http://h/#s3cret"}) {
    auto t = ParseTarget(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().message().find("s3cret"), std::string::npos) << t.status().message();
  }
  EXPECT_FALSE(ParseTarget("ftp://h").ok());
  EXPECT_EQ(RedactUrl("https://u:p@host:1/x?y=z"), "https://host:1/x");
  EXPECT_EQ(ScrubSecret("a KEY b KEY", "KEY"), "a [redacted] b [redacted]");
}

// A full endpoint URL (as in a curl example) used to double the path
// (/v1/chat/completions/v1/chat/completions): it names the server and the API.
TEST(TargetTest, FullEndpointUrlNamesTheServerAndTheApi) {
  auto chat = ParseTarget("http://h:8000/v1/chat/completions");
  ASSERT_TRUE(chat.ok());
  EXPECT_EQ(chat->root, "http://h:8000");
  EXPECT_EQ(chat->endpoint, "chat");
  auto completions = ParseTarget("http://h:8000/v1/completions/");
  EXPECT_EQ(completions->root, "http://h:8000");
  EXPECT_EQ(completions->endpoint, "completions");
  EXPECT_EQ(ParseTarget("http://h:8000/v1")->endpoint, "");
}

TEST(RequestBodyTest, LengthControlFlagSendsTheFieldsToAnUnknownEngine) {
  EngineCaps caps = CapsForEngine("unknown");
  ASSERT_TRUE(ApplyLengthControl("both", &caps).ok());
  BodyOptions o;
  o.caps = caps;
  auto j = nlohmann::json::parse(BuildRequestBody(o, {"hello", nullptr}, 9));
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["min_tokens"], 9);
  caps = CapsForEngine("unknown");
  ASSERT_TRUE(ApplyLengthControl("ignore_eos", &caps).ok());
  EXPECT_TRUE(caps.ignore_eos);
  EXPECT_FALSE(caps.min_tokens);
  caps = CapsForEngine("vllm");
  ASSERT_TRUE(ApplyLengthControl("none", &caps).ok());
  EXPECT_FALSE(caps.length_controlled());
  caps = CapsForEngine("vllm");
  ASSERT_TRUE(ApplyLengthControl("auto", &caps).ok());
  EXPECT_TRUE(caps.ignore_eos && caps.min_tokens);
  Status bad = ApplyLengthControl("always", &caps);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("--length-control always"), std::string::npos) << bad.message();
}

// /tokenize round trips between a request's scheduled time and its send show up as
// schedule lag: Prepare() does them before the phase; Build() then never calls the counter.
TEST(PromptTest, PreparedPromptsKeepTokenizeOffTheHotPath) {
  int calls = 0;
  TokenCountFn counter = [&](const std::string& text) -> Result<int64_t> {
    ++calls;
    return Words(text) + 1;  // one word, one token, plus BOS
  };
  PromptBuilder b(5, counter);
  ASSERT_TRUE(b.Calibrate().ok());
  std::vector<workload::RequestSpec> specs;
  for (uint64_t i = 0; i < 8; ++i) specs.push_back(Spec(i, 40));
  Result<int64_t> exact = b.Prepare(specs);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(*exact, 8);
  const int before = calls;
  for (uint64_t i = 0; i < 8; ++i) {
    Result<std::string> text = b.Build(Spec(i, 40));
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(Words(*text) + 1, 40) << i;
  }
  Result<std::string> later = b.Build(Spec(100, 40));  // not prepared: from the model
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(calls, before) << "Build() called /tokenize on the hot path";
  EXPECT_EQ(Words(*later) + 1, 40);  // the calibrated model is right for this tokenizer
}

TEST(TargetTest, ApiKeySources) {
  setenv("INFERENG_TEST_KEY_VAR", "k-env", 1);
  EXPECT_EQ(*LoadApiKey({.env_name = "INFERENG_TEST_KEY_VAR", .file = ""}), "k-env");
  unsetenv("INFERENG_TEST_KEY_VAR");
  auto missing = LoadApiKey({.env_name = "INFERENG_TEST_KEY_VAR", .file = ""});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("INFERENG_TEST_KEY_VAR"), std::string::npos);
  EXPECT_EQ(*LoadApiKey({.env_name = "", .file = TempFile("key", "  k-file \n")}), "k-file");
}

TEST(LoadPlanTest, FlagsOverrideTheCard) {
  BenchOptions o;
  o.card.traffic.arrival.rate_rps = 10;
  o.card.fields["traffic.arrival.rate"] = {};
  // Open loop reads the card's arrival process (the load rule), so the traffic is valid.
  o.card.traffic.input_tokens = card::Distribution::Fixed(100);
  o.card.traffic.output_tokens = card::Distribution::Fixed(10);
  auto p = ResolveLoadPlan(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_DOUBLE_EQ(p->mean_rate_rps, 10);
  EXPECT_FALSE(p->closed_loop);
  EXPECT_EQ(p->duration, 60 * kNanosPerSecond);
  o.concurrency = 4;
  p = ResolveLoadPlan(o);
  EXPECT_TRUE(p->closed_loop);
  EXPECT_EQ(p->concurrency, 4);
  o.rate_rps = 50;
  p = ResolveLoadPlan(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->closed_loop);  // rate + concurrency: open loop with a cap
  EXPECT_EQ(p->concurrency, 4);
  EXPECT_DOUBLE_EQ(p->rate_scale, 5);  // 50 / the card's 10: the session no longer probes
  EXPECT_DOUBLE_EQ(p->mean_rate_rps, 50);
  o.requests = 100;
  p = ResolveLoadPlan(o);
  EXPECT_EQ(p->requests, 100);
  EXPECT_EQ(p->duration, 0);
  o.endpoint = "embeddings";
  EXPECT_FALSE(ResolveLoadPlan(o).ok());
  BenchOptions closed;
  closed.card.traffic.concurrency = 8;  // no arrival in the card: closed loop
  p = ResolveLoadPlan(closed);
  EXPECT_TRUE(p->closed_loop);
  EXPECT_EQ(p->concurrency, 8);
}

}  // namespace
}  // namespace infereng::bench
