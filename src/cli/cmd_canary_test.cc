// `infereng canary` flags, printing and exit codes (the canary itself: src/job/canary_test.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "cli/exit_codes.h"
#include "job/embedded_engine.h"
#include "testing/cli_runner.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

using infereng::testing::RunCli;
namespace fs = std::filesystem;

const char* kCard =
    "name: canary-cli\n"
    "traffic:\n"
    "  arrival: {process: poisson, rate: 150rps}\n"
    "  input_tokens: 32\n"
    "  output_tokens: 8\n"
    "model:\n"
    "  id: tiny\n"
    "bench:\n"
    "  warmup: 0s\n";

std::string CardFile() {
  const std::string path = infereng::testing::ScratchPath("card.yaml");
  std::ofstream(path) << kCard;
  return path;
}

job::Embedded Start(const std::string& faults = "") {
  job::EmbeddedOptions o;
  o.speedup = 20;
  o.faults = faults;
  Result<card::WorkloadCard> card = card::ParseCard(kCard, "canary.yaml");
  EXPECT_TRUE(card.ok());
  Result<job::Embedded> e = job::StartEmbedded(*card, o);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? std::move(*e) : job::Embedded{};
}

std::string FreshDir(const std::string& name) {
  const std::string dir = infereng::testing::ScratchPath(name);
  fs::remove_all(dir);
  return dir;
}

TEST(CmdCanary, ErroringCandidateIsExit1NamingTheErrorRate) {
  job::Embedded a = Start(), b = Start("error5xx=0.3");
  const std::string out = FreshDir("errors");
  auto r = RunCli({"canary", "--baseline", a.url, "--candidate", b.url, "--card", CardFile(), "--requests", "100",
                   "--start-delay", "1s", "--out", out, "--no-scrape"});
  EXPECT_EQ(r.rc, kExitCheckFailed) << r.out << r.err;
  EXPECT_NE(r.out.find("NO-GO"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error_rate: Error rate worse"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out + "/canary.json"));
  EXPECT_TRUE(fs::exists(out + "/candidate/requests.jsonl"));
}

TEST(CmdCanary, UnreachableCandidateIsExit3NamingIt) {
  job::Embedded a = Start();
  std::string gone;
  {
    job::Embedded b = Start();
    gone = b.url;
  }  // stopped: nothing listens there now
  auto r = RunCli({"canary", "--baseline", a.url, "--candidate", gone, "--card", CardFile(), "--requests", "10", "--out",
                   FreshDir("unreachable")});
  EXPECT_EQ(r.rc, kExitRuntime) << r.out << r.err;
  EXPECT_NE(r.err.find("candidate (" + gone + "): target " + gone + " is unreachable"), std::string::npos) << r.err;
}

TEST(CmdCanary, BadInputIsExit2BeforeAnyLoad) {
  const std::string card = CardFile();
  const std::string url = "http://127.0.0.1:9";
  auto r = RunCli({"canary", "--baseline", url, "--candidate", url, "--card", card, "--gradual", "--steps", "30,100",
                   "--out", FreshDir("steps")});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--steps: 30%"), std::string::npos) << r.err;
  r = RunCli({"canary", "--baseline", url, "--candidate", url, "--card", card, "--accept", "ttft<=", "--out",
              FreshDir("accept")});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  r = RunCli({"canary", "--baseline", url, "--candidate", url, "--card", card, "--trials", "3", "--out",
              FreshDir("trials")});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("--trials"), std::string::npos) << r.err;
  EXPECT_EQ(RunCli({"canary", "--baseline", url, "--card", card}).rc, kExitUsage);  // --candidate is required
}

}  // namespace
}  // namespace infereng::cli
