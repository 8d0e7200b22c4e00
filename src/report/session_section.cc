// Sessions / tasks in the run report (see session_section.h).
#include "report/session_section.h"

#include <fmt/format.h>

#include "core/units.h"

namespace infereng::report {
namespace {

std::string Pct(double share) { return fmt::format("{:.1f}%", share * 100); }
std::string Ms(const stats::SampleStats& d, double v) { return d.count > 0 ? units::FormatNumber(v) : "n/a"; }

}  // namespace

void AddSessionSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                       const std::string& heading_prefix) {
  if (!run.summary || !run.summary->sessions) return;
  const metrics::SessionSummary& x = *run.summary->sessions;
  const std::string units = x.tasks ? "tasks" : "sessions";
  const std::string unit = x.tasks ? "task" : "session";
  page.BeginSection(id_prefix + "-sessions", heading_prefix + (x.tasks ? "Tasks" : "Sessions"),
                    "A " + unit + " is a chain of calls; its latency runs from its first call's intended send to its "
                    "last call's end, think/tool time included (docs/metrics.md, \"Sessions and tasks\").");
  std::vector<Kpi> k;
  k.push_back({units + "/s", fmt::format("{:.3f}", x.per_s), "succeeded " + units + " per second of the window"});
  k.push_back({"goodput", fmt::format("{:.3f} {}/s", x.goodput_per_s, units),
               x.task_ms ? fmt::format("succeeded within {} ms", units::FormatNumber(*x.task_ms)) : "succeeded"});
  k.push_back({"success rate", Pct(x.success_rate),
               fmt::format("{} succeeded, {} failed, {} incomplete of {} started", x.succeeded, x.failed, x.incomplete,
                           x.started),
               x.failed > 0 ? Kpi::kBad : Kpi::kNeutral});
  if (x.prefix_hit_rate >= 0) k.push_back({"prefix hit rate", Pct(x.prefix_hit_rate), "cached / prompt tokens"});
  if (x.task_ms) {
    k.push_back({unit + " SLO", x.task_slo_pass ? "PASS" : "FAIL",
                 fmt::format("{} within {} ms (target {})", Pct(x.task_attainment), units::FormatNumber(*x.task_ms),
                             Pct(x.task_attainment_target)),
                 x.task_slo_pass ? Kpi::kGood : Kpi::kBad});
  }
  page.Kpis(k);
  const stats::SampleStats& d = x.latency_ms;
  page.Table({unit + " latency (ms)", "p50", "p90", "p99", "mean", "max", "n"},
             {{"succeeded " + units, Ms(d, d.p50), Ms(d, d.p90), Ms(d, d.p99), Ms(d, d.mean), Ms(d, d.max),
               std::to_string(d.count)}},
             {1, 2, 3, 4, 5, 6});
  std::vector<std::vector<std::string>> rows;
  for (const metrics::SessionTurnStats& t : x.by_turn) {
    rows.push_back({std::to_string(t.turn + 1), std::to_string(t.calls),
                    t.prefix_hit_rate >= 0 ? Pct(t.prefix_hit_rate) : "n/a",
                    t.calls > 0 ? units::FormatNumber(t.e2e_p50_ms) : "n/a"});
  }
  if (!rows.empty()) page.Table({x.tasks ? "step" : "turn", "calls", "prefix hit rate", "E2E incl. queue p50 (ms)"}, rows, {1, 2, 3});
  page.EndSection();
}

std::string SessionMarkdownRows(const metrics::Summary& s) {
  if (!s.sessions) return {};
  const metrics::SessionSummary& x = *s.sessions;
  const char* units = x.tasks ? "tasks" : "sessions";
  std::string o;
  o += fmt::format("| {} | {} started: {} succeeded, {} failed, {} incomplete (success rate {}) |\n", units, x.started,
                   x.succeeded, x.failed, x.incomplete, Pct(x.success_rate));
  o += fmt::format("| {}/s · goodput | {:.3f} · {:.3f} |\n", units, x.per_s, x.goodput_per_s);
  if (x.latency_ms.count > 0) {
    o += fmt::format("| {} latency P50 / P99 | {} / {} ms |\n", x.tasks ? "task" : "session",
                     units::FormatNumber(x.latency_ms.p50), units::FormatNumber(x.latency_ms.p99));
  }
  if (x.prefix_hit_rate >= 0) o += fmt::format("| prefix hit rate ({}) | {} |\n", units, Pct(x.prefix_hit_rate));
  if (x.task_ms) {
    o += fmt::format("| {} SLO <= {} ms | {} (target {}) → **{}** |\n", x.tasks ? "task" : "session",
                     units::FormatNumber(*x.task_ms), Pct(x.task_attainment), Pct(x.task_attainment_target),
                     x.task_slo_pass ? "PASS" : "FAIL");
  }
  return o;
}

}  // namespace infereng::report
