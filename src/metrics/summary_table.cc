#include "metrics/summary_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "card/slo.h"
#include "metrics/caveats.h"

namespace infereng::metrics {
namespace {

std::string Num(double v) {
  const double a = std::abs(v);
  if (a >= 10000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string PassFail(bool pass, bool color) {
  if (!color) return pass ? "PASS" : "FAIL";
  return pass ? "\x1b[32mPASS\x1b[0m" : "\x1b[31mFAIL\x1b[0m";
}

// Distributions shown in the table, in order; the rest are in the JSON. TTFT visible only
// when some request reasoned (else it is TTFT again); token counts are not milliseconds.
bool ShowInTable(const Summary& s, const std::string& key) {
  if (key.starts_with("ttft_visible")) return s.counts.with_reasoning > 0;
  return key != "output_tokens" && key != "stream_close_ms" && key != "reasoning_tokens";
}

// Reasoning models: how many requests reasoned, their reasoning tokens per request, the
// share of output that was reasoning, the visible output rate and where counts came from.
void ReasoningLine(const Summary& s, std::string& out) {
  const SummaryCounts& c = s.counts;
  if (c.with_reasoning == 0) return;
  const SampleStats& d = s.reasoning_tokens;
  std::string source;
  if (c.reasoning_from_usage > 0) source = fmt::format("usage {}", c.reasoning_from_usage);
  if (c.reasoning_from_stream > 0) {
    source += fmt::format("{}reasoning chunks {}", source.empty() ? "" : ", ", c.reasoning_from_stream);
  }
  out += fmt::format("reasoning: {} of {} ok requests | tokens/req p50 {} p90 {} p99 {} max {} | {:.1f}% of output "
                     "tokens | visible output {} (counted from: {})\n",
                     c.with_reasoning, c.succeeded, Num(d.p50), Num(d.p90), Num(d.p99), Num(d.max),
                     100 * s.reasoning_share, RateOrNa(s, s.visible_output_tokens_per_s, "tok/s"), source);
}

// The window line: its bounds, or why there is nothing to divide by.
std::string WindowLine(const Summary& s) {
  const int64_t excluded = s.counts.excluded_before + s.counts.excluded_after;
  if (s.counts.in_window == 0) {
    return fmt::format("window: n/a (no requests in the measurement window; {} records, {} excluded as warm-up/after)",
                       s.counts.records, excluded);
  }
  std::string span;
  if (!RatesUnavailable(s).empty()) {
    span = "zero length, no in-window completion: rates n/a";
  } else if (s.rate_basis == "window") {
    span = fmt::format("{:.2f} s", s.rate_basis_s);
  } else {
    span = fmt::format("zero length: rates over the {:.3f} s completion span", s.rate_basis_s);
  }
  return fmt::format("window {:.1f}-{:.1f} s ({}); {} requests in window: {} ok, {} failed; {} excluded (warm-up/after)",
                     s.window_start_s, s.window_end_s, span, s.counts.in_window, s.counts.succeeded, s.counts.failed,
                     excluded);
}

// A percentile cell; "*" marks one with fewer samples than it needs (MinSamplesFor).
std::string PctCell(double v, int64_t n, double pct, bool* starred) {
  if (n >= MinSamplesFor(pct)) return Num(v);
  *starred = true;
  return Num(v) + "*";
}

std::string Share(int64_t met, int64_t checked) {
  return checked > 0 ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(met) / static_cast<double>(checked)) : "n/a";
}

// Percentile objectives (each on its percentile), the per-request thresholds of goodput
// and attainment, the floor and the verdict.
void SloLines(const Summary& s, const TableOptions& options, std::string& out) {
  auto line = [&out](const std::string& l) { out += l + "\n"; };
  for (const SloResult& r : s.slo) {
    const std::string head = fmt::format("SLO {} p{} <= {} ms (on {}): ", r.metric, r.percentile, Num(r.threshold_ms),
                                         r.measured_as.empty() ? "unknown metric" : r.measured_as);
    if (r.samples == 0) {
      line(head + fmt::format("n/a ({}) {}", EmptyDistributionReason(s, r.measured_as), PassFail(false, options.color)));
      continue;
    }
    const std::string few = FewSamplesNote(r.samples, r.percentile);
    line(head + fmt::format("{} ms {}{}", Num(r.value_ms), PassFail(r.pass, options.color),
                            few.empty() ? "" : "  [" + few + "]"));
  }
  if (s.min_output_tokens_per_s) {
    line(fmt::format("SLO output >= {} tok/s: {} {}", Num(*s.min_output_tokens_per_s),
                     RateOrNa(s, s.output_tokens_per_s, "tok/s"),
                     PassFail(s.output_tokens_per_s >= *s.min_output_tokens_per_s, options.color)));
  }
  std::vector<card::RequestThreshold> bars;
  std::string met;
  for (const ThresholdResult& t : s.goodput_thresholds) {
    bars.push_back(t.threshold);
    met += fmt::format("{}{} {}", met.empty() ? "" : ", ", card::MetricShortName(t.threshold.metric),
                       Share(t.requests_met, t.requests_checked));
  }
  line("goodput thresholds (per request): " + card::DescribeGoodputThresholds(bars));
  if (!met.empty()) {
    line(fmt::format("  met by: {}; all of them: {} of {} in-window requests", met, s.counts.slo_met,
                     s.counts.in_window));
  }
  line(fmt::format("SLO attainment {} (target {:.2f}%) {}; overall {}",
                   s.counts.in_window > 0 ? fmt::format("{:.2f}%", s.slo_attainment * 100) : "n/a (no requests in the window)",
                   s.slo_attainment_target * 100, PassFail(s.slo_attainment_pass, options.color),
                   PassFail(s.slo_pass, options.color)));
}

// The TTFT split line (derive.h), when the engine reported its phases; and the count of
// `timings` objects that were unusable.
void TtftSplitLines(const Summary& s, std::string& out) {
  const SampleStats& net = s.ttft_client_network_ms;
  if (!net.empty()) {
    const bool no_queue = s.counts.ttft_split_without_queue > 0;
    std::string queue = s.queue_ms.empty() ? "n/a" : fmt::format("{} / {}", Num(s.queue_ms.p50), Num(s.queue_ms.p99));
    out += fmt::format("TTFT split P50 / P99 ms: client+network {} / {} | queue {} | prefill {} / {}  ({} requests; "
                       "each part's own percentiles, not additive)\n",
                       Num(net.p50), Num(net.p99), queue, Num(s.prefill_ms.p50), Num(s.prefill_ms.p99), net.count);
    if (no_queue) {
      out += fmt::format("  {} of them without a queue time from the engine: their client+network includes the "
                         "engine's queue\n",
                         s.counts.ttft_split_without_queue);
    }
  }
  if (s.counts.server_timings_malformed > 0) {
    out += fmt::format("WARNING: {} responses carried a malformed `timings` object (ignored: no server phases for them)\n",
                       s.counts.server_timings_malformed);
  }
}

}  // namespace

// The sessions/tasks block: outcomes, rates, latency percentiles and prefix reuse by turn.
void SessionLines(const SessionSummary& x, const TableOptions& options, std::string& out) {
  const char* unit = x.tasks ? "task" : "session";
  const char* units = x.tasks ? "tasks" : "sessions";
  out += "\n";
  out += fmt::format("{}: {} started in the window | succeeded {} | failed {} | incomplete {} | success rate {:.2f}%\n",
                     units, x.started, x.succeeded, x.failed, x.incomplete, x.success_rate * 100);
  out += fmt::format("{} {:.3f} {}/s | goodput {:.3f} {}/s | calls per {} p50 {}\n", units, x.per_s, units,
                     x.goodput_per_s, units, unit, x.calls.empty() ? std::string("-") : Num(x.calls.p50));
  if (!x.latency_ms.empty()) {
    const SampleStats& d = x.latency_ms;
    out += fmt::format("{:<22}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}\n", std::string(unit) + " latency (ms)",
                       Num(d.p50), Num(d.p90), Num(d.p95), Num(d.p99), Num(d.p99_9), Num(d.mean), Num(d.max), d.count);
  }
  if (x.task_ms) {
    out += fmt::format("SLO {} <= {} ms: {:.2f}% of ended {} (target {:.2f}%)  {}\n", unit, Num(*x.task_ms),
                       x.task_attainment * 100, units, x.task_attainment_target * 100,
                       PassFail(x.task_slo_pass, options.color));
  }
  std::string hits = x.prefix_hit_rate >= 0 ? fmt::format("prefix hit rate {:.1f}%", x.prefix_hit_rate * 100)
                                            : std::string("prefix hit rate n/a (no cached-token counts)");
  if (x.prefix_hit_rate >= 0 && x.by_turn.size() > 1) {
    hits += "; by turn:";
    for (size_t k = 0; k < std::min<size_t>(x.by_turn.size(), 8); ++k) {
      const SessionTurnStats& t = x.by_turn[k];
      hits += t.prefix_hit_rate >= 0 ? fmt::format(" {:.0f}%", t.prefix_hit_rate * 100) : std::string(" -");
    }
    if (x.by_turn.size() > 8) hits += " ...";
  }
  out += hits + "\n";
  if (options.show_boundaries) {
    out += fmt::format("  ({} latency: first call's t_sched -> last call's end, think/tool time included)\n", unit);
  }
}

// The embeddings (rerank) block: items (documents) and input tokens per second, batch
// sizes (embeddings_summary.h).
void EmbeddingsLines(const Summary& s, std::string& out) {
  const EmbeddingsSummary& e = *s.embeddings;
  const std::string items = ItemsName(e), key = EmbeddingsKey(e);
  const char* tokens = e.rerank ? "pair tokens" : "input tokens";
  out += "\n";
  if (const std::string why = RatesUnavailable(s); !why.empty()) {
    out += key + ": rates n/a: " + why + "\n";
  } else {
    out += fmt::format("{}: {} {} | {} {} (system-wide, window)\n", key, items, RateOrNa(s, e.items_per_s, (items + "/s").c_str()),
                       tokens, RateOrNa(s, e.input_tokens_per_s, "tok/s"));
  }
  out += fmt::format("  {} requests, {} {}, {} {} in the window | {} p50 {} max {} | tokens per {} p50 {}\n",
                     e.requests, e.items, items, e.input_tokens, tokens,
                     e.rerank ? "documents per request" : "batch size",
                     e.items_per_request.empty() ? "-" : Num(e.items_per_request.p50),
                     e.items_per_request.empty() ? "-" : Num(e.items_per_request.max), e.rerank ? "pair" : "item",
                     e.input_tokens_per_item.empty() ? "-" : Num(e.input_tokens_per_item.p50));
}

// The transcription line: clips, audio seconds, audio throughput, real-time factor
// (audio_summary.h).
void AudioLine(const Summary& s, std::string& out) {
  const AudioSummary& a = *s.audio;
  const std::string why = RatesUnavailable(s);
  out += fmt::format("transcription: {} clips ({:.1f} s of audio, {} audio tokens) in the window | audio {} | "
                     "real-time factor (E2E / audio) p50 {:.3f} p99 {:.3f}\n",
                     a.requests, a.audio_s, a.audio_tokens,
                     why.empty() ? RateOrNa(s, a.audio_s_per_s, "audio s/s") : "n/a: " + why, a.rtf.p50, a.rtf.p99);
}

// The vision line: requests with images, images, image tokens, images/s (vision_summary.h).
void VisionLine(const Summary& s, std::string& out) {
  const VisionSummary& v = *s.vision;
  const std::string why = RatesUnavailable(s);
  out += fmt::format("vision: {} requests with images ({} images, {} image tokens) in the window | images {}\n",
                     v.requests, v.images, v.image_tokens,
                     why.empty() ? RateOrNa(s, v.images_per_s, "images/s") : "n/a: " + why);
}

std::string FormatSummaryTable(const Summary& s, const TableOptions& options) {
  std::string out;
  auto line = [&out](const std::string& l) { out += l + "\n"; };
  const std::string method =
      s.percentile_method == "exact"
          ? "exact percentiles (numpy linear)"
          : fmt::format("histogram percentiles (relative error <= {:.2f}%)", s.histogram_relative_error * 100);
  line(fmt::format("{} run, {}{}", s.source, method, s.partial ? "  [PARTIAL: interrupted]" : ""));
  line(WindowLine(s));
  if (s.counts.interrupted > 0) {
    line(fmt::format("cancelled by interrupt {} (in flight when the run was stopped; not counted)",
                     s.counts.interrupted));
  }
  line("");
  line(fmt::format("{:<22}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}", "metric (ms)", "p50", "p90", "p95",
                   "p99", "p99.9", "mean", "max", "n"));
  bool starred = false;
  for (const DistributionField& f : SummaryDistributions()) {
    const SampleStats& d = s.*(f.member);
    if (d.empty() || !ShowInTable(s, f.key)) continue;
    std::string label = f.label;
    if (label.size() > 21) label = label.substr(0, 21);
    line(fmt::format("{:<22}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}", label, PctCell(d.p50, d.count, 50, &starred),
                     PctCell(d.p90, d.count, 90, &starred), PctCell(d.p95, d.count, 95, &starred),
                     PctCell(d.p99, d.count, 99, &starred), PctCell(d.p99_9, d.count, 99.9, &starred), Num(d.mean),
                     Num(d.max), d.count));
  }
  if (starred) {
    line(fmt::format("* fewer samples than the percentile needs (P90 {}, P95 {}, P99 {}, P99.9 {}): it is "
                     "interpolated among the few largest values",
                     MinSamplesFor(90), MinSamplesFor(95), MinSamplesFor(99), MinSamplesFor(99.9)));
  }
  line("");
  if (const std::string why = RatesUnavailable(s); !why.empty()) {
    line("rates n/a: " + why);
  } else {
    line(fmt::format("output {} (system-wide, window) | requests {} | offered {} | achieved {} | goodput {}",
                     RateOrNa(s, s.output_tokens_per_s, "tok/s"), RateOrNa(s, s.requests_per_s, "req/s"),
                     RateOrNa(s, s.offered_rps, "req/s", true), RateOrNa(s, s.achieved_rps, "req/s", true),
                     RateOrNa(s, s.goodput_rps, "req/s")));
  }
  ReasoningLine(s, out);
  if (s.vision) VisionLine(s, out);
  if (s.audio) AudioLine(s, out);
  if (!s.slo.empty() || !s.goodput_thresholds.empty() || s.min_output_tokens_per_s) {
    SloLines(s, options, out);
  } else if (s.counts.in_window > 0) {
    line(fmt::format("success rate {:.2f}% (no latency SLOs in the card)", s.slo_attainment * 100));
  }
  if (!s.errors.empty()) {
    std::string e = "errors:";
    for (const auto& [cls, n] : s.errors) e += fmt::format(" {} {}", cls, n);
    line(e);
  }
  if (!s.token_source.empty() && !s.embeddings) {
    // No count from the server: one token per output event, and an answer that was not
    // streamed is one event, so the output figures are not the engine's tokens.
    line("output tokens counted from: " + s.token_source +
         (s.token_source == "client_count" ? " (the server reported no token count: one per output event; an answer "
                                             "not streamed is one event)"
                                           : ""));
  }
  TtftSplitLines(s, out);
  if (s.sessions) SessionLines(*s.sessions, options, out);
  if (s.embeddings) EmbeddingsLines(s, out);
  if (s.schedule_lag_flagged) {
    // Over the whole window (the opening burst included): a hint, not the verdict. A bench
    // run's verdict on the client is its saturation note (job/client_saturation.h).
    line(fmt::format("WARNING: schedule lag p99 {} ms > 1 ms over the window: requests left the client late",
                     Num(s.schedule_lag_ms.p99)));
  }
  if (options.show_timeseries && !s.timeseries.empty()) {
    line("");
    line(fmt::format("{:>8}{:>7}{:>7}{:>7}{:>9}{:>10}{:>11}", "t (s)", "sent", "done", "errors",
                     "tokens", "in-flight", "TTFT p99"));
    for (const TimeBucket& b : s.timeseries) {
      line(fmt::format("{:>8.1f}{:>7}{:>7}{:>7}{:>9}{:>10.1f}{:>11}", b.start_s, b.sent, b.completed,
                       b.errors, b.output_tokens, b.in_flight, b.ttft_count ? Num(b.ttft_p99_ms) : "-"));
    }
  }
  if (options.show_boundaries) {
    line("");
    out += MetricBoundariesText();
  }
  return out;
}

std::string MetricBoundariesText() {
  return
      "Metric boundaries (docs/metrics.md):\n"
      "  Schedule lag        t_send - t_sched (client health; flagged when p99 > 1 ms)\n"
      "  TTFT                first output token (content, text or reasoning) - t_send\n"
      "  TTFT incl. queue    first output token - t_sched (coordinated-omission-free; open-loop SLOs use it)\n"
      "  TTFT visible        first non-reasoning token - t_send (no reasoning: = TTFT; shown when any reasoned)\n"
      "  Reasoning tokens    usage.completion_tokens_details.reasoning_tokens, else the reasoning chunks' tokens\n"
      "  E2E                 last output token - t_send; E2E incl. queue from t_sched\n"
      "  TPOT                (t_last - t_first) / (tokens - 1) per request; < 2 tokens or one event: excluded\n"
      "  ITL (token)         gaps between output events; a k-token event counts as k gaps of gap/k\n"
      "  Inter-chunk         raw gaps between output events\n"
      "  Per-request P99 ITL each request's own P99 ITL, one sample per request\n"
      "  Server queue        engine arrival -> first scheduled (the engine's `timings`, or the twin's clock)\n"
      "  Server prefill      first scheduled -> first token (llama.cpp `prompt_ms`)\n"
      "  Server decode       first token -> last token (llama.cpp `predicted_ms`)\n"
      "  TTFT client+network TTFT - server queue - server prefill, per request\n"
      "  Output tok/s        system-wide: tokens arriving in the window / window (per-user rate = 1/TPOT)\n"
      "  Window              warm-up end .. last scheduled send; requests scheduled outside it are kept\n"
      "                      in the raw records but excluded from percentiles\n"
      "  Goodput             requests that succeeded, met every per-request threshold and passed quality,\n"
      "                      completed in the window / window (thresholds: slo.goodput, else each metric's\n"
      "                      highest-percentile objective); percentile objectives are judged on the percentile\n";
}

const std::vector<AliasRow>& ToolAliases() {
  static const std::vector<AliasRow> kRows = {
      {"TPOT", "TPOT", "TPOT", "ITL (per request)", "ITL", "-"},
      {"ITL (chunk gaps)", "ITL", "ITL", "ICL (inter-chunk)", "-", "-"},
      {"TTFT", "TTFT (first non-empty choices, may include empty text)", "TTFT", "TTFT", "TTFT", "TTFT"},
      {"E2E", "E2EL", "E2E latency", "request latency", "request latency", "e2e latency"},
      {"-", "-", "-", "-", "TPOT (includes TTFT: (t_last - t_send)/N)", "ITL (~ E2E/N)"},
  };
  return kRows;
}

std::string ToolAliasesText() {
  std::string out = "Same quantity in other tools:\n";
  out += fmt::format("  {:<18}{:<22}{:<14}{:<20}{:<18}{}\n", "infereng", "vLLM bench", "SGLang bench",
                     "AIPerf/GenAI-Perf", "GuideLLM", "LLMPerf");
  for (const AliasRow& r : ToolAliases()) {
    std::string vllm = r.vllm;
    if (vllm.size() > 21) vllm = vllm.substr(0, 4) + "*";
    out += fmt::format("  {:<18}{:<22}{:<14}{:<20}{:<18}{}\n", r.infereng, vllm, r.sglang, r.aiperf,
                       r.guidellm.size() > 17 ? r.guidellm.substr(0, 4) + "*" : r.guidellm, r.llmperf);
  }
  out += "  * vLLM TTFT counts the first non-empty `choices`, which may carry empty text;\n"
         "    GuideLLM TPOT includes TTFT: (t_last - t_send) / N.\n";
  return out;
}

}  // namespace infereng::metrics
