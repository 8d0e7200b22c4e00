// `infereng simulate` / `infereng capacity` end to end, in-process: exit codes, errors
// that name the field, JSON keys of the one summary schema.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "testing/cli_runner.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Out = testing::CliRun;
Out Cli(const std::vector<std::string>& args) { return testing::RunCli(args); }

constexpr const char* kCard = R"(name: tiny
traffic:
  arrival: {process: poisson, rate: 4rps}
  peak_rate: 4rps
  input_tokens: {fixed: 200}
  output_tokens: {fixed: 40}
slo:
  ttft: {p99: 2s}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
  price: $3/h
engine:
  max_num_seqs: 64
bench:
  duration: 20s
  warmup: 0s
  seed: 3
)";

class CmdSimulateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("infereng_cmd_sim_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(CmdSimulateTest, HelpWorks) {
  EXPECT_EQ(Cli({"simulate", "--help"}).rc, 0);
  EXPECT_EQ(Cli({"capacity", "--help"}).rc, 0);
  Out keys = Cli({"simulate", "--list-keys"});
  EXPECT_EQ(keys.rc, 0);
  EXPECT_THAT(keys.out, HasSubstr("engine.max_num_seqs"));
}

// Identical users started together stay in one phase on the twin (FIDELITY.md (b6)): the
// run says so, and stops saying it once the users are spread or the window and the jitter
// that give a band are set.
TEST_F(CmdSimulateTest, IdenticalUsersStartedTogetherGetANoteAboutPhases) {
  const std::string card = Write("tiny.yaml", kCard);
  Out together = Cli({"simulate", "--card", card, "--concurrency", "4", "--duration", "10s"});
  EXPECT_THAT(together.out, HasSubstr("note: 4 identical users started together"));
  Out json = Cli({"simulate", "--card", card, "--concurrency", "4", "--duration", "10s", "--json"});
  EXPECT_THAT(json.err, HasSubstr("note: 4 identical users started together"));
  EXPECT_THAT(json.out, Not(HasSubstr("identical users")));
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--ramp", "5s"},
        std::vector<std::string>{"--set", "engine.admission_window=0.5ms", "--set", "cost.front_end_jitter=0.3ms"},
        std::vector<std::string>{"--rate", "4rps"}}) {
    std::vector<std::string> args = {"simulate", "--card", card, "--concurrency", "4", "--duration", "10s"};
    args.insert(args.end(), extra.begin(), extra.end());
    Out o = Cli(args);
    EXPECT_THAT(o.out, Not(HasSubstr("identical users"))) << extra.front();
  }
}

// The roofline's known limits on a deployment (twin/cost_caveats.h) ride with every
// prediction that uses it: simulate's text and JSON, capacity's winner; a measured profile
// replaces the roofline and with it the caveat.
TEST_F(CmdSimulateTest, AnA100TensorParallelDeploymentCarriesTheCollectiveCaveat) {
  std::string a100 = kCard;
  a100.replace(a100.find("accelerator: h100-sxm"), 21, "accelerator: a100-80gb\n  count: 2\n  tp: 2");
  const std::string card = Write("a100.yaml", a100);
  Out text = Cli({"simulate", "--card", card, "--duration", "5s", "--no-history"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("CAUTION: tensor parallelism on a100-80gb"));
  Out json = Cli({"simulate", "--card", card, "--duration", "5s", "--json", "--no-history"});
  ASSERT_EQ(json.rc, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["twin"]["cost_caveats"].size(), 1u);
  EXPECT_THAT(j["twin"]["cost_caveats"][0].get<std::string>(), HasSubstr("1.4-2.2x"));
  Out set = Cli({"simulate", "--card", card, "--duration", "5s", "--set", "cost.collective_launch=50us", "--no-history"});
  EXPECT_THAT(set.out, Not(HasSubstr("CAUTION")));
  Out h100 = Cli({"simulate", "--card", Write("h100.yaml", kCard), "--duration", "5s", "--json", "--no-history"});
  EXPECT_TRUE(nlohmann::json::parse(h100.out)["twin"]["cost_caveats"].empty());
  // A measured profile prices the steps instead: no caveat of the roofline's.
  const std::string prof = Write("p.json", R"({"schema": "infereng.profile/1",
 "provenance": {"target": "http://127.0.0.1:8000", "engine": "test", "model": "m"},
 "measurements": [],
 "table": {"tokens": [[1, 0.02], [1024, 0.2]], "context": [[0, 0], [4096, 0.01]], "front_end_s": 0.01}})");
  Out measured = Cli({"simulate", "--card", card, "--duration", "5s", "--profile", prof, "--no-history"});
  ASSERT_EQ(measured.rc, 0) << measured.err;
  EXPECT_THAT(measured.out, Not(HasSubstr("CAUTION")));
  Out capacity = Cli({"capacity", "--card", card, "--accelerators", "a100-80gb", "--counts", "2", "--duration", "10s",
                      "--json"});
  ASSERT_TRUE(capacity.rc == 0 || capacity.rc == 1) << capacity.err;
  const auto c = nlohmann::json::parse(capacity.out);
  ASSERT_EQ(c["candidates"].size(), 1u);
  EXPECT_EQ(c["candidates"][0]["cost_caveats"].size(), 1u);
}

TEST_F(CmdSimulateTest, JsonHasTheOneSchemaAndTwinFields) {
  const std::string card = Write("tiny.yaml", kCard);
  const std::string records = (dir_ / "r.jsonl").string();
  Out o = Cli({"simulate", "--card", card, "--json", "--records", records});
  ASSERT_EQ(o.rc, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms"}) {
    ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_TRUE(j[k].contains("p50") && j[k].contains("p99")) << k;
  }
  for (const char* k : {"output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  ASSERT_TRUE(j.contains("twin"));
  for (const char* k : {"kv_usage_mean", "over_time", "prefix_hit_rate", "preemptions", "rejections",
                        "replicas_mean", "cost", "saturation"}) {
    EXPECT_TRUE(j["twin"].contains(k)) << k;
  }
  EXPECT_GT(j["twin"]["cost"]["per_hour_usd"].get<double>(), 0);
  EXPECT_TRUE(std::filesystem::file_size(records) > 0);
}

TEST_F(CmdSimulateTest, TableByDefault) {
  Out o = Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--duration", "10s"});
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("TTFT"));
  EXPECT_THAT(o.out, HasSubstr("Twin: llama-3.1-8b"));
  EXPECT_THAT(o.out, HasSubstr("per 1M output tokens"));
  // The metric glossary is not repeated after every run: it is behind --explain.
  EXPECT_THAT(o.out, ::testing::Not(HasSubstr("Metric boundaries")));
  Out e = Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--duration", "10s", "--explain"});
  ASSERT_EQ(e.rc, 0) << e.err;
  EXPECT_THAT(e.out, HasSubstr("Metric boundaries"));
  EXPECT_THAT(e.out, HasSubstr("Same quantity in other tools"));
}

// The printout says which load it simulated; the flags resolve as bench's do.
TEST_F(CmdSimulateTest, SaysWhichLoadItSimulated) {
  const std::string card = Write("tiny.yaml", kCard);
  Out open = Cli({"simulate", "--card", card, "--duration", "10s"});
  ASSERT_EQ(open.rc, 0) << open.err;
  EXPECT_THAT(open.out, HasSubstr("load: open loop 4 rps (poisson)\n"));
  Out closed = Cli({"simulate", "--card", card, "--duration", "10s", "--concurrency", "3"});
  ASSERT_EQ(closed.rc, 0) << closed.err;
  EXPECT_THAT(closed.out, HasSubstr("load: closed loop, 3 users\n"));
  Out capped = Cli({"simulate", "--card", card, "--duration", "10s", "--concurrency", "3", "--rate", "8rps", "--json"});
  ASSERT_EQ(capped.rc, 0) << capped.err;
  const nlohmann::json j = nlohmann::json::parse(capped.out);
  EXPECT_EQ(j["twin"]["load"]["text"], "open loop 8 rps (poisson), at most 3 in flight");
  EXPECT_EQ(Cli({"simulate", "--card", card, "--concurrency", "0"}).rc, 2);
  EXPECT_EQ(Cli({"simulate", "--card", card, "--concurrency", "3", "--rate-scale", "2"}).rc, 2);
}

// --requests N ends the run at N requests (as bench); --rate inf sends them all at t = 0.
// The card's bench.requests does the same unless --duration is given.
TEST_F(CmdSimulateTest, RequestsAndRateInfAreAnOfflineBurstWithItsMakespan) {
  const std::string card = Write("tiny.yaml", kCard);
  Out burst = Cli({"simulate", "--card", card, "--rate", "inf", "--requests", "50", "--json"});
  ASSERT_EQ(burst.rc, 0) << burst.err;
  const nlohmann::json j = nlohmann::json::parse(burst.out);
  EXPECT_EQ(j["counts"]["succeeded"], 50);
  EXPECT_EQ(j["twin"]["load"]["text"], "closed loop, 50 users");
  ASSERT_TRUE(j["twin"].contains("makespan")) << j["twin"].dump();
  const double seconds = j["twin"]["makespan"]["seconds"].get<double>();
  EXPECT_NEAR(j["twin"]["makespan"]["requests_per_s"].get<double>(), 50 / seconds, 1e-9);
  Out table = Cli({"simulate", "--card", card, "--rate", "inf", "--requests", "50"});
  EXPECT_THAT(table.out, HasSubstr("makespan "));

  std::string counted = kCard;
  counted.replace(counted.find("  duration: 20s"), 15, "  requests: 30");
  Out from_card = Cli({"simulate", "--card", Write("counted.yaml", counted), "--json"});
  ASSERT_EQ(from_card.rc, 0) << from_card.err;
  EXPECT_EQ(nlohmann::json::parse(from_card.out)["counts"]["succeeded"], 30);

  Out no_n = Cli({"simulate", "--card", card, "--rate", "inf"});
  EXPECT_EQ(no_n.rc, 2);
  EXPECT_THAT(no_n.err, HasSubstr("--requests N"));
  Out both = Cli({"simulate", "--card", card, "--requests", "10", "--duration", "5s"});
  EXPECT_EQ(both.rc, 2);
  EXPECT_THAT(both.err, HasSubstr("--requests and --duration"));
  EXPECT_EQ(Cli({"simulate", "--card", card, "--requests", "0"}).rc, 2);
}

TEST_F(CmdSimulateTest, BadSetKeyIsExit2NamingTheKey) {
  Out o = Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--set", "engine.max_num_seq=4"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_THAT(o.err, HasSubstr("--set engine.max_num_seq: unknown setting (did you mean \"engine.max_num_seqs\"?)"));
  EXPECT_THAT(o.err, HasSubstr("valid keys: engine.max_num_batched_tokens"));
  Out v = Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--set", "engine.max_num_seqs=many"});
  EXPECT_EQ(v.rc, 2);
  EXPECT_THAT(v.err, HasSubstr("engine.max_num_seqs"));
}

TEST_F(CmdSimulateTest, BadCardEngineKeyIsExit2NamingTheField) {
  std::string text = kCard;
  text.replace(text.find("max_num_seqs"), 12, "max_num_sqes");
  Out o = Cli({"simulate", "--card", Write("bad.yaml", text)});
  EXPECT_EQ(o.rc, 2);
  EXPECT_THAT(o.err, HasSubstr("engine.max_num_sqes"));
}

// A zero duration is refused for being zero, not for being badly written.
TEST_F(CmdSimulateTest, ZeroDurationSaysZeroIsTheProblem) {
  Out o = Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--duration", "0s"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_THAT(o.err, HasSubstr("--duration: expected a duration greater than zero, got \"0s\""));
  Out c = Cli({"capacity", "--card", Write("tiny.yaml", kCard), "--duration", "0s"});
  EXPECT_EQ(c.rc, 2);
  EXPECT_THAT(c.err, HasSubstr("--duration: expected a duration greater than zero, got \"0s\""));
}

// --warmup leaves the period's start out of the window, as bench's does; it must be shorter
// than the period.
TEST_F(CmdSimulateTest, WarmupLeavesThePeriodsStartOutOfTheWindow) {
  const std::string card = Write("tiny.yaml", kCard);  // 20 s, warm-up 0
  Out all = Cli({"simulate", "--card", card, "--json", "--no-history"});
  Out late = Cli({"simulate", "--card", card, "--json", "--no-history", "--warmup", "10s"});
  ASSERT_LE(all.rc, 1) << all.err;
  ASSERT_LE(late.rc, 1) << late.err;
  const auto a = nlohmann::json::parse(all.out), l = nlohmann::json::parse(late.out);
  const double n_all = a["counts"]["succeeded"].get<double>(), n_late = l["counts"]["succeeded"].get<double>();
  EXPECT_GT(n_late, 0.3 * n_all) << a["counts"].dump() << l["counts"].dump();
  EXPECT_LT(n_late, 0.7 * n_all) << a["counts"].dump() << l["counts"].dump();
  Out bad = Cli({"simulate", "--card", card, "--warmup", "20s"});
  EXPECT_EQ(bad.rc, 2);
  EXPECT_THAT(bad.err, HasSubstr("--warmup 20 s must be >= 0 and shorter than the duration (20 s)"));
  Out neg = Cli({"simulate", "--card", card, "--warmup", "-1s"});
  EXPECT_EQ(neg.rc, 2);
  EXPECT_THAT(neg.err, HasSubstr("--warmup"));
}

// A bad flag is blamed, not the card: capacity used to say "CARD: --burst-headroom ...".
TEST_F(CmdSimulateTest, CapacityBadFlagsNameTheFlagNotTheCard) {
  const std::string card = Write("tiny.yaml", kCard);
  Out h = Cli({"capacity", "--card", card, "--burst-headroom", "-1"});
  EXPECT_EQ(h.rc, 2);
  EXPECT_THAT(h.err, HasSubstr("--burst-headroom: must be >= 1, got -1"));
  EXPECT_THAT(h.err, Not(HasSubstr(card)));
  Out r = Cli({"capacity", "--card", card, "--max-replicas", "0"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-replicas: must be >= 1, got 0"));
}

TEST_F(CmdSimulateTest, MissingOrBrokenCardIsExit2) {
  EXPECT_EQ(Cli({"simulate", "--card", (dir_ / "nope.yaml").string()}).rc, 2);
  std::string text = kCard;
  text.replace(text.find("h100-sxm"), 8, "h999");
  Out o = Cli({"simulate", "--card", Write("acc.yaml", text)});
  EXPECT_EQ(o.rc, 2);
  EXPECT_THAT(o.err, HasSubstr("deployment.accelerator"));
  EXPECT_EQ(Cli({"simulate", "--card", Write("tiny.yaml", kCard), "--duration", "soon"}).rc, 2);
}

TEST_F(CmdSimulateTest, CapacityFindsAWinnerAndExplainsLosers) {
  Out o = Cli({"capacity", "--card", Write("tiny.yaml", kCard), "--accelerators", "h100-sxm,l4",
               "--counts", "1,2", "--duration", "20s"});
  ASSERT_EQ(o.rc, 0) << o.out << o.err;
  EXPECT_THAT(o.out, HasSubstr("WINNER"));
  EXPECT_THAT(o.out, HasSubstr("Winner: "));
  EXPECT_THAT(o.out, HasSubstr("l4"));
  Out bad = Cli({"capacity", "--card", Write("tiny.yaml", kCard), "--accelerators", "nonesuch"});
  EXPECT_EQ(bad.rc, 2);
}

// Integers beyond the field's type in a flag or a card's engine section were cast from
// double (undefined behaviour: 3e9 into an int); they are named errors now.
TEST_F(CmdSimulateTest, HugeIntegersInFlagsAndEngineKnobsAreErrorsNotCasts) {
  for (const char* counts : {"3e9", "1e300", "2.5", "0"}) {
    Out o = Cli({"capacity", "--card", Write("tiny.yaml", kCard), "--counts", counts});
    EXPECT_EQ(o.rc, 2) << counts << ": " << o.err;
    EXPECT_THAT(o.err, HasSubstr("--counts")) << counts;
  }
  std::string card = kCard;
  card.replace(card.find("max_num_seqs: 64"), 16, "max_num_seqs: 3e9");
  Out fit = Cli({"fit", "--card", Write("huge.yaml", card)});
  EXPECT_EQ(fit.rc, 2) << fit.out << fit.err;
  EXPECT_THAT(fit.err, HasSubstr("engine.max_num_seqs: expected an integer >= 1, got \"3e9\" (at most 2147483647)"));
}

// A closed-loop card is planned for its C users, not a rate (twin/capacity.h): its
// throughput floor is what decides the replicas.
TEST_F(CmdSimulateTest, CapacityPlansAClosedLoopForItsUsers) {
  std::string text = kCard;
  text.replace(text.find("  arrival: {process: poisson, rate: 4rps}\n  peak_rate: 4rps\n"), 60, "  concurrency: 64\n");
  text.replace(text.find("slo:\n"), 5, "slo:\n  min_output_tokens_per_s: 2000\n");
  Out o = Cli({"capacity", "--card", Write("closed.yaml", text), "--accelerators", "h100-sxm", "--counts", "1",
               "--duration", "20s", "--json"});
  ASSERT_EQ(o.rc, 0) << o.out << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["load"]["mode"], "closed_loop");
  EXPECT_EQ(j["load"]["concurrency"], 64);
  EXPECT_EQ(j["target_rps"], nullptr);
  EXPECT_GE(j["winner"]["replicas"].get<int>(), 1);
  Out t = Cli({"capacity", "--card", Write("closed.yaml", text), "--accelerators", "h100-sxm", "--counts", "1",
               "--duration", "20s"});
  EXPECT_THAT(t.out, HasSubstr("Target: 64 concurrent users (closed loop"));
}

}  // namespace
}  // namespace infereng::cli
