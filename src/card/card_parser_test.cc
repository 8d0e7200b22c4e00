#include "card/card_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/gaps.h"
#include "card/templates.h"
#include "testing/paths.h"

namespace infereng::card {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A small valid card; tests splice bad fields into it.
constexpr const char* kMinimal = R"(name: t
traffic:
  arrival: {process: poisson, rate: 10rps}
  input_tokens: 512
  output_tokens: 128
)";

TEST(CardParserTest, EveryExampleParsesAndMatchesItsTemplate) {
  for (const CardTemplate& t : CardTemplates()) {
    const std::string path = testing::SourceDir() + "/examples/" + std::string(t.name) + ".yaml";
    auto card = LoadCardFile(path);
    ASSERT_TRUE(card.ok()) << card.status().ToString();
    EXPECT_FALSE(card->name.empty());
    EXPECT_EQ(card->source_path, path);
    EXPECT_EQ(card->content_hash.size(), 64u);
    EXPECT_EQ(ReadFile(path), t.yaml) << path << " differs from the built-in template; regenerate templates.cc";
    auto again = ParseCard(t.yaml, "template.yaml");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->content_hash, card->content_hash);
  }
}

TEST(CardParserTest, ChatExampleHasTheDocumentedValues) {
  auto card = LoadCardFile(testing::SourceDir() + "/examples/chat.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->model.architecture, "llama-3.1-8b");
  EXPECT_EQ(card->deployment.accelerator, "h100-sxm");
  EXPECT_EQ(card->traffic.arrival.kind, ArrivalSpec::Kind::kPoisson);
  EXPECT_DOUBLE_EQ(card->traffic.arrival.rate_rps, 20);
  EXPECT_TRUE(card->Assumed("traffic.arrival.rate"));
  EXPECT_FALSE(card->Assumed("traffic.arrival.process"));
  EXPECT_TRUE(card->Has("slo.ttft.p99"));
  EXPECT_EQ(card->traffic.input_tokens.kind, Distribution::Kind::kLognormal);
  EXPECT_DOUBLE_EQ(card->traffic.input_tokens.p50, 1800);
  EXPECT_DOUBLE_EQ(card->traffic.input_tokens.max, 12288);
  EXPECT_DOUBLE_EQ(card->traffic.prefix.share, 0.9);
  EXPECT_EQ(card->traffic.prefix.tenants, 4);
  EXPECT_DOUBLE_EQ(*card->constraints.budget_per_hour_usd, 40);
  EXPECT_DOUBLE_EQ(*card->product.network_ms, 30);
  EXPECT_EQ(card->engine.at("max_num_seqs"), "256");
  EXPECT_EQ(card->engine.at("enable_prefix_caching"), "true");
  EXPECT_DOUBLE_EQ(card->bench.duration_s, 120);
  ASSERT_EQ(card->slo.latency.size(), 4u);
  EXPECT_EQ(card->slo.latency[0].metric, "ttft_ms");
  EXPECT_DOUBLE_EQ(card->slo.latency[0].percentile, 50);
  EXPECT_DOUBLE_EQ(card->slo.latency[0].threshold_ms, 200);
  EXPECT_DOUBLE_EQ(card->slo.latency[1].threshold_ms, 500);
  EXPECT_DOUBLE_EQ(*card->slo.recovery_s, 300);
  // The line of a field is where it is written.
  const std::string text = ReadFile(card->source_path);
  const auto pos = text.find("\ntraffic:");
  const int traffic_line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(pos), '\n')) + 2;
  EXPECT_EQ(card->fields.at("traffic").line, traffic_line);
}

TEST(CardParserTest, ParsesSloSpellingsAndThroughput) {
  auto card = ParseCard(std::string(kMinimal) + R"(slo:
  ttft_ms: {p99: 500, p50: 200ms}
  itl_ms: {p99: 50ms}
  e2e_ms: {p95: 8s, p99.9: 20s}
  attainment: 0.99
  availability: 0.999
  min_output_tokens_per_s: 1000
)", "c.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  const auto& l = card->slo.latency;
  ASSERT_EQ(l.size(), 5u);
  EXPECT_DOUBLE_EQ(l[0].threshold_ms, 500);  // plain number under *_ms = milliseconds
  EXPECT_EQ(l[3].metric, "e2e_ms");
  EXPECT_DOUBLE_EQ(l[3].threshold_ms, 8000);
  EXPECT_DOUBLE_EQ(l[4].percentile, 99.9);
  EXPECT_DOUBLE_EQ(*card->slo.min_output_tokens_per_s, 1000);
  EXPECT_DOUBLE_EQ(*card->slo.availability, 0.999);
}

TEST(CardParserTest, AssumedMarksAreInheritedAndRecorded) {
  auto card = ParseCard(std::string(kMinimal) + R"(slo:
  ttft: {value: {p99: 400ms}, assumed: true}
constraints:
  budget: {value: $10/h, assumed: true, note: guess from last quarter}
  region: eu
)", "c.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_TRUE(card->Assumed("slo.ttft"));
  EXPECT_TRUE(card->Assumed("slo.ttft.p99"));
  EXPECT_TRUE(card->Assumed("constraints.budget"));
  EXPECT_FALSE(card->Assumed("constraints.region"));
  EXPECT_DOUBLE_EQ(*card->constraints.budget_per_hour_usd, 10);
  EXPECT_EQ(card->fields.at("constraints.budget").line, 9);
}

TEST(CardParserTest, DistributionsAndArrivals) {
  auto card = ParseCard(R"(traffic:
  arrival: {process: gamma, rate: 1200/min, cv: 2.5}
  input_tokens: {uniform: [100, 200]}
  output_tokens: {normal: {mean: 300, stddev: 50}, min: 10, max: 600}
)", "c.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->traffic.arrival.kind, ArrivalSpec::Kind::kGamma);
  EXPECT_DOUBLE_EQ(card->traffic.arrival.rate_rps, 20);
  EXPECT_DOUBLE_EQ(card->traffic.arrival.cv, 2.5);
  EXPECT_EQ(card->traffic.input_tokens.kind, Distribution::Kind::kUniform);
  EXPECT_DOUBLE_EQ(card->traffic.input_tokens.max, 200);
  EXPECT_DOUBLE_EQ(card->traffic.output_tokens.stddev, 50);
  EXPECT_DOUBLE_EQ(card->traffic.output_tokens.min, 10);

  auto onoff = ParseCard(R"(traffic:
  arrival: {process: on_off, rate: 50rps, on: 30s, off: 90s}
  input_tokens: 10
  output_tokens: 10
)", "c.yaml");
  ASSERT_TRUE(onoff.ok()) << onoff.status().ToString();
  EXPECT_DOUBLE_EQ(onoff->traffic.arrival.off_s, 90);
  auto shorthand = ParseCard("traffic: {arrival: 5rps, input_tokens: 1, output_tokens: 1}", "c.yaml");
  ASSERT_TRUE(shorthand.ok()) << shorthand.status().ToString();
  EXPECT_DOUBLE_EQ(shorthand->traffic.arrival.rate_rps, 5);
}

TEST(CardParserTest, EmpiricalAndTraceFilesResolveBesideTheCard) {
  const auto dir = std::filesystem::temp_directory_path() / ("infereng_card_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "lens.txt") << "# input lengths\n100\n200\n\n300\n";
  std::ofstream(dir / "out.jsonl") << "{\"output_tokens\": 7}\n{\"output_tokens\": 9}\n";
  std::ofstream(dir / "trace.jsonl") << "{\"t\": 0, \"input_tokens\": 5, \"output_tokens\": 6}\n";
  const std::string src = (dir / "card.yaml").string();
  auto card = ParseCard(R"(traffic:
  arrival: {process: trace, file: trace.jsonl, speed: 2}
  input_tokens: {empirical: lens.txt}
  output_tokens: {empirical: {file: out.jsonl, field: output_tokens}}
)", src);
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  EXPECT_EQ(card->traffic.input_tokens.samples, (std::vector<double>{100, 200, 300}));
  EXPECT_EQ(card->traffic.output_tokens.samples, (std::vector<double>{7, 9}));
  EXPECT_EQ(card->traffic.arrival.trace_file, (dir / "trace.jsonl").string());

  std::ofstream(dir / "bad.txt") << "100\nlots\n";
  auto bad = ParseCard("traffic: {arrival: 1rps, input_tokens: {empirical: bad.txt}, output_tokens: 1}", src);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("bad.txt:2: expected a number, got \"lots\""));
  EXPECT_THAT(bad.status().message(), HasSubstr("traffic.input_tokens.empirical"));
  std::filesystem::remove_all(dir);
}

struct BadCase {
  const char* yaml;
  const char* location;  // "c.yaml:LINE: field.path"
  const char* detail;
};

TEST(CardParserTest, BadCardsNameFileLineAndField) {
  const BadCase cases[] = {
      {"traffic:\n  arrival: {process: poisson, rate: fast}\n", "c.yaml:2: traffic.arrival.rate",
       "expected a rate like 20rps"},
      {"slo:\n  ttft: {p99: soon}\n", "c.yaml:2: slo.ttft.p99", "got \"soon\""},
      {"slo:\n  ttft: {p99: 300}\n", "c.yaml:2: slo.ttft.p99", "unit is required"},
      {"slo:\n  ttft: {p100: 300ms}\n", "c.yaml:2: slo.ttft.p100", "percentile"},
      {"slo:\n  ttft: {q99: 300ms}\n", "c.yaml:2: slo.ttft.q99", "percentile"},
      {"slo:\n  attainment: 1.5\n", "c.yaml:2: slo.attainment", "(0, 1]"},
      {"slo:\n  attainment: 0\n", "c.yaml:2: slo.attainment", "(0, 1]"},
      {"slo:\n  availability: 99.9\n", "c.yaml:2: slo.availability", "(0, 1]"},
      {"traffic:\n  arrival: {process: poisson, rate: 0rps}\n", "c.yaml:2: traffic.arrival.rate", "> 0"},
      {"traffic:\n  arrival: {process: gamma, rate: 5rps, cv: 0}\n", "c.yaml:2: traffic.arrival.cv", "> 0"},
      {"traffic:\n  arrival: {process: poisson, rate: 5rps, cv: 2}\n", "c.yaml:2: traffic.arrival.cv", "gamma"},
      {"traffic:\n  arrival: {process: zipf, rate: 5rps}\n", "c.yaml:2: traffic.arrival.process", "one of constant"},
      {"traffic:\n  arrival: {process: poisson}\n", "c.yaml:2: traffic.arrival.rate", "missing"},
      {"traffic:\n  arrival: {process: trace, file: x.jsonl, rate: 2rps}\n", "c.yaml:2: traffic.arrival.rate", "speed"},
      {"traffic:\n  arrival: {process: trace, file: /nonexistent/t.jsonl}\n", "traffic.arrival.file", "cannot read"},
      {"traffic:\n  input_tokens: {lognormal: {p50: 500, p99: 100}}\n", "c.yaml:2: traffic.input_tokens.lognormal.p99",
       "must be >= p50"},
      {"traffic:\n  input_tokens: {lognormal: {p50: 500}}\n", "c.yaml:2: traffic.input_tokens.lognormal", "p99"},
      {"traffic:\n  input_tokens: {uniform: [10]}\n", "c.yaml:2: traffic.input_tokens.uniform", "[min, max]"},
      {"traffic:\n  input_tokens: {uniform: [10, 5]}\n", "c.yaml:2: traffic.input_tokens", "min <= max"},
      {"traffic:\n  input_tokens: {fixed: 10, normal: {mean: 1, stddev: 1}}\n", "c.yaml:2: traffic.input_tokens",
       "exactly one"},
      {"traffic:\n  input_tokens: {fixed: 0}\n", "c.yaml:2: traffic.input_tokens", "between 1"},
      {"traffic:\n  prefix: {share: 1.2, tokens: 10}\n", "c.yaml:2: traffic.prefix.share", "between 0 and 1"},
      {"traffic:\n  prefix: {share: 0.5}\n", "traffic.prefix.tokens", "> 0 when share"},
      {"traffic:\n  concurrency: -3\n", "c.yaml:2: traffic.concurrency", "between 1"},
      {"traffic:\n  class: nightly\n", "c.yaml:2: traffic.class", "online or offline"},
      {"constraints:\n  budget: $40\n", "c.yaml:2: constraints.budget", "per hour"},
      {"constraints:\n  budget: 40/h\n", "c.yaml:2: constraints.budget", "money like"},
      {"model:\n  precision: fp3\n", "c.yaml:2: model.precision", "one of bf16"},
      {"deployment:\n  count: 1\n  tp: 2\n", "c.yaml:3: deployment.tp", "exceeds deployment.count"},
      {"bench:\n  duration: 60\n", "c.yaml:2: bench.duration", "unit is required"},
      {"bench:\n  trials: 2.5\n", "c.yaml:2: bench.trials", "whole number"},
      {"product:\n  streaming: maybe\n", "c.yaml:2: product.streaming", "true or false"},
      {"product:\n  max_context_tokens: 100\n  max_input_tokens: 200\n", "c.yaml:3: product.max_input_tokens",
       "exceeds"},
      {"quality:\n  pass_threshold: 90\n", "c.yaml:2: quality.pass_threshold", "between 0 and 1"},
      {"name: [a, b]\n", "c.yaml:1: name", "expected a string, got a list"},
      // The name names output folders: no way out of them (issue 10 item 1).
      {"traffic: {concurrency: 1}\nname: \"x/../../../../outside\"\n", "c.yaml:2: name", "path separator '/'"},
      {"name: \"..\"\n", "c.yaml:1: name", "directory reference"},
      {"name: \"a\\tb\"\n", "c.yaml:1: name", "control character"},
      {"traffic: 5\n", "c.yaml:1: traffic", "a map of fields"},
      {"traffic:\n  class: online\n  class: offline\n", "c.yaml:3: traffic.class", "duplicate key"},
      {"slo: {ttft: {p99: 1s}, ttft_ms: {p99: 500}}\n", "slo.ttft_ms", "given twice"},
      {"engine: {a: {b: {c: {d: {e: {f: {g: {h: {i: {j: 1}}}}}}}}}}\n", "engine", "nested too deeply"},
      {"slo:\n  ttft: {value: {value: 1s}}\n", "c.yaml:2: slo.ttft", "nested"},
      {"slo:\n  ttft: {value: {p99: 1s}, assumed: perhaps}\n", "slo.ttft.assumed", "true or false"},
  };
  for (const BadCase& c : cases) {
    auto card = ParseCard(c.yaml, "c.yaml");
    ASSERT_FALSE(card.ok()) << c.yaml;
    EXPECT_EQ(card.status().code(), Status::Code::kInvalidArgument) << c.yaml;
    EXPECT_THAT(card.status().message(), HasSubstr(c.location)) << c.yaml;
    EXPECT_THAT(card.status().message(), HasSubstr(c.detail)) << c.yaml;
  }
}

TEST(CardParserTest, UnknownKeysSuggestTheClosestName) {
  auto card = ParseCard("tarffic:\n  class: online\n", "c.yaml");
  ASSERT_FALSE(card.ok());
  EXPECT_THAT(card.status().message(), HasSubstr("c.yaml:1: tarffic: unknown key \"tarffic\" (did you mean \"traffic\"?)"));
  auto nested = ParseCard("name: x\nslo:\n  atainment: 0.9\n", "c.yaml");
  ASSERT_FALSE(nested.ok());
  EXPECT_THAT(nested.status().message(), HasSubstr("c.yaml:3: slo.atainment: unknown key"));
  EXPECT_THAT(nested.status().message(), HasSubstr("did you mean \"attainment\""));
  auto far = ParseCard("zzzzzzzz: 1\n", "c.yaml");
  ASSERT_FALSE(far.ok());
  EXPECT_THAT(far.status().message(), ::testing::Not(HasSubstr("did you mean")));
  EXPECT_THAT(far.status().message(), HasSubstr("expected one of: name, description, product"));
}

TEST(CardParserTest, InvalidYamlAndFiles) {
  auto card = ParseCard("traffic: {arrival: [1, 2\n", "c.yaml");
  ASSERT_FALSE(card.ok());
  EXPECT_THAT(card.status().message(), HasSubstr("c.yaml:"));
  EXPECT_THAT(card.status().message(), HasSubstr("not valid YAML"));
  EXPECT_FALSE(ParseCard("", "c.yaml").ok());
  auto missing = LoadCardFile("/nonexistent/card.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

TEST(CardParserTest, DeepNestingAndHugeInputFailCleanly) {
  // Regression inputs from fuzzing: deep flow nesting must be an error, not a stack overflow.
  auto deep = ParseCard("a: " + std::string(100000, '['), "c.yaml");
  EXPECT_FALSE(deep.ok());
  std::string engine = "engine: ";
  for (int i = 0; i < 50000; ++i) engine += "{a: ";
  EXPECT_FALSE(ParseCard(engine, "c.yaml").ok());
  auto huge = ParseCard(std::string(2 << 20, '#'), "c.yaml");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("larger than 1MiB"));
}

TEST(CardParserTest, ValidateAcceptsCodeBuiltCardsWithoutLengths) {
  WorkloadCard card;
  EXPECT_TRUE(ValidateCard(card).ok()) << ValidateCard(card).ToString();
  card.traffic.input_tokens.kind = Distribution::Kind::kLognormal;  // p50 0: invalid once set
  auto st = ValidateCard(card);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("<card>: traffic.input_tokens.lognormal.p50: must be > 0"));
}

TEST(CardParserTest, ContentHashIsSha256OfTheBytes) {
  auto card = ParseCard("name: x\n", "c.yaml");
  ASSERT_TRUE(card.ok());
  // sha256("name: x\n")
  EXPECT_EQ(card->content_hash, "a2a79ea37edb1963efaae29281523ab441a8a99df048d204f22f3f413e325afc");
}

TEST(CardGapsTest, ListsAssumedAndMissingFields) {
  auto card = LoadCardFile(testing::SourceDir() + "/examples/chat.yaml");
  ASSERT_TRUE(card.ok());
  auto gaps = FindGaps(*card);
  auto find = [&](const std::string& path) {
    return std::find_if(gaps.begin(), gaps.end(), [&](const Gap& g) { return g.path == path; });
  };
  auto rate = find("traffic.arrival.rate");
  ASSERT_NE(rate, gaps.end());
  EXPECT_EQ(rate->kind, Gap::Kind::kAssumed);
  EXPECT_GT(rate->line, 0);
  EXPECT_THAT(rate->why, HasSubstr("request rate"));
  auto baseline = find("baseline.run");
  ASSERT_NE(baseline, gaps.end());
  EXPECT_EQ(baseline->kind, Gap::Kind::kMissing);
  EXPECT_EQ(find("slo.ttft"), gaps.end());  // present
  EXPECT_EQ(find("traffic.agent_steps"), gaps.end());  // not an agent card

  auto bare = ParseCard("name: x\n", "c.yaml");
  ASSERT_TRUE(bare.ok());
  auto bare_gaps = FindGaps(*bare);
  EXPECT_GE(bare_gaps.size(), 20u);
  for (const Gap& g : bare_gaps) {
    EXPECT_EQ(g.kind, Gap::Kind::kMissing);
    EXPECT_FALSE(g.why.empty());
  }
}

}  // namespace
}  // namespace infereng::card
