// Runs the built infereng binary as a real child process, for the tests that need one:
// signals and exit statuses (the in-process CliRun cannot be sent a Ctrl-C).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace infereng::testing {

// Starts InferengBinary() with `args` (program name excluded), SIGINT and SIGTERM at their
// default actions and unblocked; stdout and stderr go to `log_path`. Returns the pid, or
// -1 if it could not start.
pid_t SpawnInfereng(const std::vector<std::string>& args, const std::string& log_path);

struct ChildExit {
  bool exited = false;    // returned from main / called exit()
  int code = -1;          // the exit status when `exited`
  int signal = 0;         // the signal that killed it when not `exited`
  bool timed_out = false; // still running after the timeout: killed with SIGKILL
};

// Waits for `pid` to end, up to `timeout`; kills it (SIGKILL) and says so after that.
ChildExit WaitChild(pid_t pid, std::chrono::milliseconds timeout);

// Polls `done` every 20 ms until it holds (true) or `timeout` passes (false).
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);

}  // namespace infereng::testing
