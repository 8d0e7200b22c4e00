// RunSimulation's entry: an ordinary run is one pass of the virtual-time driver
// (simulation.cc); a count-limited run ("N requests", e.g. all at t = 0, as offline
// throughput benchmarks do) is two passes of the same schedule — the first, unbounded in
// time, finds the makespan; the second measures over exactly that window — and reports
// makespan throughput (requests and output tokens per second of makespan).
#include <algorithm>

#include "twin/simulation.h"
#include "twin/simulation_pass.h"

namespace infereng::twin {

Result<SimulationResult> RunSimulation(const card::WorkloadCard& card, const TwinSetup& setup,
                                       const SimulationOptions& options) {
  if (!options.count_limited) return RunSimulationPass(card, setup, options);
  if (!options.max_requests || *options.max_requests < 1) {
    return Status::InvalidArgument("a count-limited simulation needs the number of requests (--requests N)");
  }
  // Pass 1: no window limit (30 days of virtual time; the request count ends it) to find
  // the makespan. Same card and seed, so pass 2 replays the same schedule exactly.
  SimulationOptions probe = options;
  probe.count_limited = false;
  probe.duration_s = 30.0 * 86400;
  probe.drain_s = 30.0 * 86400;
  probe.records_path.clear();
  probe.keep_records = false;
  probe.exact_percentiles = false;
  INFERENG_ASSIGN_OR_RETURN(SimulationResult first, RunSimulationPass(card, setup, probe));
  const double makespan = first.twin.makespan_s;
  SimulationOptions second = options;
  second.count_limited = false;
  second.warmup_s = options.warmup_s.value_or(0);  // every request counts unless told otherwise
  second.duration_s = std::max(makespan, 1e-3);
  second.drain_s = std::max(options.drain_s, makespan);
  INFERENG_ASSIGN_OR_RETURN(SimulationResult r, RunSimulationPass(card, setup, second));
  TwinReport& t = r.twin;
  if (t.makespan_s > 0) {
    t.makespan_requests_per_s = static_cast<double>(r.summary.counts.succeeded) / t.makespan_s;
    t.makespan_output_tokens_per_s = static_cast<double>(r.summary.counts.output_tokens) / t.makespan_s;
  }
  return r;
}

}  // namespace infereng::twin
