// Output directories of `run`, `bench` and `sweep`: the default names (timestamped, built
// from the card's name through SafePathComponent, so a name cannot point elsewhere) and the
// rule for an --out that already holds files. A run directory is read back whole by the
// report (trial-K/, predicted/, points/ ...), so a new run must never land on top of an
// old one: stale files would be drawn as if they were the new run's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace infereng::cli {

// "<prefix><safe name>-<YYYYmmdd-HHMMSS UTC>", e.g. "runs/chat-20260101-120000". `fallback`
// replaces an empty (or wholly unsafe) name.
std::string TimestampedOutputDir(std::string_view prefix, std::string_view name, std::string_view fallback);

// What a run or sweep writes at the top of its directory (files and folders; a "trial-"
// entry matches trial-1, trial-2, ...). --force removes exactly these.
const std::vector<std::string_view>& OutputArtefacts();

// Makes `dir` ready for a new run. Missing or empty: fine (the caller creates it). Holding files: refused
// (FailedPrecondition naming a few of them and --force) unless `force`; with force the
// earlier run's artefacts (OutputArtefacts) are removed and any other file is kept, but a
// directory with none of them (not an infereng output) is refused even then: --force
// never deletes what infereng did not write.
Status PrepareOutputDir(const std::string& dir, bool force);

}  // namespace infereng::cli
