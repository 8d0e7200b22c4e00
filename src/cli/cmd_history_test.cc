// `infereng history` end to end, in-process: simulate registers itself, list/show/trend/
// export read it back, import adds run directories once, bad ids and metrics exit 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing/cli_runner.h"
#include "testing/sim_run_dir.h"

namespace infereng::cli {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kCard = R"(name: hist
traffic:
  arrival: {process: poisson, rate: 4rps}
  input_tokens: {fixed: 200}
  output_tokens: {fixed: 40}
slo:
  ttft: {p99: 2s}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
bench:
  duration: 10s
  warmup: 0s
  seed: 3
)";

class CmdHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("infereng_cmd_history_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    card_ = (dir_ / "hist.yaml").string();
    std::ofstream(card_) << kCard;
    db_ = (dir_ / "h.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  testing::CliRun Cli(std::vector<std::string> args) { return testing::RunCli(args); }

  fs::path dir_;
  std::string card_, db_;
};

TEST_F(CmdHistoryTest, SimulateRegistersAndHistoryReadsItBack) {
  for (const char* seed : {"1", "2"}) {
    auto sim = Cli({"simulate", "--card", card_, "--seed", seed, "--history", db_});
    ASSERT_EQ(sim.rc, 0) << sim.err;
    EXPECT_THAT(sim.out, HasSubstr("history: run #"));
  }
  auto none = Cli({"simulate", "--card", card_, "--history", db_, "--no-history"});
  ASSERT_EQ(none.rc, 0);
  EXPECT_THAT(none.out, ::testing::Not(HasSubstr("history:")));

  auto list = Cli({"history", "--history", db_, "list", "--card", "hist"});
  ASSERT_EQ(list.rc, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("simulate"));
  EXPECT_THAT(list.out, HasSubstr("pass"));
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 3);  // header + 2 runs (--no-history left none)

  auto show = Cli({"history", "--history", db_, "show", "1"});
  ASSERT_EQ(show.rc, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("ttft_ms.p99"));
  EXPECT_THAT(show.out, HasSubstr("seed:"));
  auto base = Cli({"history", "--history", db_, "show", "latest-passing"});
  ASSERT_EQ(base.rc, 0) << base.err;
  EXPECT_THAT(base.out, HasSubstr("run #2"));

  const std::string html = (dir_ / "trend.html").string();
  auto trend = Cli({"history", "--history", db_, "trend", "ttft_ms.p99", "--html", html});
  ASSERT_EQ(trend.rc, 0) << trend.err;
  EXPECT_THAT(trend.out, HasSubstr("over 2 run(s)"));
  EXPECT_TRUE(fs::exists(html));

  auto csv = Cli({"history", "--history", db_, "export", "--csv"});
  ASSERT_EQ(csv.rc, 0);
  EXPECT_THAT(csv.out, HasSubstr("id,registered_at"));

  EXPECT_EQ(Cli({"history", "--history", db_, "show", "77"}).rc, 2);
  auto typo = Cli({"history", "--history", db_, "trend", "ttft_ms.p999"});
  EXPECT_EQ(typo.rc, 2);
  EXPECT_THAT(typo.err, HasSubstr("did you mean"));
  EXPECT_EQ(Cli({"history", "--history", db_, "list", "--since", "yesterday"}).rc, 2);
}

TEST_F(CmdHistoryTest, ImportNamesWhatIsNotARunDirectory) {
  fs::create_directories(dir_ / "empty");
  auto imp = Cli({"history", "--history", db_, "import", (dir_ / "empty").string()});
  EXPECT_EQ(imp.rc, 2);
  EXPECT_THAT(imp.err, HasSubstr("not a run directory"));
}


// history check: the newest run against the latest passing one before it, with compare's
// statistics. A replicate (another seed) passes; a run whose max_num_seqs was cut to 8
// (queueing: TTFT far worse) fails with exit 1 naming the metric; a bad baseline id is exit 2.
TEST_F(CmdHistoryTest, CheckPassesAReplicateAndFailsARegression) {
  const std::string a = (dir_ / "a").string(), b = (dir_ / "b").string(), c = (dir_ / "c").string();
  ASSERT_TRUE(infereng::testing::SimulateRunDir(a, {}, 1).ok());
  ASSERT_TRUE(infereng::testing::SimulateRunDir(b, {}, 2).ok());
  ASSERT_TRUE(infereng::testing::SimulateRunDir(c, {"engine.max_num_seqs=8"}, 3).ok());
  ASSERT_EQ(Cli({"history", "--history", db_, "import", a, b}).rc, 0);
  auto ok = Cli({"history", "--history", db_, "check", "--baseline", "1"});
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("history check: PASS"));
  ASSERT_EQ(Cli({"history", "--history", db_, "import", c}).rc, 0);
  auto bad = Cli({"history", "--history", db_, "check", "--baseline", "2"});
  EXPECT_EQ(bad.rc, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("TTFT"));
  EXPECT_THAT(bad.err, HasSubstr("against run #2"));
  EXPECT_EQ(Cli({"history", "--history", db_, "check", "--baseline", "99"}).rc, 2);
}

}  // namespace
}  // namespace infereng::cli
