#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"

namespace infereng::cli {
namespace {

struct Ran {
  int rc;
  std::string out, err;
};

Ran RunCli(std::vector<const char*> args) {
  args.insert(args.begin(), "infereng");
  std::ostringstream out, err;
  CommandIo io{out, err};
  int rc = RunMain(static_cast<int>(args.size()), args.data(), io);
  return {rc, out.str(), err.str()};
}

TEST(CliTest, HelpListsEveryCommand) {
  Ran r = RunCli({"--help"});
  EXPECT_EQ(r.rc, kExitOk);
  for (const Command& c : Commands()) EXPECT_NE(r.out.find(c.name), std::string::npos) << c.name;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos);
}

TEST(CliTest, NoCommandIsUsageError) { EXPECT_EQ(RunCli({}).rc, kExitUsage); }

TEST(CliTest, UnknownCommandSuggests) {
  Ran r = RunCli({"verison"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_NE(r.err.find("unknown command 'verison'"), std::string::npos);
  EXPECT_NE(r.err.find("Did you mean 'version'?"), std::string::npos);
}

TEST(CliTest, EveryCommandHasHelp) {
  for (const Command& c : Commands()) {
    Ran r = RunCli({std::string(c.name).c_str(), "--help"});
    EXPECT_EQ(r.rc, kExitOk) << c.name << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << c.name;
  }
}

TEST(CliTest, VersionFlag) {
  Ran r = RunCli({"--version"});
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_NE(r.out.find("infereng 0."), std::string::npos);
}

TEST(CliTest, BadFlagIsUsageError) { EXPECT_EQ(RunCli({"version", "--bogus"}).rc, kExitUsage); }

TEST(ExitCodesTest, StatusMapping) {
  EXPECT_EQ(ExitCodeFor(Status::Ok()), kExitOk);
  EXPECT_EQ(ExitCodeFor(Status::InvalidArgument("x")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x")), kExitUsage);
  EXPECT_EQ(ExitCodeFor(Status::Unavailable("x")), kExitRuntime);
}

}  // namespace
}  // namespace infereng::cli
