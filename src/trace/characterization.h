// Characterization: what a production trace says about its traffic, in one pass over its
// records (TraceReader) — arrivals, lengths, prefix reuse, sessions — with the fitted
// forms the card's traffic section is written from (card_out.h).
//
// Memory: exact quantiles and goodness-of-fit need every inter-arrival gap and every
// length, so a trace costs ~24 bytes per request, plus 4 bytes per second of its span (the
// 1 s peak and the dispersion windows; spans over 100 days are refused), plus, with hash_ids,
// 8 bytes per distinct block seen and the LRU caches' sizes (and, without session ids, the
// conversation linker's ~70 bytes per distinct block), plus per-session and per-tenant
// counters. Nothing else grows with the file.
//
// Definitions (docs/characterize.md states them for users):
//   span = last arrival - first arrival; mean rate = requests / span.
//   CV = population stddev / mean of the gaps between consecutive arrivals.
//   index of dispersion at window w = variance / mean of the counts in the trace's complete
//     w-second windows (1 for poisson, > 1 bursty); peak-to-mean at w = the largest count in
//     a complete window / (mean rate * w).
//   quantiles: core/stats.h (numpy "linear").
//   goodness of fit: Kolmogorov-Smirnov distance D between the sample and the fitted CDF,
//     with the 5% critical value 1.36/sqrt(n) beside it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/stats.h"
#include "core/status.h"
#include "trace/conversation_linker.h"
#include "trace/lru_blocks.h"
#include "trace/record.h"

namespace infereng::trace {

struct CharacterizeOptions {
  int64_t block_tokens = 512;                              // tokens per hash_ids block (Mooncake: 512)
  std::vector<int64_t> cache_blocks = {1000, 10000, 100000};  // LRU prefix-cache sizes, in blocks
  // Sessions from hash_ids when the trace has no session ids (conversation_linker.h):
  // CharacterizeFile sets it when the reader resolved no session column.
  bool infer_sessions = false;
};

struct FitResult {
  std::string name;        // "poisson", "gamma", "lognormal"
  double ks_d = 0;         // Kolmogorov-Smirnov distance
  double a = 0, b = 0;     // parameters: gamma shape/scale; lognormal mu/sigma; exponential mean
  double max_quantile_error = 0;  // lengths: max |fit - sample| / sample at p10, p50, p90, p99
};

struct WindowFigure {
  double window_s = 0;
  int64_t windows = 0;  // complete windows in the span (0: the figure is undefined)
  double value = 0;     // index of dispersion, or peak-to-mean ratio
  double peak_rate = 0; // peaks: the busiest window's rate (req/s)
};

struct ArrivalStats {
  int64_t requests = 0;
  double first_t_s = 0, last_t_s = 0, span_s = 0;
  double mean_rate = 0;       // requests / span
  double gap_mean_s = 0, gap_cv = 0;
  int64_t zero_gaps = 0;      // coarse timestamps: equal consecutive times
  std::vector<int64_t> per_minute, per_hour;  // counts from the first arrival
  std::vector<WindowFigure> dispersion;       // 1 s, 10 s, 1 min, 10 min
  std::vector<WindowFigure> peak_to_mean;     // 1 s, 1 min, 1 h
  FitResult poisson, gamma;
  double ks_critical = 0;     // 1.36 / sqrt(gaps)
  std::string chosen;         // "poisson" or "gamma": the card's process
};

struct LengthStats {
  stats::SampleStats stats;
  double p10 = 0;
  int64_t zeros = 0;
  FitResult lognormal, gamma;  // lognormal matched to p50/p99 (the card's form); gamma by moments
  std::string best;            // lowest KS distance
  std::string card_form;       // "lognormal" when it meets every quantile within 5%, else "empirical"
  std::vector<double> sorted;  // the samples, ascending (the empirical form; not in JSON)
};

struct PrefixStats {
  bool present = false;
  int64_t block_tokens = 0;
  int64_t requests = 0, cached_prefix_requests = 0;  // requests with >= 1 leading block seen before
  double cached_share = 0;
  int64_t input_tokens = 0, reusable_tokens = 0;  // reusable = leading seen blocks * block size (<= input)
  double reusable_share = 0;
  double mean_cached_tokens = 0;   // among requests with a cached prefix
  stats::SampleStats cached_tokens;  // reusable tokens of the requests with a cached prefix
  int64_t tenant_count = 0;          // distinct tenants among requests with hashes (0: no tenant field)
  int64_t distinct_blocks = 0, distinct_prefixes = 0;  // prefixes: distinct last cached block
  struct Lru {
    int64_t blocks = 0;
    double hit_rate = 0;  // hit blocks / looked-up blocks (a hit counts while leading blocks hit)
  };
  std::vector<Lru> lru;
  struct Tenant {
    std::string tenant;
    int64_t requests = 0;
    double cached_share = 0, reusable_share = 0;
  };
  std::vector<Tenant> tenants;  // at most 20, most requests first
};

struct SessionStats {
  bool present = false;
  std::string source;      // "ids": the trace's session column; "inferred": from hash_ids (ConversationLinker)
  int64_t sessions = 0;
  int64_t follow_ups = 0;  // requests that continue a session (every turn after its first)
  stats::SampleStats turns, gap_s, growth_tokens;  // gap: between a session's arrivals
  // growth minus the previous turn's output tokens: the new message (and template) a turn
  // adds when it re-sends the conversation; negative when the answer was not re-sent whole.
  stats::SampleStats new_message_tokens;
  // For the card's sessions (card_out.h): the sessions' starts (rate, CV, fitted process:
  // ArrivalStats' mean_rate, gap_mean_s, gap_cv, fits and chosen only), their first turns'
  // input lengths and cached prefixes (with hash_ids), and as fitted samples the turns per
  // session, the time between turns in ms and the new message per turn (at least 1 token:
  // a turn that re-sent less than the previous answer counts as a 1-token message).
  ArrivalStats starts;
  LengthStats first_input, turns_fit, gap_ms, new_message_fit;
  int64_t first_cached_requests = 0, first_distinct_prefixes = 0;
  stats::SampleStats first_cached_tokens;
};

struct LittlesLaw {
  double latency_s = 0;
  std::string basis;
  double at_mean = 0, at_peak_1min = 0, at_peak_1s = 0;  // requests in flight = rate * latency
};

struct Characterization {
  std::string path, format, time_unit, sha256;
  bool absolute_time = false;  // times were date-times (the period prints as dates)
  ArrivalStats arrivals;
  LengthStats input, output;
  double pearson = 0, pearson_log = 0;  // input vs output (log: of lengths >= 1)
  PrefixStats prefix;
  SessionStats sessions;
  std::map<std::string, int64_t> categories;  // online/offline marker counts (when present)
  // Inputs per request (an embeddings log's batch size column), over the rows that give it.
  int64_t items_rows = 0;
  stats::SampleStats items;
  std::optional<LittlesLaw> littles;
};

// Accumulates records in trace order, then Finish() computes every statistic. Add's errors
// start with ":LINE: " for the caller to put the file name in front.
class Characterizer {
 public:
  explicit Characterizer(CharacterizeOptions options);
  Status Add(const TraceRecord& r);
  Result<Characterization> Finish();

 private:
  CharacterizeOptions options_;
  double first_t_ = 0, last_t_ = 0;
  int64_t n_ = 0;
  std::vector<double> gaps_, input_, output_, items_;
  std::vector<uint32_t> per_second_;
  double sx_ = 0, sy_ = 0, sxx_ = 0, syy_ = 0, sxy_ = 0;
  double lx_ = 0, ly_ = 0, lxx_ = 0, lyy_ = 0, lxy_ = 0;
  int64_t log_n_ = 0;
  // prefix reuse
  std::unordered_set<uint64_t> seen_blocks_, last_cached_, session_first_last_cached_;
  int64_t looked_up_blocks_ = 0;
  std::vector<double> cached_tokens_;
  std::vector<LruBlocks> lru_;
  PrefixStats prefix_;
  struct TenantAcc {
    int64_t requests = 0, cached = 0, input = 0, reusable = 0;
  };
  std::unordered_map<std::string, TenantAcc> tenants_;
  // sessions
  struct SessionAcc {
    int64_t turns = 0;
    double last_t = 0;
    int64_t last_input = 0, last_output = 0;
  };
  std::unordered_map<std::string, SessionAcc> sessions_;
  std::optional<ConversationLinker> linker_;  // options_.infer_sessions
  std::vector<double> session_gaps_, session_growth_, session_new_;
  std::vector<double> session_starts_, session_first_input_, session_first_cached_;  // per session
  std::map<std::string, int64_t> categories_;
};

// Requests in flight by Little's law (L = rate x time in system) at the mean rate and at
// the busiest minute and second, for a time in system `latency_s` (from a card's objectives).
LittlesLaw ApplyLittlesLaw(const ArrivalStats& a, double latency_s, std::string basis);

// Reads every record of `path` and characterises it (sha256 of the file's bytes included).
struct ReaderOptions;
Result<Characterization> CharacterizeFile(const std::string& path, const ReaderOptions& reader,
                                          const CharacterizeOptions& options);

}  // namespace infereng::trace
