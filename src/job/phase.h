// One load phase of a bench job (a trial, or the cold-start requests): the load runner
// driven by the workload generator, requests built from the session's prompts, records
// streamed through the record pipeline to a file (or kept in memory), and a watcher
// thread that reports progress about once a second, re-fits the prompt lengths at the
// end of warm-up and stops the runner when the user interrupts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/load_runner.h"
#include "core/status.h"
#include "job/client_saturation.h"
#include "job/session.h"
#include "metrics/quality.h"
#include "metrics/record.h"
#include "workload/generator.h"
#include "workload/sessions.h"

namespace infereng::job {

struct PhaseResult {
  bench::RunnerStats stats;
  bool target_down = false;
  std::vector<metrics::RequestRecord> records;  // when not written to a file
  std::string records_path;
  std::vector<metrics::QualityOutcome> quality;  // one per eval-set check, completion order
  int64_t t0_unix_ns = 0;    // the wall clock at t0 (manifests and the shard merge only)
  // The client's saturation signals over the measured part (after the warm-up, up to the
  // end of the measured window when the phase has a planned length, else the phase end):
  // the receive-stamp statistics and the io thread's CPU share; and every sent request's
  // schedule lag, for the steady-phase lag (client_saturation.h).
  client::RxStampStats stamps;
  std::optional<double> io_cpu_share;
  SteadyLagCollector lag;
};

// What RunPhase needs besides the runner's options.
struct PhaseSpec {
  std::string records_path;  // "" = keep the records in memory
  bool cold = false;         // the cold-start requests (progress phase "cold-start")
  int trial = 0;             // for the progress line
  Nanos planned = 0;         // planned length (0 when unknown: requests mode)
  Nanos t0 = -1;             // the phase's t0 on the steady clock (-1: now; --start-at sets it)
};

// How long the end of a phase waits for requests still in flight. Longer than the request
// timeout: a drain that ended when the last request's own timeout fires would race it, and a
// late timer callback (a busy machine) would turn that request's "timeout" into a cancel.
Nanos DrainTimeout(const bench::LoadPlan& plan);

// Runs one load phase; adds its client CPU, retries and first error to `s`.
// With sessions or agent tasks in the card (gen.enabled()) each next turn is released after
// the previous one ended (bench/session_source.h).
Result<PhaseResult> RunPhase(Session& s, const bench::RunnerOptions& ropt, workload::SessionPlanner& gen,
                             const PhaseSpec& spec);

}  // namespace infereng::job
