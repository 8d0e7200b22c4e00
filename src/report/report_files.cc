#include "report/report_files.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "card/slo.h"
#include "metrics/caveats.h"
#include "metrics/summary_table.h"
#include "report/axis.h"
#include "report/escape.h"
#include "report/run_sections.h"
#include "report/embeddings_section.h"
#include "report/audio_section.h"
#include "report/vision_section.h"
#include "report/session_section.h"

namespace infereng::report {
namespace {

std::string Opt(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : ""; }
std::string T(Nanos t) { return t < 0 ? "" : fmt::format("{:.6f}", RelMs(t)); }

}  // namespace

Status WriteTextFile(const std::string& path, const std::string& text) {
  // Write then rename, so a reader never sees half a report.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IoError(fmt::format("{}: cannot open for writing", tmp));
    out << text;
    out.close();
    if (!out) return Status::IoError(fmt::format("{}: write failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::IoError(fmt::format("{}: cannot rename into place", path));
  return Status::Ok();
}

std::string RunMarkdown(const RunData& run) {
  std::ostringstream o;
  std::string name = CardNameOf(run.manifest);
  o << "# infereng report" << (name.empty() ? "" : " — " + MarkdownCell(name)) << "\n\n";
  o << "Run directory: `" << MarkdownCell(run.dir) << "` · " << run.rows.size() << " records";
  if (run.summary) o << " · " << run.summary->source;
  o << "\n\n";
  for (const std::string& p : run.problems) o << "> **Note:** " << MarkdownCell(p) << "\n";
  if (!run.problems.empty()) o << "\n";
  if (run.summary) {
    const metrics::Summary& s = *run.summary;
    o << "## Headline\n\n| figure | value |\n|---|---|\n";
    o << fmt::format("| requests in window | {} ({} failed) |\n", s.counts.in_window, s.counts.failed);
    const auto& ttft = s.open_loop ? s.ttft_incl_queue_ms : s.ttft_ms;
    const auto& e2e = s.open_loop ? s.e2e_incl_queue_ms : s.e2e_ms;
    // "P50 / P99 ms", "n/a (why)" when empty, and a note when too few samples for a P99.
    auto p50_p99 = [&s](const stats::SampleStats& d, const char* key) -> std::string {
      if (d.count == 0) return "n/a (" + metrics::EmptyDistributionReason(s, key) + ")";
      const std::string few = metrics::FewSamplesNote(d.count, 99);
      return fmt::format("{} / {} ms{}", Ms(d, d.p50), Ms(d, d.p99), few.empty() ? "" : " (" + few + ")");
    };
    o << fmt::format("| TTFT{} P50 / P99 | {} |\n", s.open_loop ? " incl. queue" : "",
                     p50_p99(ttft, s.open_loop ? "ttft_incl_queue_ms" : "ttft_ms"));
    if (!s.ttft_client_network_ms.empty()) {  // the TTFT split (metrics.md), when the engine reported phases
      o << fmt::format("| TTFT split: server queue / prefill / client+network P50 / P99 | {} · {} · {} |\n",
                       s.queue_ms.empty() ? std::string("n/a (not reported)") : p50_p99(s.queue_ms, "queue_ms"),
                       p50_p99(s.prefill_ms, "prefill_ms"), p50_p99(s.ttft_client_network_ms, "ttft_client_network_ms"));
    }
    if (s.counts.with_reasoning > 0) {  // a reasoning model (metrics.md, "TTFT visible")
      o << fmt::format("| TTFT visible{} P50 / P99 | {} |\n", s.open_loop ? " incl. queue" : "",
                       p50_p99(s.open_loop ? s.ttft_visible_incl_queue_ms : s.ttft_visible_ms,
                               s.open_loop ? "ttft_visible_incl_queue_ms" : "ttft_visible_ms"));
      o << fmt::format("| reasoning tokens / request P50 / P99 | {:g} / {:g} ({} of {} requests; {:.1f}% of output; "
                       "visible output {}) |\n",
                       s.reasoning_tokens.p50, s.reasoning_tokens.p99, s.counts.with_reasoning, s.counts.succeeded,
                       100 * s.reasoning_share, metrics::RateOrNa(s, s.visible_output_tokens_per_s, "tok/s"));
    }
    o << fmt::format("| ITL P50 / P99 | {} |\n", p50_p99(s.itl_ms, "itl_ms"));
    o << fmt::format("| E2E{} P50 / P99 | {} |\n", s.open_loop ? " incl. queue" : "",
                     p50_p99(e2e, s.open_loop ? "e2e_incl_queue_ms" : "e2e_ms"));
    o << fmt::format("| output throughput (system-wide) | {} |\n", metrics::RateOrNa(s, s.output_tokens_per_s, "tok/s"));
    o << fmt::format("| request throughput | {} (offered {}) |\n", metrics::RateOrNa(s, s.requests_per_s, "req/s"),
                     metrics::RateOrNa(s, s.offered_rps, "req/s", true));
    o << fmt::format("| goodput | {} |\n", metrics::RateOrNa(s, s.goodput_rps, "req/s"));
    o << SessionMarkdownRows(s);
    o << EmbeddingsMarkdownRows(s);
    o << VisionMarkdownRows(s);
    o << AudioMarkdownRows(s);
    if (!s.slo.empty() || s.min_output_tokens_per_s) {
      o << fmt::format("| SLO attainment | {} (target {:.2f}%) → **{}** |\n",
                       s.counts.in_window > 0 ? fmt::format("{:.2f}%", s.slo_attainment * 100) : "n/a",
                       s.slo_attainment_target * 100, s.slo_pass ? "PASS" : "FAIL");
    }
    if (run.quality && run.quality->PassRate()) {
      const metrics::QualityReport& q = *run.quality;
      const metrics::ProportionCi ci = q.Interval();
      o << fmt::format("| quality pass rate | {:.1f}% ({} of {}, 95% CI [{:.1f}%, {:.1f}%]){} |\n", *q.PassRate() * 100,
                       q.passed, q.checked, ci.low * 100, ci.high * 100,
                       q.pass_threshold > 0 ? fmt::format(", threshold {:.1f}% → **{}**", q.pass_threshold * 100,
                                                          q.Pass() ? "PASS" : "FAIL")
                                            : std::string());
    }
    o << "\n";
    if (!s.slo.empty() || !s.goodput_thresholds.empty()) {
      o << "## SLOs\n\nObjectives, each judged on the run's percentile:\n\n"
        << "| objective | measured as | threshold | measured | verdict | note |\n|---|---|---|---|---|---|\n";
      for (const metrics::SloResult& slo : s.slo) {
        const bool na = slo.samples == 0;
        o << fmt::format("| {} p{:g} | {} | {:g} ms | {} | {} | {} |\n", MarkdownCell(slo.metric), slo.percentile,
                         MarkdownCell(slo.measured_as), slo.threshold_ms, na ? "n/a" : FormatNumber(slo.value_ms) + " ms",
                         slo.pass ? "PASS" : "FAIL",
                         MarkdownCell(na ? metrics::EmptyDistributionReason(s, slo.measured_as)
                                         : metrics::FewSamplesNote(slo.samples, slo.percentile)));
      }
      std::vector<card::RequestThreshold> bars;
      for (const metrics::ThresholdResult& t : s.goodput_thresholds) bars.push_back(t.threshold);
      o << "\nGoodput and attainment count requests meeting every per-request threshold: "
        << MarkdownCell(card::DescribeGoodputThresholds(bars)) << ".\n\n";
    }
    if (!s.errors.empty()) {
      o << "## Errors\n\n| class | requests |\n|---|---|\n";
      for (const auto& [cls, n] : s.errors) o << "| " << MarkdownCell(cls) << " | " << n << " |\n";
      o << "\n";
    }
    o << "## Full summary\n\n```\n" << metrics::FormatSummaryTable(s, {.show_boundaries = false, .show_timeseries = false, .color = false})
      << "```\n\n";
  }
  o << "## Metric definitions\n\n```\n" << metrics::MetricBoundariesText() << "```\n\n";
  o << "Charts: `report.html`. Per-request data: `requests.csv`; time series: `timeseries.csv`.\n";
  return o.str();
}

std::string SweepMarkdown(const sweep::SweepFile& f) {
  const sweep::SweepResult& r = f.result;
  std::ostringstream o;
  o << "# infereng sweep" << (r.card_name.empty() ? "" : " — " + MarkdownCell(r.card_name)) << "\n\n";
  o << fmt::format("By {} · {} points · source {} · target {}\n\n", sweep::LoadKindName(r.kind), r.points.size(),
                   MarkdownCell(r.source), MarkdownCell(r.target));
  o << "## Result\n\n```\n" << sweep::FormatSweepTable(r) << "```\n\n";
  if (!f.predicted.empty()) o << "The twin's prediction at the same loads is in `sweep.json` (\"predicted\") and drawn dashed in `report.html`.\n\n";
  o << "Curves: `report.html`. Per point: `sweep.csv` and `points/*/`.\n";
  return o.str();
}

Status WriteRequestsCsv(const std::string& path, const RunData& run) {
  std::ostringstream o;
  o << "id,tenant,t_sched_ms,t_send_ms,t_first_token_ms,t_last_token_ms,t_end_ms,t_server_scheduled_ms,t_prefill_done_ms,"
       "schedule_lag_ms,ttft_ms,ttft_incl_queue_ms,e2e_ms,e2e_incl_queue_ms,tpot_ms,itl_p99_ms,queue_ms,prefill_ms,"
       "input_tokens_target,output_tokens_target,prompt_tokens,output_tokens,chunks,http_status,error,finish_reason,"
       "error_message\n";
  for (const RequestRow& row : run.rows) {
    const auto& r = row.record;
    const auto& m = row.m;
    Nanos first = r.chunks.empty() ? -1 : r.chunks.front().t;
    Nanos last = r.chunks.empty() ? -1 : r.chunks.back().t;
    o << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id, r.tenant,
                     T(r.t_sched), T(r.t_send), T(first), T(last), T(r.t_end), T(r.t_server_scheduled), T(r.t_prefill_done),
                     Opt(m.schedule_lag_ms), Opt(m.ttft_ms), Opt(m.ttft_incl_queue_ms), Opt(m.e2e_ms), Opt(m.e2e_incl_queue_ms),
                     Opt(m.tpot_ms), Opt(m.itl_p99_ms), Opt(m.queue_ms), Opt(m.prefill_ms), r.input_tokens_target,
                     r.output_tokens_target, r.prompt_tokens >= 0 ? std::to_string(r.prompt_tokens) : "", r.OutputTokens(),
                     r.chunks.size(), r.http_status, r.ok() ? "" : std::string(metrics::ErrorClassName(r.error)),
                     CsvField(r.finish_reason), CsvField(r.error_message));
  }
  return WriteTextFile(path, o.str());
}

Status WriteTimeseriesCsv(const std::string& path, const RunData& run) {
  std::ostringstream o;
  o << "start_s,width_s,sent,completed,errors,output_tokens,in_flight,ttft_count,ttft_mean_ms,ttft_p99_ms\n";
  if (run.summary) {
    for (const metrics::TimeBucket& b : run.summary->timeseries) {
      o << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", b.start_s, b.width_s, b.sent, b.completed, b.errors, b.output_tokens,
                       b.in_flight, b.ttft_count, b.ttft_count ? fmt::format("{}", b.ttft_mean_ms) : "",
                       b.ttft_count ? fmt::format("{}", b.ttft_p99_ms) : "");
    }
  }
  return WriteTextFile(path, o.str());
}

}  // namespace infereng::report
