// What follows a bench job with an output directory, and what its exit code is decided
// from: the twin's prediction beside the measurement (`run`), the report (report/), and the
// run's outcome (the verdict over every trial, an interruption, a dead target, a run where
// nothing worked). cli/ prints these and maps the outcome to an exit code; `bench`, `run`
// and later jobs (diagnose, compare) share the rule here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "core/status.h"
#include "job/fidelity.h"
#include "job/prediction.h"
#include "report/report.h"

namespace infereng::job {

struct RunReportOptions {
  bool predict = false;         // write the twin's prediction to DIR/predicted/ first (run)
  double engine_speedup = 1.0;  // the engine's speed-up over the wall clock (1: a real target)
  PredictionModel model{};      // what the prediction prices steps with (run --profile)
};

struct RunReport {
  // Ok, or why there is no prediction (FailedPrecondition with the reason; never silent).
  Status prediction = Status::Ok();
  std::optional<Fidelity> fidelity;  // the prediction against the measurement, when predicted
  Status report = Status::Ok();  // Ok: `files` were written
  Status diagnosis = Status::Ok();  // Ok: DIR/diagnose.json was written (job/diagnose.h)
  report::ReportFiles files;
};

// Writes the prediction (when asked) and then the report into `opt.out_dir`. The report is
// written for partial (interrupted) runs too: it says so. The prediction covers the charted
// trial's window (cut to the measured window when it was interrupted).
RunReport WriteRunReport(const bench::BenchOptions& opt, const bench::BenchResult& res,
                         const RunReportOptions& options);

enum class RunOutcome {
  kPass,          // every trial met the SLOs and the quality floor (metrics::kTrialsRule)
  kCheckFailed,   // the run worked but an SLO or the quality threshold failed
  kInterrupted,   // by the user: the summary covers the requests that finished
  kTargetDown,    // the target stopped accepting connections mid-run
  kAllFailed,     // every measured request failed (res.first_error says why)
};

// The outcome of a finished run, in that order of precedence: interrupted, target down,
// every request failed, then the verdict over every trial (not trial 1's).
RunOutcome JudgeRun(const bench::BenchResult& res);

// Why a run is kCheckFailed, one reason per failed check, so the verdict names it: "quality
// pass rate 33.3% (7 of 21, 95% CI [..]) is below the threshold 50.0%", "latency SLOs
// missed (the SLO lines above)"; with --trials each reason names its trial. Empty when
// every trial passed.
std::vector<std::string> CheckFailureReasons(const bench::BenchResult& res);

}  // namespace infereng::job
