// canary end to end against two embedded engines on 127.0.0.1 (job/embedded_engine.h):
// identical engines are go; a slower, an erroring or a wrong-answering candidate is no-go
// with that criterion named; gradual mode stops at the first failing step; an unreachable
// candidate is Unavailable before any load; the API key never reaches the outputs.
#include "job/canary.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/card_parser.h"
#include "job/embedded_engine.h"
#include "testing/paths.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_canary_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

card::WorkloadCard Card() {
  const std::string eval = infereng::testing::SourceDir() + "/examples/evals/gsm8k-test-200.jsonl";
  Result<card::WorkloadCard> c = card::ParseCard("name: canary\n"
                                                  "traffic:\n"
                                                  "  arrival: {process: poisson, rate: 150rps}\n"
                                                  "  input_tokens: 32\n"
                                                  "  output_tokens: 8\n"
                                                  "model:\n"
                                                  "  id: tiny\n"
                                                  "quality:\n"
                                                  "  eval_set: " + eval + "\n"
                                                  "bench:\n"
                                                  "  warmup: 0s\n"
                                                  "  seed: 11\n",
                                                  "canary.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : card::WorkloadCard{};
}

struct Engine {
  Embedded e;
  explicit Engine(double speedup, const std::string& faults = "", double accuracy = 1.0) {
    EmbeddedOptions o;
    o.speedup = speedup;
    o.faults = faults;
    o.quality_accuracy = accuracy;
    Result<Embedded> r = StartEmbedded(Card(), o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok()) e = std::move(*r);
  }
};

CanaryOptions Options(const std::string& baseline, const std::string& candidate, const std::string& out,
                      int64_t requests = 150) {
  CanaryOptions o;
  o.baseline = baseline;
  o.candidate = candidate;
  o.out_dir = out;
  o.bench.card = Card();
  o.bench.requests = requests;
  o.bench.quality_every = 5;
  o.bench.scrape_interval = 0;
  o.start_delay = kNanosPerSecond;
  return o;
}

bool Names(const CanaryStep& s, const std::string& criterion) {
  for (const CanaryReason& r : s.reasons) {
    if (r.criterion == criterion) return true;
  }
  return false;
}

std::string Reasons(const CanaryStep& s) {
  std::string out;
  for (const CanaryReason& r : s.reasons) out += r.criterion + ": " + r.text + "\n";
  return out;
}

// Identical engines are go at every step (gradual: 50% then 100%); the API key is sent but
// is in no file the canary wrote.
TEST(Canary, IdenticalEnginesAreGoAndTheKeyIsInNoOutput) {
  Engine a(4), b(4);
  const std::string out = TempDir("identical");
  ::setenv("INFERENG_CANARY_TEST_KEY", "sk-canary-secret-4242", 1);
  CanaryOptions o = Options(a.e.url, b.e.url, out);
  o.bench.api_key.env_name = "INFERENG_CANARY_TEST_KEY";
  o.gradual = true;
  o.fractions = {0.5, 1.0};
  // Both engines, both clients and whatever else runs share this host's cores: under that
  // contention the two wall-clock tails differ a lot for identical engines (ITL P99 +60%,
  // TTFT P99 8.6 -> 17.5 ms = +104% seen on a 2-core CI host under ASan), a difference of
  // the host, not the engines. A 4x floor keeps this test about the canary (pairing, the
  // error and quality rules, the key); the slower candidate below is 10x.
  o.min_effect = 3.0;
  Result<CanaryResult> r = RunCanary(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->steps.size(), 2u) << Reasons(r->steps[0]);
  EXPECT_TRUE(r->steps[0].go) << Reasons(r->steps[0]);
  EXPECT_TRUE(r->steps[1].go) << Reasons(r->steps[1]);
  EXPECT_TRUE(r->go);
  // Paired: the same requests to both (the 50% step sends every 2nd request).
  const Comparison& c = r->steps[1].comparison;
  ASSERT_NE(c.Find("ttft_ms.p99"), nullptr);
  EXPECT_EQ(c.Find("error_rate")->ci.n_a, c.Find("error_rate")->ci.n_b);
  EXPECT_EQ(c.Find("error_rate")->ci.n_a, 150);
  EXPECT_EQ(r->steps[0].comparison.Find("error_rate")->ci.n_b, 75);
  ASSERT_NE(c.Find("quality_pass_rate"), nullptr);

  const nlohmann::json j = nlohmann::json::parse(Slurp(out + "/canary.json"));
  EXPECT_EQ(j["verdict"], "go");
  EXPECT_EQ(j["steps"].size(), 2u);
  EXPECT_TRUE(fs::exists(out + "/step-2-100pct/candidate/requests.jsonl"));
  // One prompt salt for a step's pair (the same text to both), a fresh one per step.
  auto salt = [&](const std::string& step, const std::string& side) {
    return nlohmann::json::parse(Slurp(out + "/" + step + "/" + side + "/manifest.json"))["prompts"]["salt"];
  };
  EXPECT_EQ(salt("step-2-100pct", "baseline"), salt("step-2-100pct", "candidate"));
  EXPECT_NE(salt("step-1-50pct", "baseline"), salt("step-2-100pct", "baseline"));
  EXPECT_TRUE(fs::exists(out + "/step-1-50pct/comparison.html"));
  EXPECT_TRUE(fs::exists(out + "/canary.md"));
  for (const auto& f : fs::recursive_directory_iterator(out)) {
    if (!f.is_regular_file()) continue;
    EXPECT_EQ(Slurp(f.path().string()).find("sk-canary-secret-4242"), std::string::npos) << f.path();
  }
  ::unsetenv("INFERENG_CANARY_TEST_KEY");
}

TEST(Canary, SlowerCandidateIsNoGoNamingTheLatency) {
  Engine a(20), b(2);  // the candidate's engine runs 10x slower on the wall clock
  const std::string out = TempDir("slow");
  Result<CanaryResult> r = RunCanary(Options(a.e.url, b.e.url, out, 100));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->go);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_TRUE(Names(r->steps[0], "itl_ms.p99")) << Reasons(r->steps[0]);
  EXPECT_TRUE(Names(r->steps[0], "e2e_ms.p99")) << Reasons(r->steps[0]);
  EXPECT_FALSE(Names(r->steps[0], "error_rate")) << Reasons(r->steps[0]);
  const nlohmann::json j = nlohmann::json::parse(Slurp(out + "/canary.json"));
  EXPECT_EQ(j["verdict"], "no-go");
  EXPECT_TRUE(fs::exists(out + "/baseline/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/candidate/summary.json"));
}

TEST(Canary, ErroringCandidateIsNoGoNamingTheErrorRate) {
  Engine a(20), b(20, "error5xx=0.3");
  Result<CanaryResult> r = RunCanary(Options(a.e.url, b.e.url, TempDir("errors")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->go);
  EXPECT_TRUE(Names(r->steps[0], "error_rate")) << Reasons(r->steps[0]);
}

TEST(Canary, WrongAnsweringCandidateIsNoGoNamingQuality) {
  Engine a(20), b(20, "", 0.2);
  CanaryOptions o = Options(a.e.url, b.e.url, TempDir("quality"), 60);
  o.bench.quality_every = 1;
  Result<CanaryResult> r = RunCanary(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->go);
  EXPECT_TRUE(Names(r->steps[0], "quality_pass_rate")) << Reasons(r->steps[0]);
}

TEST(Canary, GradualStopsAtTheFirstFailingStep) {
  Engine a(20), b(2);
  const std::string out = TempDir("gradual");
  CanaryOptions o = Options(a.e.url, b.e.url, out, 400);
  o.gradual = true;  // 5%: 20 paired requests already show a 10x slower engine
  Result<CanaryResult> r = RunCanary(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->go);
  ASSERT_EQ(r->steps.size(), 1u);
  EXPECT_DOUBLE_EQ(r->steps[0].fraction, 0.05);
  EXPECT_EQ(r->steps[0].comparison.Find("error_rate")->ci.n_b, 20);
  EXPECT_FALSE(r->steps[0].go);
  EXPECT_FALSE(r->steps[0].reasons.empty());
  EXPECT_FALSE(fs::exists(out + "/step-2-25pct"));
  const nlohmann::json j = nlohmann::json::parse(Slurp(out + "/canary.json"));
  EXPECT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["go"], false);
}

TEST(Canary, UnreachableCandidateIsUnavailableBeforeAnyLoad) {
  Engine a(20);
  std::string gone;
  {
    Engine b(20);
    gone = b.e.url;
  }  // stopped: nothing listens there now
  const std::string out = TempDir("unreachable");
  Result<CanaryResult> r = RunCanary(Options(a.e.url, gone, out));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("candidate"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(fs::exists(out + "/baseline"));
}

TEST(Canary, StepsMustBeOneNthIncreasingAndEndAtAll) {
  CanaryOptions o = Options("http://127.0.0.1:1", "http://127.0.0.1:1", TempDir("steps"));
  o.gradual = true;
  for (const std::vector<double>& bad : {std::vector<double>{0.3, 1.0}, std::vector<double>{0.5, 0.25, 1.0},
                                         std::vector<double>{0.25, 0.5}}) {
    o.fractions = bad;
    Result<CanaryResult> r = RunCanary(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument) << r.status().ToString();
  }
}

}  // namespace
}  // namespace infereng::job
