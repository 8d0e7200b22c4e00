// Documented exit codes of the infereng CLI (also in README and `infereng --help`).
#pragma once

#include "core/status.h"

namespace infereng::cli {

inline constexpr int kExitOk = 0;           // success
inline constexpr int kExitCheckFailed = 1;  // the run worked but a check or SLO failed
inline constexpr int kExitUsage = 2;        // bad usage or bad input (flags, files)
inline constexpr int kExitRuntime = 3;      // runtime failure (target unreachable, I/O, ...)
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT: stopped by Ctrl-C, partial results kept

// A run stopped by signal `sig` (cli/interrupt.h) exits 128 + sig, as a shell reports a
// process killed by it: 130 for SIGINT, 143 for SIGTERM.
inline constexpr int ExitCodeForSignal(int sig) { return 128 + sig; }

// Maps a library Status to the exit code main returns for it.
inline int ExitCodeFor(const Status& s) {
  using C = Status::Code;
  switch (s.code()) {
    case C::kOk: return kExitOk;
    case C::kInvalidArgument:
    case C::kNotFound:
    case C::kFailedPrecondition:
    case C::kOutOfRange: return kExitUsage;
    default: return kExitRuntime;
  }
}

}  // namespace infereng::cli
