// Documented exit codes of the infereng CLI (also in README and `infereng --help`).
#pragma once

#include "core/status.h"

namespace infereng::cli {

inline constexpr int kExitOk = 0;           // success
inline constexpr int kExitCheckFailed = 1;  // the run worked but a check or SLO failed
inline constexpr int kExitUsage = 2;        // bad usage or bad input (flags, files)
inline constexpr int kExitRuntime = 3;      // runtime failure (target unreachable, I/O, ...)

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
