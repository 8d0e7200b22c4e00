// The quality side of a run: the eval-set checks paired with the load, summarised so a
// person can act on them — the pass rate with its 95% Wilson score interval, the verdict
// against the card's quality.pass_threshold, the pass rate by check kind and over time,
// and the first failing cases (prompt, expected, what came back).
//
// Raw facts first (as for latency): the record pipeline stores one QualityOutcome per
// checked request; BuildQualityReport is a later pass over them with the summary's window
// rule (t_sched in [t0 + warmup, window_end]), so `checked`/`passed` equal the summary's
// counts.quality_checked/quality_passed. JSON keys: docs/results-schema.md ("quality").
//
// Why Wilson: the pass rate is a binomial proportion, often near 0 or 1 and over few
// checks; the normal ("Wald") interval collapses to a point at 0% or 100% and leaves
// [0, 1] for small n, while the Wilson score interval stays inside [0, 1] and keeps close
// to its nominal coverage (Brown, Cai & DasGupta 2001, "Interval Estimation for a Binomial
// Proportion"). `compare` reuses WilsonInterval to call a quality drop beyond the interval.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::metrics {

inline constexpr double kZ95 = 1.959963984540054;  // two-sided 95% normal quantile

struct ProportionCi {
  double low = 0;
  double high = 1;
};

// Wilson score interval of `successes` out of `n` at normal quantile `z`; n <= 0 gives
// [0, 1] (no information). successes is clamped to [0, n].
ProportionCi WilsonInterval(int64_t successes, int64_t n, double z = kZ95);

// The one quality rule: a run (or a trial) meets its floor when nothing was checked, no
// floor is set (threshold <= 0), or passed / checked >= threshold (the point estimate; the
// interval is shown beside it so a reader sees how sure that is).
bool QualityMeetsThreshold(int64_t passed, int64_t checked, double threshold);

// Failing cases kept per run, and the bytes kept of each text field.
inline constexpr size_t kMaxQualityFailures = 20;
inline constexpr size_t kQualityExcerptBytes = 240;

// `s` on one line, at most `max_bytes` bytes (cut on a UTF-8 boundary, "..." appended when
// cut): control characters and runs of whitespace become one space, so a model's output can
// never move a terminal's cursor or break a table row. HTML escaping is the report's job.
std::string QualityExcerpt(std::string_view s, size_t max_bytes = kQualityExcerptBytes);

// One checked request: raw facts from the record pipeline. Times are the record's
// (steady-clock ns, the same base as the records the pipeline saw).
struct QualityOutcome {
  uint64_t request_id = 0;
  int item = -1;             // 0-based index in the eval set
  std::string check{};       // "exact" | "contains" | "regex" | "json" | "json_schema" | "number"
  bool pass = false;
  Nanos t_sched = 0;
  Nanos t_done = 0;          // the last byte (t_end)
  // Failures only (empty on a pass), already excerpted and free of the API key.
  std::string prompt{}, expected{}, got{}, why{};
};

struct QualityTally {
  int64_t checked = 0;
  int64_t passed = 0;
  friend bool operator==(const QualityTally&, const QualityTally&) = default;
};

struct QualityBucket {
  double start_s = 0;        // relative to t0, by completion time
  double width_s = 1;
  int64_t checked = 0;
  int64_t passed = 0;
  friend bool operator==(const QualityBucket&, const QualityBucket&) = default;
};

struct QualityFailure {
  uint64_t request_id = 0;
  int item = -1;
  std::string check{};
  double t_s = 0;            // completion, seconds since t0
  std::string prompt{}, expected{}, got{}, why{};
  friend bool operator==(const QualityFailure&, const QualityFailure&) = default;
};

struct QualityReport {
  int64_t checked = 0;
  int64_t passed = 0;
  double pass_threshold = 0;                   // 0: no floor
  std::map<std::string, QualityTally> by_check{};
  std::vector<QualityBucket> timeseries{};     // contiguous buckets from the first check
  std::vector<QualityFailure> failures{};      // the first kMaxQualityFailures, by completion

  std::optional<double> PassRate() const;      // nullopt when nothing was checked
  ProportionCi Interval() const { return WilsonInterval(passed, checked); }
  bool Pass() const { return QualityMeetsThreshold(passed, checked, pass_threshold); }
  friend bool operator==(const QualityReport&, const QualityReport&) = default;
};

struct QualityWindow {
  Nanos t0 = 0;                        // the run's t0 (times in the report are relative to it)
  Nanos start = 0;                     // t0 + warm-up
  std::optional<Nanos> end{};          // last scheduled send in the window (none: open)
  double bucket_s = 1;                 // time-series bucket width
  size_t max_buckets = 600;            // wider buckets (doubling) beyond this many
};

// The report of the outcomes whose t_sched lies in `w` (the summary's window rule).
QualityReport BuildQualityReport(const std::vector<QualityOutcome>& outcomes, const QualityWindow& w,
                                 double pass_threshold);

// summary.json "quality": {checked, passed, pass_rate, ci_low, ci_high, confidence,
// interval, pass_threshold, pass, by_check, timeseries, failures, failures_shown}.
nlohmann::json QualityReportToJson(const QualityReport& q);
// What QualityReportToJson wrote; InvalidArgument naming the key that has a wrong type.
// Keys other than checked/passed/pass_threshold may be missing (older summaries).
Result<QualityReport> QualityReportFromJson(const nlohmann::json& j);

// Terminal: "quality: 140 of 200 passed (70.0%, 95% CI [63.3%, 75.9%]) threshold 80% FAIL",
// a by-check line when there is more than one kind, and the first `max_failures` failing
// cases (two lines each). `color`: PASS/FAIL in ANSI colour.
std::string FormatQualityLines(const QualityReport& q, size_t max_failures, bool color);

// "quality pass rate 33.3% (95% CI [..]) is below the threshold 50%": why a run failed on
// quality ("" when it did not).
std::string QualityFailureReason(const QualityReport& q);

}  // namespace infereng::metrics
