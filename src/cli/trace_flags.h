// --trace and its window, shared by `bench`, `run` and `simulate`: replay a production
// trace (any format `characterize` reads) as the card's arrivals and lengths, with its
// prefix structure (trace/replay.h, workload/generator.h). docs/replay.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "card/card.h"
#include "cli/cli_util.h"
#include "core/status.h"
#include "workload/generator.h"

namespace infereng::cli {

struct TraceFlags {
  std::string file, format, start, duration;
  std::string sessions, parallel_window;  // --trace-sessions sessions|tasks, --trace-parallel-window D
  std::optional<double> speedup;
  std::optional<int64_t> requests;
  std::optional<int64_t> block_tokens;
  bool given() const {
    return !file.empty() || !format.empty() || !start.empty() || !duration.empty() || speedup || requests ||
           block_tokens || !sessions.empty() || !parallel_window.empty();
  }
};

void AddTraceFlags(CLI::App& app, TraceFlags* f);

// Makes the card's arrivals the trace the flags name (--trace), or changes the window of the
// trace the card already replays. No-op without any --trace* flag. InvalidArgument naming
// the flag (exit 2) on bad values, a missing file, or a window flag without a trace.
Status ApplyTraceFlags(const TraceFlags& f, card::WorkloadCard* card);

// After ApplyTraceFlags, when --trace was given: reads the trace once (a bad line fails
// here, exit 2, before any engine starts) and, unless the command line says otherwise,
// makes the run the whole window: bench.requests = its requests (no --requests or
// --duration), no warm-up (no --warmup), so the summary covers the requests the implied
// hit rate is computed on. Returns the scan (for a terminal line).
Result<workload::ReplayInfo> SetUpTraceRun(const TraceFlags& f, bool count_given, bool warmup_given,
                                           card::WorkloadCard* card);

}  // namespace infereng::cli
