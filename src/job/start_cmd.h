// A target process `infereng probe --start-cmd CMD` starts for the cold-start probe: CMD
// runs under /bin/sh in its own process group, its output to a log file; the group is
// stopped (SIGTERM, then SIGKILL after a grace period) when the StartedProcess goes away,
// so no probe leaves a server behind.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::job {

class StartedProcess {
 public:
  StartedProcess() = default;
  ~StartedProcess() { Stop(); }
  StartedProcess(const StartedProcess&) = delete;
  StartedProcess& operator=(const StartedProcess&) = delete;

  // Launches `/bin/sh -c command`, stdout and stderr appended to `log_path`. Returns at once.
  Status Start(const std::string& command, const std::string& log_path);
  // False once it has exited (reaps it).
  bool Running();
  // SIGTERM to the group, SIGKILL after `grace`. Idempotent.
  void Stop(Nanos grace = 5 * kNanosPerSecond);
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

}  // namespace infereng::job
