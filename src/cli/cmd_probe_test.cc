// `infereng probe` flags and exit codes (the probes themselves: src/job/probe_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <fstream>

#include "cli/exit_codes.h"
#include "testing/cli_runner.h"
#include "testing/paths.h"

namespace infereng::cli {
namespace {

using infereng::testing::RunCli;

TEST(CmdProbe, UnknownProbeIsBadInputAndSendsNothing) {
  auto r = RunCli({"probe", "--target", "http://127.0.0.1:9", "--only", "overload,cancelation", "--out",
                   infereng::testing::ScratchPath("bad_only")});
  EXPECT_EQ(r.rc, kExitUsage) << r.err;
  EXPECT_NE(r.err.find("cancelation"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cancellation"), std::string::npos) << "lists the known names: " << r.err;
}

TEST(CmdProbe, UnreachableTargetIsExit3WithProbeJsonWritten) {
  uint16_t port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }  // closed: nothing listens there now
  const std::string dir = infereng::testing::ScratchPath("out");
  std::filesystem::remove_all(dir);
  auto r = RunCli({"probe", "--target", "http://127.0.0.1:" + std::to_string(port), "--only", "limits", "--out", dir,
                   "--health-wait", "300ms"});
  EXPECT_EQ(r.rc, kExitRuntime) << r.out << r.err;
  EXPECT_NE(r.err.find("unreachable"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/probe.json"));
}

// probe registers in the history like run/bench/sweep (a partial suite too), and
// `history list` shows it.
TEST(CmdProbe, RegistersInTheHistory) {
  uint16_t port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = a.local_endpoint().port();
  }
  const std::string dir = infereng::testing::ScratchPath("out");
  std::filesystem::remove_all(dir);
  const std::string db = dir + "-history.db";
  std::filesystem::remove(db);
  auto r = RunCli({"probe", "--target", "http://127.0.0.1:" + std::to_string(port), "--only", "limits", "--out", dir,
                   "--health-wait", "300ms", "--history", db});
  EXPECT_EQ(r.rc, kExitRuntime) << r.out << r.err;
  EXPECT_NE(r.out.find("history: run #1"), std::string::npos) << r.out << r.err;
  auto list = RunCli({"history", "--history", db, "list"});
  EXPECT_EQ(list.rc, kExitOk) << list.err;
  EXPECT_NE(list.out.find("probe"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << list.out;
  // --no-history: nothing added.
  std::filesystem::remove_all(dir);
  RunCli({"probe", "--target", "http://127.0.0.1:" + std::to_string(port), "--only", "limits", "--out", dir,
          "--health-wait", "300ms", "--history", db, "--no-history"});
  list = RunCli({"history", "--history", db, "list"});
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 2) << list.out;  // header + 1 run
  std::filesystem::remove(db);
}

TEST(CmdProbe, BadTargetIsExit2) {
  EXPECT_EQ(RunCli({"probe", "--target", "ftp://x"}).rc, kExitUsage);
  EXPECT_EQ(RunCli({"probe"}).rc, kExitUsage);  // --target is required
}

TEST(CmdServeBehaviours, BadValuesNameTheFlag) {
  auto r = RunCli({"serve", "--engine", "paced", "--prefix-cache", "private"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("private"), std::string::npos) << r.err;
  r = RunCli({"serve", "--engine", "paced", "--stream-buffer", "soon"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("--stream-buffer"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace infereng::cli
