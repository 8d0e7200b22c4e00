// `compare A B`: did the change from run A to run B work? The library behind `infereng
// compare` (and `history check`, `canary`): typed results, no printing.
//
// In order (docs/compare.md):
//  1. what changed (manifest_diff.h): one variable, a replicate (seeds only), or "not a
//     one-variable experiment";
//  2. per-metric deltas B - A, absolute and relative, with 95% bootstrap intervals over
//     requests (metrics/bootstrap.h) for P50/P90/P95/P99/mean of TTFT, ITL, TPOT, E2E and for
//     output throughput, request throughput and goodput; the error rate with a
//     two-proportion interval; each with a direction-aware verdict (better / worse / no
//     detectable difference at this sample size) and the requests per run needed to detect
//     the observed difference;
//  3. quality: the pass-rate delta when both runs checked the eval set; a drop whose
//     interval excludes 0 fails acceptance, and a run that is faster but dropped quality is
//     "not a win";
//  4. acceptance: --accept expressions (compare_accept.h) and the card's SLOs on B.
// Two sweep directories compare max goodput under the SLO and the knee instead (CompareSweeps).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "job/compare_accept.h"
#include "job/compare_inputs.h"
#include "job/manifest_diff.h"
#include "metrics/bootstrap.h"

namespace infereng::job {

enum class Better { kLower, kHigher };

enum class DeltaVerdict {
  kBetter,
  kWorse,
  kNoDifference,  // the interval includes 0: no detectable difference at this sample size
  kUnknown,       // no interval (no records, or no samples on one side)
};
const char* DeltaVerdictName(DeltaVerdict v);  // "better", "worse", "no detectable difference", "n/a"

struct MetricDelta {
  std::string key;     // "ttft_ms.p99", "goodput_rps", "error_rate", "quality_pass_rate"
  std::string label;   // "TTFT P99"
  std::string unit;    // "ms", "tok/s", "req/s", "" (proportion)
  Better better = Better::kLower;
  metrics::DeltaCi ci;
  DeltaVerdict verdict = DeltaVerdict::kUnknown;
  std::optional<int64_t> requests_to_detect;  // when not detected (and delta != 0)
  std::string method;  // "bootstrap", "bootstrap (m-out-of-n: M of N requests)", "two-proportion (Newcombe)", "summary only"
};

enum class FindingKind {
  kNotOneVariable,   // more than one variable changed
  kReplicate,        // only the seed changed
  kIdentical,        // nothing changed
  kQualityNotAWin,   // faster, but quality dropped beyond its interval
  kQualityDropped,   // quality dropped beyond its interval
  kPartialRun,       // a run was interrupted
  kSourceMix,        // one measured, one simulated
  kNoRecords,        // a run has no requests.jsonl: no intervals
  kNote,             // informational
};

struct Finding {
  FindingKind kind;
  bool warning = false;  // shown loudly
  std::string text;
};

struct AcceptResult {
  std::string expression;  // as written, or "card: ttft p99 <= 500 ms"
  std::string source;      // "--accept" | "card SLO" | "card quality" | "quality"
  bool pass = false;
  bool confident = false;  // the whole interval is on the passing side (--accept only)
  std::string detail;      // "B/A - 1 = -12.3% [-15.1%, -9.8%]"
};

struct CompareOptions {
  metrics::BootstrapOptions bootstrap;
  std::vector<AcceptExpr> accept;
  const card::WorkloadCard* card = nullptr;  // judge B against this card's SLOs and quality floor
};

// Sweeps: the shift of max goodput under the SLO and of the knee.
struct SweepShift {
  std::string what;  // "max goodput load", "max goodput (req/s)", "knee load", "max throughput (req/s)"
  std::optional<double> a, b;
  std::string unit;
};

struct Comparison {
  std::string a_dir, b_dir;
  bool sweeps = false;
  ManifestDiff manifest;
  std::vector<MetricDelta> metrics;        // runs: in report order
  std::vector<SweepShift> sweep;           // sweeps
  std::vector<Finding> findings;           // loud ones first
  std::vector<AcceptResult> acceptance;
  bool accepted = true;                    // every acceptance result passed (true when there are none)
  metrics::BootstrapOptions bootstrap;     // as used
  std::vector<std::string> notes_a, notes_b;

  const MetricDelta* Find(const std::string& key) const;
};

Result<Comparison> CompareRuns(const RunInputs& a, const RunInputs& b, const CompareOptions& options);

// Two sweep directories (sweep.json each; the first point's manifest for what changed).
Result<Comparison> CompareSweeps(const std::string& a_dir, const std::string& b_dir, const CompareOptions& options);

// Loads A and B (run or sweep directories, both the same kind) and compares them.
// InvalidArgument when one is a sweep and the other a run.
Result<Comparison> CompareDirs(const std::string& a_dir, const std::string& b_dir, const CompareOptions& options);

}  // namespace infereng::job
