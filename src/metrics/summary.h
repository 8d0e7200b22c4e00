// Summary: everything a run (measured by bench or simulated by the twin) reports, in one
// schema (docs/results-schema.md, JSON in metrics/summary_json.h), and the streaming
// SummaryAccumulator that builds it from RequestRecords exactly as docs/metrics.md defines.
//
// Populations (see docs/metrics.md in this repo for the full statement):
// - The measurement window W = [t0 + warmup, last scheduled send] on t_sched. Records whose
//   t_sched is outside W are counted (counts.records, excluded_*) but excluded from every
//   percentile, from SLO attainment, errors and goodput.
// - Latency distributions use successful in-window requests; errors are counted by class.
// - Output/request throughput count events whose time lies in W (tokens by chunk arrival,
//   requests by their last output chunk), divided by |W|: the steady-state system rate.
// - SLOs, two notions (card/slo.h): percentile objectives are judged on the pooled
//   percentile (SloResult); goodput and attainment count requests meeting every
//   per-request threshold (ThresholdResult: slo.goodput, or the card's highest-percentile
//   objective per metric).
// - Goodput = requests that succeeded, met every per-request threshold and passed the
//   quality check (when checked), counted like request throughput (last output chunk in
//   W), divided by |W|: goodput <= request throughput always.
//
// Two modes: kExact keeps raw samples (numpy-exact percentiles; default for bench) and
// kHistogram keeps LogHistograms (memory independent of the number of records, relative
// error stated in the summary; for long simulations). Time series are bounded in both.
//
// Thread-safety: SummaryAccumulator is single-threaded; feed it from one thread (or merge
// records first). Finish() does not consume the accumulator and may be called repeatedly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "core/clock.h"
#include "core/histogram.h"
#include "core/stats.h"
#include "metrics/embeddings_summary.h"
#include "metrics/audio_summary.h"
#include "metrics/vision_summary.h"
#include "metrics/record.h"
#include "metrics/sessions.h"

namespace infereng::metrics {

using stats::SampleStats;

// One percentile objective of the card, judged on the run's percentile.
struct SloResult {
  std::string metric;          // as in the card: "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms"
  std::string measured_as;     // summary key it was evaluated on, e.g. "ttft_incl_queue_ms"
  double percentile = 99;
  double threshold_ms = 0;
  // The percentile of the pooled in-window distribution; pass = value <= threshold.
  // No samples: value_ms 0, pass false, and tables print "n/a" with the reason.
  double value_ms = 0;
  bool pass = false;
  int64_t samples = 0;         // size of the distribution value_ms came from
  // Informational: in-window requests checked / whose own value met this threshold
  // (errors are misses). Attainment and goodput use the per-request thresholds instead.
  int64_t requests_checked = 0;
  int64_t requests_met = 0;

  friend bool operator==(const SloResult&, const SloResult&) = default;
};

// One per-request threshold of goodput and attainment, with how many requests met it.
struct ThresholdResult {
  card::RequestThreshold threshold;
  int64_t requests_checked = 0;  // in-window requests (errors are misses)
  int64_t requests_met = 0;

  friend bool operator==(const ThresholdResult&, const ThresholdResult&) = default;
};

// One time-series bucket [start_s, start_s + width_s) relative to t0.
struct TimeBucket {
  double start_s = 0;
  double width_s = 1;
  int64_t sent = 0;            // requests whose t_send falls here
  int64_t completed = 0;       // successful requests whose last output chunk falls here
  int64_t errors = 0;          // failed requests whose t_end (or t_send) falls here
  int64_t output_tokens = 0;   // tokens of chunks arriving here
  double in_flight = 0;        // time-averaged requests between t_send and t_end
  int64_t ttft_count = 0;      // first tokens arriving here
  double ttft_mean_ms = 0;     // TTFT (from t_send) of those first tokens
  double ttft_p99_ms = 0;      // from a small histogram (relative error <= 1/32)

  friend bool operator==(const TimeBucket&, const TimeBucket&) = default;
};

struct SummaryCounts {
  int64_t records = 0;           // every record added
  int64_t in_window = 0;         // t_sched inside the window
  int64_t excluded_before = 0;   // t_sched before the window (warm-up)
  int64_t excluded_after = 0;    // t_sched after the window end
  int64_t succeeded = 0;         // in window, ok
  int64_t failed = 0;            // in window, error
  int64_t slo_met = 0;           // in window, ok and met every per-request threshold
  int64_t good = 0;              // slo_met and quality passed (or not checked)
  int64_t quality_checked = 0;   // in window, ok, quality_pass != -1
  int64_t quality_passed = 0;
  int64_t output_tokens = 0;     // sum of OutputTokens() of successful in-window requests
  int64_t window_output_tokens = 0;  // tokens whose chunk arrived inside the window (any record)
  int64_t window_completed = 0;  // successful requests whose last chunk arrived inside the window
  int64_t zero_output = 0;       // successful in-window requests with 0 output tokens
  int64_t with_reasoning = 0;    // successful in-window requests that reasoned (reasoning tokens > 0)
  int64_t reasoning_tokens = 0;  // their reasoning tokens (usage's count, else the stream's)
  int64_t reasoning_from_usage = 0;   // ... of which counted by usage's reasoning_tokens
  int64_t reasoning_from_stream = 0;  // ... of which counted from the reasoning chunks
  int64_t cold = 0;              // in-window requests marked cold
  // Cancelled in flight when the client stopped the run (ErrorClass::kInterrupted), any
  // window: in `records` only, in no other count, rate, percentile or attainment.
  int64_t interrupted = 0;
  // In-window responses whose `timings` object was malformed (ignored: no phases).
  int64_t server_timings_malformed = 0;
  // Successful requests whose TTFT split has no queue part (the engine reports none, as
  // llama.cpp): their client+network figure includes the engine's queue.
  int64_t ttft_split_without_queue = 0;

  friend bool operator==(const SummaryCounts&, const SummaryCounts&) = default;
};

struct Summary {
  static constexpr const char* kSchema = "infereng.summary/1";
  std::string source = "measured";   // "measured" | "simulated"
  bool partial = false;              // run interrupted: the numbers cover what finished
  bool open_loop = true;             // SLOs evaluated on the incl.-queue variants
  std::string percentile_method = "exact";  // "exact" | "histogram"
  double histogram_relative_error = 0;      // 0 for exact

  // Window relative to t0, seconds. rate_basis_s is the denominator of every rate: the
  // window length, or (window of zero length, e.g. one request) the span from the window
  // start to the last in-window completion, flagged by rate_basis = "completion_span".
  double window_start_s = 0, window_end_s = 0;
  double rate_basis_s = 0;
  std::string rate_basis = "window";

  // TTFT visible: first non-reasoning output; a request without reasoning: its TTFT.
  SampleStats ttft_ms, ttft_incl_queue_ms, ttft_visible_ms, ttft_visible_incl_queue_ms;
  SampleStats e2e_ms, e2e_incl_queue_ms, stream_close_ms;
  SampleStats tpot_ms, itl_ms, inter_chunk_ms, itl_p99_per_request_ms;
  SampleStats schedule_lag_ms, queue_ms, prefill_ms;
  // The TTFT split (derive.h): TTFT - queue - prefill; and the engine's decode phase.
  SampleStats ttft_client_network_ms, decode_ms;
  SampleStats output_tokens, decode_rate_per_user_tok_s;  // per request; 1/TPOT
  SampleStats reasoning_tokens;    // per request, over the requests that reasoned only

  double output_tokens_per_s = 0;  // system-wide, window
  // Reasoning models: the non-reasoning (visible) share of output_tokens_per_s, and the
  // share of successful in-window output tokens that were reasoning (0 without any).
  double visible_output_tokens_per_s = 0;
  double reasoning_share = 0;
  double requests_per_s = 0;       // completed successfully in the window
  double offered_rps = 0;          // in-window scheduled requests / rate basis
  double achieved_rps = 0;         // in-window requests actually sent / rate basis
  double goodput_rps = 0;
  double slo_attainment = 0;       // slo_met / in_window (the success rate without thresholds)
  double slo_attainment_target = 0.99;
  bool slo_attainment_pass = false;
  bool schedule_lag_flagged = false;  // schedule_lag p99 > 1 ms: the client shaped the run

  std::vector<SloResult> slo;                      // percentile objectives
  std::vector<ThresholdResult> goodput_thresholds;  // per-request thresholds (goodput, attainment)
  std::optional<double> min_output_tokens_per_s;  // the card's throughput floor, if any
  bool slo_pass = false;  // every run-level SLO, the attainment target and the floor pass

  std::map<std::string, int64_t> errors;  // ErrorClassName -> in-window count (no "none")
  std::map<std::string, int64_t> token_sources;  // TokenSourceName -> in-window count
  std::string token_source;  // the single source, or "mixed", or "" with no records

  SummaryCounts counts;

  // Sessions and agent tasks (metrics/sessions.h); absent when no record is a session call.
  std::optional<SessionSummary> sessions;
  // Embeddings (metrics/embeddings_summary.h); absent when no record is an embeddings
  // request. An embeddings run has no TTFT/ITL/TPOT: those distributions stay empty and the
  // JSON leaves them out.
  std::optional<EmbeddingsSummary> embeddings;
  // Vision inputs (metrics/vision_summary.h); absent when no record carried an image.
  std::optional<VisionSummary> vision;
  // Transcription (metrics/audio_summary.h); absent when no record carried audio.
  std::optional<AudioSummary> audio;

  double timeseries_bucket_s = 1;
  std::vector<TimeBucket> timeseries;

  // Histogram mode only: the pooled histograms by summary key ("ttft_ms", "itl_ms", ...),
  // so runs can be merged later with a stated error. Empty in exact mode.
  std::map<std::string, LogHistogram> histograms;
};

// The distributions of a Summary, in report order: JSON key, table label and member. JSON,
// tables and trials all iterate this one list.
struct DistributionField {
  const char* key;    // "ttft_ms"
  const char* label;  // "TTFT"
  SampleStats Summary::*member;
};
const std::vector<DistributionField>& SummaryDistributions();

struct AccumulatorOptions {
  enum class Mode { kExact, kHistogram };
  Mode mode = Mode::kExact;
  std::string source = "measured";
  Nanos t0 = 0;                        // the run's time origin (same clock as the records)
  Nanos warmup = 0;                    // window starts at t0 + warmup
  std::optional<Nanos> window_end;     // absolute; default: the last t_sched seen
  bool open_loop = true;               // SLOs use the incl.-queue TTFT / E2E in open loop
  card::SloSpec slo;                   // latency targets, attainment target, throughput floor
  double timeseries_bucket_s = 1;      // initial bucket width
  int max_timeseries_buckets = 600;    // adjacent buckets merge (width doubles) beyond this
  HistogramOptions histogram;          // histogram mode; values in milliseconds
  bool session_tasks = false;          // the card's sessions are agent tasks (naming only)
};

class SummaryAccumulator {
 public:
  explicit SummaryAccumulator(AccumulatorOptions options = {});
  ~SummaryAccumulator();
  SummaryAccumulator(SummaryAccumulator&&) noexcept;
  SummaryAccumulator& operator=(SummaryAccumulator&&) noexcept;

  void Add(const RequestRecord& record);
  // Marks the summary partial (the run was interrupted).
  void SetPartial(bool partial);
  Summary Finish() const;

  int64_t added() const;
  const AccumulatorOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience: one pass over records.
Summary Summarize(const std::vector<RequestRecord>& records, const AccumulatorOptions& options);

}  // namespace infereng::metrics
