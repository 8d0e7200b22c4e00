#include "testing/cli_runner.h"

#include <sstream>

#include "cli/command.h"

namespace infereng::testing {

CliRun RunCli(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"infereng"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  cli::CommandIo io{out, err};
  CliRun r;
  r.rc = cli::RunMain(static_cast<int>(argv.size()), argv.data(), io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace infereng::testing
