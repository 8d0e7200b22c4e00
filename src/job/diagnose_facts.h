// The facts `diagnose` reasons with, read from one run directory: summary.json (and its
// client extras), requests.jsonl (per-request relations the summary does not keep: TTFT
// against prompt length, ITL spikes against other requests' prefills, TTFT over the window)
// and engine_metrics.jsonl (the engine's canonical signals on the same time axis,
// client/engine_signals.h). Every figure says where it came from, so a hypothesis can cite it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "metrics/summary.h"

namespace infereng::job {

// One canonical signal over the run (seconds since t0, value).
struct SignalSeries {
  std::vector<double> t_s, v;
  bool empty() const { return v.empty(); }
  double Max() const;
  double Mean() const;
  double Sum() const;
  // Mean of the points in [from_s, to_s); NaN when none.
  double MeanBetween(double from_s, double to_s) const;
};

struct RunFacts {
  std::string dir;
  metrics::Summary summary;
  std::optional<double> client_cpu_s;  // summary.json "client".cpu_s (bench/run only)
  // summary.json "client".saturation (job/client_saturation.h): the client's own verdict
  // from its receive stamps, io-thread CPU and steady-phase lag; null before issue 17.
  nlohmann::json client_saturation;
  std::string summary_path, records_path, engine_path;

  // From requests.jsonl: in-window, successful requests.
  int64_t requests_used = 0;
  double prompt_tokens_mean = 0;            // usage.prompt_tokens, else the target
  double prompt_ttft_correlation = 0;       // Pearson r of prompt tokens vs TTFT (0: too few)
  double ttft_long_over_short = 0;          // median TTFT, longest prompt quartile / shortest (0: n/a)
  double ttft_first_third_ms = 0, ttft_last_third_ms = 0;  // mean TTFT by send time, window thirds
  int64_t itl_gaps = 0;                     // gaps between chunks of one request
  int64_t itl_spikes = 0;                   // gaps > 3x the median gap
  double spikes_with_prefill = 0;           // share of spikes during which another request got its first token
  double gaps_with_prefill = 0;             // the same share for every gap (the baseline)
  double sent_cv = 0;                       // coefficient of variation of sends per timeseries bucket

  // From engine_metrics.jsonl.
  std::string engine;                       // "" when there is no series
  std::vector<std::string> missing_signals;
  std::map<std::string, SignalSeries> signals;
  int64_t engine_scrape_errors = 0;

  const SignalSeries* Signal(const std::string& name) const;
};

// Reads DIR (a run directory, or a trial of one). NotFound naming the file when there is
// no summary.json; a bad engine_metrics.jsonl line is InvalidArgument naming PATH:LINE.
Result<RunFacts> LoadRunFacts(const std::string& dir);

}  // namespace infereng::job
