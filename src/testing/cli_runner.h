// Runs `infereng ARGS...` in-process through the command table (cli::RunMain) and captures
// the exit code and what it printed. Used by the CLI tests.
#pragma once

#include <string>
#include <vector>

namespace infereng::testing {

struct CliRun {
  int rc = 0;
  std::string out, err;
};

// `args` excludes the program name: RunCli({"fit", "--model", "llama-3.1-8b"}).
CliRun RunCli(const std::vector<std::string>& args);

}  // namespace infereng::testing
