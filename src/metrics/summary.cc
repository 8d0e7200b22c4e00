// SummaryAccumulator: pools per-request metrics (metrics/derive.h) into a Summary.
// Definitions and populations: docs/metrics.md (this repo) and the header comment of
// metrics/summary.h.
#include "metrics/summary.h"

#include <algorithm>
#include <array>
#include <limits>

#include "card/slo.h"
#include "metrics/derive.h"
#include "metrics/request_slo.h"
#include "metrics/sample_sink.h"
#include "metrics/timeseries.h"

namespace infereng::metrics {
namespace {

// Distribution slots, in the order of Summary's members.
enum Dist {
  kTtft, kTtftQ, kTtftVis, kTtftVisQ, kE2e, kE2eQ, kStreamClose, kTpot, kItl, kInterChunk, kItlP99Req,
  kSchedLag, kQueue, kPrefill, kClientNet, kDecode, kOutTokens, kDecodeRate, kReasoningTokens, kNumDists
};

constexpr std::array<DistributionField, kNumDists> kDists = {{
    {"ttft_ms", "TTFT", &Summary::ttft_ms},
    {"ttft_incl_queue_ms", "TTFT incl. queue", &Summary::ttft_incl_queue_ms},
    {"ttft_visible_ms", "TTFT visible", &Summary::ttft_visible_ms},
    {"ttft_visible_incl_queue_ms", "TTFT visible incl. q", &Summary::ttft_visible_incl_queue_ms},
    {"e2e_ms", "E2E", &Summary::e2e_ms},
    {"e2e_incl_queue_ms", "E2E incl. queue", &Summary::e2e_incl_queue_ms},
    {"stream_close_ms", "Stream close lag", &Summary::stream_close_ms},
    {"tpot_ms", "TPOT", &Summary::tpot_ms},
    {"itl_ms", "ITL (token)", &Summary::itl_ms},
    {"inter_chunk_ms", "Inter-chunk", &Summary::inter_chunk_ms},
    {"itl_p99_per_request_ms", "Per-request P99 ITL", &Summary::itl_p99_per_request_ms},
    {"schedule_lag_ms", "Schedule lag", &Summary::schedule_lag_ms},
    {"queue_ms", "Server queue", &Summary::queue_ms},
    {"prefill_ms", "Server prefill", &Summary::prefill_ms},
    {"ttft_client_network_ms", "TTFT client+network", &Summary::ttft_client_network_ms},
    {"decode_ms", "Server decode", &Summary::decode_ms},
    {"output_tokens", "Output tokens/req", &Summary::output_tokens},
    {"decode_rate_per_user_tok_s", "Per-user decode tok/s", &Summary::decode_rate_per_user_tok_s},
    {"reasoning_tokens", "Reasoning tokens/req", &Summary::reasoning_tokens},
}};

// Which distribution a card metric is checked against (open loop: incl. queue).
Dist SloDist(const std::string& metric, bool open_loop, bool* known) {
  *known = true;
  if (metric == "ttft_ms") return open_loop ? kTtftQ : kTtft;
  if (metric == "ttft_visible_ms") return open_loop ? kTtftVisQ : kTtftVis;
  if (metric == "e2e_ms") return open_loop ? kE2eQ : kE2e;
  if (metric == "tpot_ms") return kTpot;
  if (metric == "itl_ms") return kItl;
  *known = false;
  return kTtft;
}

// Per-request check of one threshold (docs/metrics.md, "SLO evaluation"); `percentile`
// only matters for itl_ms (the request's own ITL at that percentile).
bool RequestMeets(const std::string& metric, double percentile, double threshold_ms, const RequestMetrics& m,
                  bool open_loop) {
  if (metric == "ttft_ms") {
    const auto& v = open_loop ? m.ttft_incl_queue_ms : m.ttft_ms;
    return v.has_value() && *v <= threshold_ms;  // no token at all: a miss
  }
  if (metric == "ttft_visible_ms") {  // judged like TTFT; no visible token at all: a miss
    const auto& v = open_loop ? m.ttft_visible_incl_queue_ms : m.ttft_visible_ms;
    return v.has_value() && *v <= threshold_ms;
  }
  if (metric == "e2e_ms") {
    const auto& v = open_loop ? m.e2e_incl_queue_ms : m.e2e_ms;
    return v.has_value() && *v <= threshold_ms;
  }
  if (metric == "tpot_ms") return !m.tpot_ms || *m.tpot_ms <= threshold_ms;  // n/a: met
  if (metric == "itl_ms") {
    // The request's own ITL at the percentile (same rule as RequestItlPercentile).
    if (m.itl_ms.empty()) return true;  // no gaps: met
    const double own = percentile == 99 && m.itl_p99_ms ? *m.itl_p99_ms  // already derived
                                                        : stats::PercentileOf(m.itl_ms, percentile);
    return own <= threshold_ms;
  }
  return false;  // unknown metric: never silently met
}

// A window shorter than this cannot be a rate's denominator: 1,000 requests scheduled
// within a nanosecond made "offered 999400000000/s". Such a window is a burst; rates use
// the completion span instead (as for a zero-length window).
constexpr Nanos kMinRateWindow = kNanosPerSecond / 1000;

// The end of the rate window when it is known before any record arrives: an explicit
// window end at least kMinRateWindow long (a shorter one falls back to the completion span).
std::optional<Nanos> KnownRateEnd(const AccumulatorOptions& o) {
  if (o.window_end && *o.window_end - (o.t0 + o.warmup) >= kMinRateWindow) return o.window_end;
  return std::nullopt;
}

}  // namespace

// Embeddings and rerank requests (RequestRecord::items > 0): their tallies
// (metrics/embeddings_summary.h).
struct EmbeddingsTally {
  EmbeddingsTally(bool exact, Nanos window_start, const AccumulatorOptions& o)
      : window_items(exact, window_start, KnownRateEnd(o)),
        window_tokens(exact, window_start, KnownRateEnd(o)),
        items_per_request(exact, o.histogram),
        tokens_per_item(exact, o.histogram) {}
  bool any = false;
  EmbeddingsSummary totals;  // the counts; rates and distributions filled by Finish
  EventTally window_items, window_tokens;
  SampleSink items_per_request, tokens_per_item;

  // A successful request that ended at `done` (rates count it by that time).
  void AddCompletion(const RequestRecord& r, Nanos done) {
    window_items.Add(done, r.items);
    window_tokens.Add(done, EmbeddingInputTokens(r));
  }
  // A successful in-window request.
  void AddInWindow(const RequestRecord& r) {
    const int64_t tokens = EmbeddingInputTokens(r);
    ++totals.requests;
    totals.items += r.items;
    totals.input_tokens += tokens;
    items_per_request.Add(static_cast<double>(r.items));
    tokens_per_item.Add(static_cast<double>(tokens) / static_cast<double>(r.items));
  }
  EmbeddingsSummary Finish(Nanos rate_end, double basis) const {
    EmbeddingsSummary e = totals;
    e.window_items = static_cast<int64_t>(window_items.CountUpTo(rate_end) + 0.5);
    e.window_input_tokens = static_cast<int64_t>(window_tokens.CountUpTo(rate_end) + 0.5);
    if (basis > 0) {
      e.items_per_s = window_items.CountUpTo(rate_end) / basis;
      e.input_tokens_per_s = window_tokens.CountUpTo(rate_end) / basis;
    }
    e.items_per_request = items_per_request.Stats();
    e.input_tokens_per_item = tokens_per_item.Stats();
    return e;
  }
};

// Requests with images (RequestRecord::images > 0): their tallies (metrics/vision_summary.h).
struct VisionTally {
  VisionTally(bool exact, Nanos window_start, const AccumulatorOptions& o)
      : window_images(exact, window_start, KnownRateEnd(o)) {}
  bool any = false;
  VisionSummary totals;  // the counts; the rate filled by Finish
  EventTally window_images;

  void AddInWindow(const RequestRecord& r) {
    ++totals.requests;
    totals.images += r.images;
    totals.image_tokens += r.image_tokens;
  }
  VisionSummary Finish(Nanos rate_end, double basis) const {
    VisionSummary v = totals;
    v.window_images = static_cast<int64_t>(window_images.CountUpTo(rate_end) + 0.5);
    if (basis > 0) v.images_per_s = window_images.CountUpTo(rate_end) / basis;
    return v;
  }
};

// Transcription requests (RequestRecord::audio_ms > 0): their tallies (metrics/audio_summary.h).
struct AudioTally {
  AudioTally(bool exact, Nanos window_start, const AccumulatorOptions& o)
      : window_audio_ms(exact, window_start, KnownRateEnd(o)), rtf(exact, o.histogram) {}
  bool any = false;
  AudioSummary totals;  // the counts; the rate and the RTF filled by Finish
  int64_t audio_ms = 0;
  EventTally window_audio_ms;
  SampleSink rtf;

  void AddInWindow(const RequestRecord& r, const std::optional<double>& e2e_ms) {
    ++totals.requests;
    audio_ms += r.audio_ms;
    totals.audio_tokens += r.audio_tokens;
    if (e2e_ms) rtf.Add(*e2e_ms / static_cast<double>(r.audio_ms));
  }
  AudioSummary Finish(Nanos rate_end, double basis) const {
    AudioSummary a = totals;
    a.audio_s = static_cast<double>(audio_ms) / 1000.0;
    a.window_audio_s = window_audio_ms.CountUpTo(rate_end) / 1000.0;
    if (basis > 0) a.audio_s_per_s = a.window_audio_s / basis;
    a.rtf = rtf.Stats();
    return a;
  }
};

struct SummaryAccumulator::Impl {
  explicit Impl(AccumulatorOptions o)
      : options(std::move(o)),
        exact(options.mode == AccumulatorOptions::Mode::kExact),
        window_start(options.t0 + options.warmup),
        window_tokens(exact, window_start, KnownRateEnd(options)),
        window_completions(exact, window_start, KnownRateEnd(options)),
        window_good(exact, window_start, KnownRateEnd(options)),
        window_reasoning(exact, window_start, KnownRateEnd(options)),
        embeddings(exact, window_start, options),
        vision(exact, window_start, options),
        audio(exact, window_start, options),
        timeseries(options.t0, options.timeseries_bucket_s, options.max_timeseries_buckets),
        sessions(SessionTallyOptions{.window_start = window_start,
                                     .window_end = options.window_end,
                                     .exact = exact,
                                     .histogram = options.histogram,
                                     .task_ms = options.slo.task_ms}) {
    sinks.reserve(kNumDists);
    for (int i = 0; i < kNumDists; ++i) sinks.emplace_back(exact, options.histogram);
    slo_checked.assign(options.slo.latency.size(), 0);
    slo_met.assign(options.slo.latency.size(), 0);
    for (card::RequestThreshold& t : card::GoodputThresholds(options.slo)) thresholds.push_back({.threshold = std::move(t)});
  }

  void Add(const RequestRecord& r);
  void AddReasoningTokens(const RequestRecord& r, const RequestMetrics& m);
  Summary Finish() const;

  AccumulatorOptions options;
  bool exact;
  Nanos window_start;
  Nanos max_sched = std::numeric_limits<Nanos>::min();
  Nanos max_completion_in_window = std::numeric_limits<Nanos>::min();
  int64_t added = 0;
  int64_t sent_in_window = 0;
  bool partial = false;
  std::vector<SampleSink> sinks;
  EventTally window_tokens, window_completions, window_good;
  EventTally window_reasoning;  // reasoning tokens by arrival (visible = tokens - these)
  EmbeddingsTally embeddings;
  VisionTally vision;
  AudioTally audio;
  TimeSeriesBuilder timeseries;
  std::vector<int64_t> slo_checked, slo_met;
  std::vector<int64_t> slo_scratch;  // per-objective result of the record being added
  std::vector<ThresholdResult> thresholds;  // per-request thresholds and their tallies
  std::vector<int64_t> threshold_scratch;   // per-threshold result of the record being added
  RequestMetrics derived;            // the record being added (vectors keep their capacity)
  std::map<std::string, int64_t> errors, token_sources;
  SummaryCounts counts;
  SessionTally sessions;
};

void SummaryAccumulator::Impl::Add(const RequestRecord& r) {
  ++added;
  sessions.Add(r);
  embeddings.any = embeddings.any || r.items > 0;
  embeddings.totals.rerank = embeddings.totals.rerank || (r.items > 0 && r.query_tokens > 0);
  vision.any = vision.any || r.images > 0;
  audio.any = audio.any || r.audio_ms > 0;
  ++counts.records;
  if (r.error == ErrorClass::kInterrupted) {
    // Cancelled when the client stopped the run: no server outcome to judge (metrics.md).
    ++counts.interrupted;
    return;
  }
  DeriveRequestInto(r, DeriveOptions{}, derived);
  const RequestMetrics& m = derived;
  timeseries.Add(r, r.ok() && m.ttft_ms ? *m.ttft_ms : -1);

  // Throughput events count by time, whatever the request's own t_sched.
  // Only completed (successful) requests count. Tokens are dated by their chunk; when the
  // server's usage differs from what the chunks carried, the difference is dated at the
  // last chunk (usage is the authoritative count).
  // SLO checks for every record: goodput counts good completions on the same time basis
  // as request throughput (so goodput <= requests/s always); attainment counts in-window
  // requests by their t_sched.
  // Goodput and attainment count the per-request thresholds (card/slo.h); each percentile
  // objective's own per-request share is kept for information only.
  slo_scratch.assign(options.slo.latency.size(), 0);
  for (size_t i = 0; i < options.slo.latency.size(); ++i) {
    const card::SloTarget& t = options.slo.latency[i];
    slo_scratch[i] = r.ok() && RequestMeets(t.metric, t.percentile, t.threshold_ms, m, options.open_loop);
  }
  threshold_scratch.assign(thresholds.size(), 0);
  bool all_met = r.ok();
  for (size_t i = 0; i < thresholds.size(); ++i) {
    const card::RequestThreshold& t = thresholds[i].threshold;
    threshold_scratch[i] = r.ok() && RequestMeets(t.metric, t.percentile, t.threshold_ms, m, options.open_loop);
    all_met = all_met && threshold_scratch[i];
  }
  if (r.ok()) {
    window_tokens.AddChunks(r.chunks);
    if (!r.chunks.empty()) window_tokens.Add(r.chunks.back().t, m.output_tokens - m.chunk_tokens);
    if (m.reasoning_tokens > 0) AddReasoningTokens(r, m);
    const Nanos done = r.chunks.empty() ? r.t_end : r.chunks.back().t;
    if (done >= 0) {
      window_completions.Add(done, 1);
      if (r.items > 0) embeddings.AddCompletion(r, done);
      if (r.images > 0) vision.window_images.Add(done, r.images);
      if (r.audio_ms > 0) audio.window_audio_ms.Add(done, r.audio_ms);
      if (all_met && r.quality_pass != 0) window_good.Add(done, 1);
    }
  }

  if (r.t_sched > max_sched) max_sched = r.t_sched;
  if (r.t_sched < window_start) {
    ++counts.excluded_before;
    return;
  }
  if (options.window_end && r.t_sched > *options.window_end) {
    ++counts.excluded_after;
    return;
  }
  ++counts.in_window;
  if (r.t_send >= 0) ++sent_in_window;
  if (r.cold) ++counts.cold;
  if (r.server_timings_malformed) ++counts.server_timings_malformed;
  ++token_sources[std::string(TokenSourceName(r.token_source))];
  if (m.schedule_lag_ms) sinks[kSchedLag].Add(*m.schedule_lag_ms);
  const Nanos end = r.chunks.empty() ? r.t_end : std::max(r.t_end, r.chunks.back().t);
  if (end > max_completion_in_window) max_completion_in_window = end;

  for (size_t i = 0; i < options.slo.latency.size(); ++i) {
    ++slo_checked[i];
    slo_met[i] += slo_scratch[i];
  }
  for (size_t i = 0; i < thresholds.size(); ++i) {
    ++thresholds[i].requests_checked;
    thresholds[i].requests_met += threshold_scratch[i];
  }

  if (!r.ok()) {
    ++counts.failed;
    ++errors[std::string(ErrorClassName(r.error))];
    return;
  }
  ++counts.succeeded;
  counts.output_tokens += m.output_tokens;
  if (m.reasoning_tokens > 0) {
    ++counts.with_reasoning;
    counts.reasoning_tokens += m.reasoning_tokens;
    ++(m.reasoning_from_usage ? counts.reasoning_from_usage : counts.reasoning_from_stream);
    sinks[kReasoningTokens].Add(static_cast<double>(m.reasoning_tokens));
  }
  // An embeddings request has no output tokens by design: not a "zero output" anomaly.
  if (m.output_tokens == 0 && r.items == 0) ++counts.zero_output;
  if (r.items > 0) embeddings.AddInWindow(r);
  if (r.images > 0) vision.AddInWindow(r);
  if (r.audio_ms > 0) audio.AddInWindow(r, m.e2e_ms);
  if (all_met) {
    ++counts.slo_met;
    if (r.quality_pass != 0) ++counts.good;
  }
  if (r.quality_pass != -1) {
    ++counts.quality_checked;
    if (r.quality_pass == 1) ++counts.quality_passed;
  }

  auto put = [this](Dist d, const std::optional<double>& v) {
    if (v) sinks[d].Add(*v);
  };
  put(kTtft, m.ttft_ms);
  put(kTtftQ, m.ttft_incl_queue_ms);
  put(kTtftVis, m.ttft_visible_ms);
  put(kTtftVisQ, m.ttft_visible_incl_queue_ms);
  put(kE2e, m.e2e_ms);
  put(kE2eQ, m.e2e_incl_queue_ms);
  put(kStreamClose, m.stream_close_ms);
  put(kTpot, m.tpot_ms);
  put(kItlP99Req, m.itl_p99_ms);
  put(kQueue, m.queue_ms);
  put(kPrefill, m.prefill_ms);
  put(kClientNet, m.ttft_client_network_ms);
  put(kDecode, m.decode_ms);
  if (m.ttft_client_network_ms && m.split_includes_queue) ++counts.ttft_split_without_queue;
  if (r.items == 0) sinks[kOutTokens].Add(static_cast<double>(m.output_tokens));
  if (m.tpot_ms && *m.tpot_ms > 0) sinks[kDecodeRate].Add(1000.0 / *m.tpot_ms);
  sinks[kItl].AddAll(m.itl_ms);
  sinks[kInterChunk].AddAll(m.inter_chunk_ms);
}

// Reasoning tokens dated like output tokens: each reasoning chunk's at its arrival; what
// the server's count adds beyond them (reasoning inside a mixed chunk, or usage-final
// counts spread evenly) at the first visible chunk, where the reasoning ended.
void SummaryAccumulator::Impl::AddReasoningTokens(const RequestRecord& r, const RequestMetrics& m) {
  if (r.chunks.empty()) return;
  Nanos end_of_reasoning = -1;
  for (const Chunk& c : r.chunks) {
    if (c.reasoning) {
      window_reasoning.Add(c.t, c.tokens);
    } else if (end_of_reasoning < 0) {
      end_of_reasoning = c.t;
    }
  }
  const int64_t in_chunks = m.chunk_tokens - m.visible_chunk_tokens;
  window_reasoning.Add(end_of_reasoning >= 0 ? end_of_reasoning : r.chunks.back().t, m.reasoning_tokens - in_chunks);
}

Summary SummaryAccumulator::Impl::Finish() const {
  Summary s;
  s.source = options.source;
  s.partial = partial;
  s.open_loop = options.open_loop;
  s.percentile_method = exact ? "exact" : "histogram";
  s.histogram_relative_error = exact ? 0 : LogHistogram(options.histogram).relative_error();

  const Nanos window_end =
      options.window_end ? *options.window_end
                         : (max_sched == std::numeric_limits<Nanos>::min() ? window_start
                                                                           : max_sched);
  s.window_start_s = NanosToSeconds(window_start - options.t0);
  s.window_end_s = NanosToSeconds(std::max(window_end, window_start) - options.t0);
  Nanos rate_end = window_end;
  if (window_end - window_start < kMinRateWindow) {
    // A zero-length window (one request, or everything scheduled at once): rate over the
    // span from the window start to the last in-window completion instead.
    s.rate_basis = "completion_span";
    rate_end = std::max(max_completion_in_window, window_start);
  }
  s.rate_basis_s = NanosToSeconds(rate_end - window_start);

  for (int i = 0; i < kNumDists; ++i) s.*(kDists[static_cast<size_t>(i)].member) = sinks[static_cast<size_t>(i)].Stats();
  if (!exact) {
    for (int i = 0; i < kNumDists; ++i) {
      s.histograms.emplace(kDists[static_cast<size_t>(i)].key, sinks[static_cast<size_t>(i)].histogram());
    }
  }

  s.counts = counts;
  s.counts.window_output_tokens = static_cast<int64_t>(window_tokens.CountUpTo(rate_end) + 0.5);
  s.counts.window_completed = static_cast<int64_t>(window_completions.CountUpTo(rate_end) + 0.5);
  if (s.rate_basis_s > 0) {
    const double basis = s.rate_basis_s;
    s.output_tokens_per_s = window_tokens.CountUpTo(rate_end) / basis;
    s.visible_output_tokens_per_s =
        std::max(0.0, window_tokens.CountUpTo(rate_end) - window_reasoning.CountUpTo(rate_end)) / basis;
    s.requests_per_s = window_completions.CountUpTo(rate_end) / basis;
    if (s.rate_basis == "window") {  // a burst has no offered rate (metrics/caveats.h)
      s.offered_rps = static_cast<double>(counts.in_window) / basis;
      s.achieved_rps = static_cast<double>(sent_in_window) / basis;
    }
    s.goodput_rps = window_good.CountUpTo(rate_end) / basis;
  }
  s.reasoning_share = counts.output_tokens > 0 ? static_cast<double>(counts.reasoning_tokens) /
                                                     static_cast<double>(counts.output_tokens)
                                               : 0;
  s.slo_attainment =
      counts.in_window > 0 ? static_cast<double>(counts.slo_met) / static_cast<double>(counts.in_window) : 0;
  s.slo_attainment_target = options.slo.attainment;
  s.slo_attainment_pass = counts.in_window > 0 && s.slo_attainment >= options.slo.attainment;
  s.schedule_lag_flagged = s.schedule_lag_ms.count > 0 && s.schedule_lag_ms.p99 > 1.0;

  if (sessions.any()) {
    s.sessions = sessions.Finish(s.rate_basis_s, options.session_tasks, options.slo.attainment);
  }

  if (embeddings.any) s.embeddings = embeddings.Finish(rate_end, s.rate_basis_s);
  if (vision.any) s.vision = vision.Finish(rate_end, s.rate_basis_s);
  if (audio.any) s.audio = audio.Finish(rate_end, s.rate_basis_s);

  bool all_pass = s.slo_attainment_pass;
  if (s.sessions && !s.sessions->task_slo_pass) all_pass = false;
  for (size_t i = 0; i < options.slo.latency.size(); ++i) {
    const card::SloTarget& t = options.slo.latency[i];
    SloResult r;
    r.metric = t.metric;
    r.percentile = t.percentile;
    r.threshold_ms = t.threshold_ms;
    r.requests_checked = slo_checked[i];
    r.requests_met = slo_met[i];
    bool known = false;
    const Dist d = SloDist(t.metric, options.open_loop, &known);
    if (known) {
      r.measured_as = kDists[d].key;
      const SampleSink& sink = sinks[d];
      r.samples = sink.count();
      if (sink.count() > 0) {
        r.value_ms = sink.Percentile(t.percentile);
        r.pass = r.value_ms <= t.threshold_ms;
      }
    }
    all_pass = all_pass && r.pass;
    s.slo.push_back(std::move(r));
  }
  s.goodput_thresholds = thresholds;
  s.min_output_tokens_per_s = options.slo.min_output_tokens_per_s;
  if (s.min_output_tokens_per_s) all_pass = all_pass && s.output_tokens_per_s >= *s.min_output_tokens_per_s;
  s.slo_pass = all_pass;

  s.errors = errors;
  s.token_sources = token_sources;
  if (token_sources.size() == 1) s.token_source = token_sources.begin()->first;
  if (token_sources.size() > 1) s.token_source = "mixed";

  s.timeseries_bucket_s = timeseries.bucket_s();
  s.timeseries = timeseries.Buckets();
  return s;
}

SummaryAccumulator::SummaryAccumulator(AccumulatorOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
SummaryAccumulator::~SummaryAccumulator() = default;
SummaryAccumulator::SummaryAccumulator(SummaryAccumulator&&) noexcept = default;
SummaryAccumulator& SummaryAccumulator::operator=(SummaryAccumulator&&) noexcept = default;

void SummaryAccumulator::Add(const RequestRecord& record) { impl_->Add(record); }
void SummaryAccumulator::SetPartial(bool partial) { impl_->partial = partial; }
Summary SummaryAccumulator::Finish() const { return impl_->Finish(); }
int64_t SummaryAccumulator::added() const { return impl_->added; }
const AccumulatorOptions& SummaryAccumulator::options() const { return impl_->options; }

const std::vector<DistributionField>& SummaryDistributions() {
  static const std::vector<DistributionField> kAll(kDists.begin(), kDists.end());
  return kAll;
}

Summary Summarize(const std::vector<RequestRecord>& records, const AccumulatorOptions& options) {
  SummaryAccumulator acc(options);
  for (const RequestRecord& r : records) acc.Add(r);
  return acc.Finish();
}

}  // namespace infereng::metrics

namespace infereng::metrics {

bool MeetsThresholds(const RequestRecord& r, const RequestMetrics& m, const std::vector<card::RequestThreshold>& thresholds,
                     bool open_loop) {
  if (!r.ok()) return false;
  for (const card::RequestThreshold& t : thresholds) {
    if (!RequestMeets(t.metric, t.percentile, t.threshold_ms, m, open_loop)) return false;
  }
  return true;
}

}  // namespace infereng::metrics
