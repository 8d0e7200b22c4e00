#include "metrics/summary_table.h"

#include <algorithm>

#include <fmt/format.h>

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

// Distributions shown in the table, in order; the rest are in the JSON.
bool ShowInTable(const std::string& key) {
  return key != "output_tokens" && key != "stream_close_ms";
}

}  // namespace

std::string FormatSummaryTable(const Summary& s, const TableOptions& options) {
  std::string out;
  auto line = [&out](const std::string& l) { out += l + "\n"; };
  const std::string method =
      s.percentile_method == "exact"
          ? "exact percentiles (numpy linear)"
          : fmt::format("histogram percentiles (relative error <= {:.2f}%)", s.histogram_relative_error * 100);
  line(fmt::format("{} run, {}{}", s.source, method, s.partial ? "  [PARTIAL: interrupted]" : ""));
  line(fmt::format("window {:.1f}-{:.1f} s ({:.2f} s{}); {} requests in window: {} ok, {} failed; "
                   "{} excluded (warm-up/after)",
                   s.window_start_s, s.window_end_s, s.rate_basis_s,
                   s.rate_basis == "window" ? "" : ", rates over the completion span",
                   s.counts.in_window, s.counts.succeeded, s.counts.failed,
                   s.counts.excluded_before + s.counts.excluded_after));
  if (s.counts.interrupted > 0) {
    line(fmt::format("cancelled by interrupt {} (in flight when the run was stopped; not counted)",
                     s.counts.interrupted));
  }
  line("");
  line(fmt::format("{:<22}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}", "metric (ms)", "p50", "p90", "p95",
                   "p99", "p99.9", "mean", "max", "n"));
  for (const DistributionField& f : SummaryDistributions()) {
    const SampleStats& d = s.*(f.member);
    if (d.empty() || !ShowInTable(f.key)) continue;
    std::string label = f.label;
    if (label.size() > 21) label = label.substr(0, 21);
    line(fmt::format("{:<22}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}", label, Num(d.p50), Num(d.p90),
                     Num(d.p95), Num(d.p99), Num(d.p99_9), Num(d.mean), Num(d.max), d.count));
  }
  line("");
  line(fmt::format("output {} tok/s (system-wide, window) | requests {}/s | offered {}/s | achieved {}/s "
                   "| goodput {}/s",
                   Num(s.output_tokens_per_s), Num(s.requests_per_s), Num(s.offered_rps),
                   Num(s.achieved_rps), Num(s.goodput_rps)));
  if (!s.slo.empty() || s.min_output_tokens_per_s) {
    for (const SloResult& r : s.slo) {
      const double share = r.requests_checked > 0 ? 100.0 * static_cast<double>(r.requests_met) /
                                                        static_cast<double>(r.requests_checked)
                                                  : 0;
      line(fmt::format("SLO {} p{} <= {} ms (on {}): {} ms {}  ({:.1f}% of requests met it)", r.metric,
                       r.percentile, Num(r.threshold_ms), r.measured_as.empty() ? "unknown metric" : r.measured_as,
                       Num(r.value_ms), PassFail(r.pass, options.color), share));
    }
    if (s.min_output_tokens_per_s) {
      line(fmt::format("SLO output >= {} tok/s: {} tok/s {}", Num(*s.min_output_tokens_per_s),
                       Num(s.output_tokens_per_s),
                       PassFail(s.output_tokens_per_s >= *s.min_output_tokens_per_s, options.color)));
    }
    line(fmt::format("SLO attainment {:.2f}% (target {:.2f}%) {}; overall {}", s.slo_attainment * 100,
                     s.slo_attainment_target * 100, PassFail(s.slo_attainment_pass, options.color),
                     PassFail(s.slo_pass, options.color)));
  } else {
    line(fmt::format("success rate {:.2f}% (no latency SLOs in the card)", s.slo_attainment * 100));
  }
  if (!s.errors.empty()) {
    std::string e = "errors:";
    for (const auto& [cls, n] : s.errors) e += fmt::format(" {} {}", cls, n);
    line(e);
  }
  if (!s.token_source.empty()) line("output tokens counted from: " + s.token_source);
  if (s.schedule_lag_flagged) {
    line(fmt::format("WARNING: schedule lag p99 {} ms > 1 ms: the load generator, not the server, "
                     "shaped these results",
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
      "  TTFT visible        first non-reasoning token - t_send (only when reasoning was streamed)\n"
      "  E2E                 last output token - t_send; E2E incl. queue from t_sched\n"
      "  TPOT                (t_last - t_first) / (tokens - 1) per request; < 2 tokens or one event: excluded\n"
      "  ITL (token)         gaps between output events; a k-token event counts as k gaps of gap/k\n"
      "  Inter-chunk         raw gaps between output events\n"
      "  Per-request P99 ITL each request's own P99 ITL, one sample per request\n"
      "  Output tok/s        system-wide: tokens arriving in the window / window (per-user rate = 1/TPOT)\n"
      "  Window              warm-up end .. last scheduled send; requests scheduled outside it are kept\n"
      "                      in the raw records but excluded from percentiles\n"
      "  Goodput             requests that succeeded, met every SLO and passed quality, completed in the window / window\n";
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
