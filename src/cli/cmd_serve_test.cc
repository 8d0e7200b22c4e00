// `infereng serve` flag handling (the server itself is tested in src/serve/).
#include <gtest/gtest.h>

#include <sstream>

#include "cli/command.h"

namespace infereng::cli {
namespace {

int RunServeCmd(std::vector<const char*> args, std::string* out, std::string* err) {
  std::ostringstream o, e;
  CommandIo io{o, e};
  args.insert(args.begin(), {"infereng", "serve"});
  int rc = RunMain(static_cast<int>(args.size()), args.data(), io);
  *out = o.str();
  *err = e.str();
  return rc;
}

TEST(CmdServe, HelpListsTheFlags) {
  std::string out, err;
  EXPECT_EQ(RunServeCmd({"--help"}, &out, &err), 0);
  for (const char* flag : {"--card", "--faults", "--speedup", "--trace-emissions", "--max-waiting", "--port"}) {
    EXPECT_NE(out.find(flag), std::string::npos) << flag;
  }
}

TEST(CmdServe, BadInputIsExit2WithAClearMessage) {
  std::string out, err;
  EXPECT_EQ(RunServeCmd({"--engine", "paced", "--faults", "bogus=1"}, &out, &err), 2);
  EXPECT_NE(err.find("bogus"), std::string::npos) << err;
  EXPECT_EQ(RunServeCmd({}, &out, &err), 2);
  EXPECT_NE(err.find("--card"), std::string::npos) << err;
  EXPECT_EQ(RunServeCmd({"--engine", "paced", "--request-timeout", "soon"}, &out, &err), 2);
  EXPECT_NE(err.find("--request-timeout"), std::string::npos) << err;
  EXPECT_EQ(RunServeCmd({"--engine", "paced", "--host", "not-an-ip", "--port", "0"}, &out, &err), 2);
}

// Range errors print the bound as written: CLI11's PositiveNumber printed a 300-digit one.
TEST(CmdServe, RangeErrorsPrintReadableNumbers) {
  std::string out, err;
  EXPECT_EQ(RunServeCmd({"--engine", "paced", "--speedup", "0"}, &out, &err), 2);
  EXPECT_NE(err.find("--speedup: must be > 0, got 0"), std::string::npos) << err;
  EXPECT_EQ(err.find("1797693"), std::string::npos) << err;
  EXPECT_EQ(RunServeCmd({"--engine", "paced", "--tp", "0"}, &out, &err), 2);
  EXPECT_NE(err.find("--tp: must be between 1 and 64, got 0"), std::string::npos) << err;
}

}  // namespace
}  // namespace infereng::cli
