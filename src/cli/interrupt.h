// SIGINT/SIGTERM for the commands that stop a run gracefully (bench, run, sweep). While an
// InterruptScope lives, the first signal only sets a flag the run polls: requests that
// finished are kept and the partial summary and report are written. The handler then
// restores the default action, so a second Ctrl-C ends the process at once. The command
// exits 128 + the signal number (130 for SIGINT, 143 for SIGTERM), the shell's convention
// for "ended by a signal", so scripts can tell an interrupted run from a failed one.
//
// Thread safety: the flag and the signal number are process-wide atomics; one scope at a
// time (commands run one at a time). They keep their values after the scope ends, until
// the next scope begins, so a command can ask after restoring the handlers.
#pragma once

#include <atomic>

namespace infereng::cli {

class InterruptScope {
 public:
  InterruptScope();   // clears the flag, installs the handlers
  ~InterruptScope();  // restores the previous handlers
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  void (*prev_int_)(int);
  void (*prev_term_)(int);
};

// Set by the first SIGINT/SIGTERM inside a scope (what BenchOptions::interrupt points at).
const std::atomic<bool>& InterruptFlag();

// The signal that interrupted the run (SIGINT or SIGTERM), 0 if none.
int InterruptSignal();

}  // namespace infereng::cli
