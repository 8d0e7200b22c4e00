#include "job/probe_report.h"

#include <cmath>

#include <fmt/format.h>

#include "report/html_page.h"
#include "report/report_files.h"
#include "report/svg_chart.h"

namespace infereng::job {

namespace {

using report::ChartSpec;
using report::Series;

constexpr const char* kRed = "#c0392b";

// Event times as probe.json writes them (0.1 ms), so the page and the file agree digit for digit.
double Tenth(double ms) { return std::round(ms * 10) / 10; }

// The probe's events as vertical lines (the first kMaxEventLines), labelled "t=…s: what".
std::vector<report::RefLine> EventLines(const ProbeResult& r) {
  std::vector<report::RefLine> lines;
  for (const TimelineEvent& e : r.timeline) {
    if (lines.size() >= kMaxEventLines) break;
    std::string what = e.what.size() > 60 ? e.what.substr(0, 57) + "..." : e.what;
    const double t_s = Tenth(e.t_ms) / 1000;
    lines.push_back({.vertical = true, .value = t_s, .label = fmt::format("{:.2f} s: {}", t_s, what),
                     .color = "#7f8c8d"});
  }
  return lines;
}

std::string LatencyChart(const ProbeResult& r) {
  Series e2e{.name = "E2E latency (ok)", .style = Series::Style::kPoints};
  Series ttft{.name = "TTFT (ok)", .style = Series::Style::kPoints};
  Series failed{.name = "failed / refused (E2E)", .style = Series::Style::kPoints, .color = kRed};
  Series cancelled{.name = "cancelled by the probe", .style = Series::Style::kPoints, .hollow = true};
  for (const ProbeRequestPoint& p : r.trace.requests) {
    const double t = p.t_ms / 1000;
    const std::string label = fmt::format("sent {:.3f} s, HTTP {}, E2E {:.1f} ms, TTFT {:.1f} ms", t, p.status,
                                          p.latency_ms, p.ttft_ms);
    Series& s = p.cancelled ? cancelled : p.ok ? e2e : failed;
    s.x.push_back(t);
    s.y.push_back(p.latency_ms);
    s.point_labels.push_back(label);
    if (p.ok && std::isfinite(p.ttft_ms)) {
      ttft.x.push_back(t);
      ttft.y.push_back(p.ttft_ms);
    }
  }
  ChartSpec c{.id = "probe-" + r.name + "-latency",
              .title = r.name + ": request latency over time",
              .subtitle = fmt::format("{} requests; x = send time; dashed lines = the probe's events",
                                      r.trace.requests.size()),
              .x = {.label = "seconds since the probe started", .from_zero = true},
              .y = {.label = "ms", .from_zero = true}};
  for (Series* s : {&e2e, &ttft, &failed, &cancelled}) {
    if (!s->x.empty()) c.series.push_back(std::move(*s));
  }
  c.ref_lines = EventLines(r);
  return report::RenderChart(c);
}

std::string SignalsChart(const ProbeResult& r, bool kv) {
  Series running{.name = "running", .style = Series::Style::kStep};
  Series waiting{.name = "waiting", .style = Series::Style::kStep};
  Series usage{.name = "KV-cache usage", .style = Series::Style::kStep};
  for (const ProbeSignalPoint& p : r.trace.signals) {
    const double t = p.t_ms / 1000;
    if (std::isfinite(p.running)) running.x.push_back(t), running.y.push_back(p.running);
    if (std::isfinite(p.waiting)) waiting.x.push_back(t), waiting.y.push_back(p.waiting);
    if (std::isfinite(p.kv_usage)) usage.x.push_back(t), usage.y.push_back(100 * p.kv_usage);
  }
  ChartSpec c{.id = "probe-" + r.name + (kv ? "-kv" : "-queue"),
              .title = r.name + (kv ? ": engine KV-cache usage" : ": engine requests running / waiting"),
              .subtitle = fmt::format("from /metrics, {} scrapes", r.trace.scrapes),
              .x = {.label = "seconds since the probe started", .from_zero = true},
              .y = {.label = kv ? "% of KV cache" : "requests", .from_zero = true}};
  if (kv) {
    c.y.max = 100;
    if (!usage.x.empty()) c.series.push_back(std::move(usage));
  } else {
    if (!running.x.empty()) c.series.push_back(std::move(running));
    if (!waiting.x.empty()) c.series.push_back(std::move(waiting));
  }
  c.ref_lines = EventLines(r);
  return report::RenderChart(c);
}

bool AnyKv(const ProbeTrace& t) {
  for (const ProbeSignalPoint& p : t.signals) {
    if (std::isfinite(p.kv_usage)) return true;
  }
  return false;
}

void ProbeSection(report::HtmlPage& page, const ProbeResult& r) {
  const std::string verdict(VerdictName(r.verdict));
  page.BeginSection("probe-" + r.name, r.name + ": " + verdict, r.finding);
  page.Kpis({{.label = "verdict",
              .value = verdict,
              .detail = {},
              .state = r.verdict == Verdict::kPass   ? report::Kpi::kGood
                       : r.verdict == Verdict::kFail ? report::Kpi::kBad
                                                     : report::Kpi::kNeutral},
             {.label = "requests", .value = std::to_string(r.requests), .detail = {}},
             {.label = "elapsed", .value = fmt::format("{:.1f} s", NanosToMillis(r.elapsed) / 1000), .detail = {}}});
  page.Paragraph("Why it matters: " + r.why);
  std::vector<std::vector<std::string>> rows;
  for (const ProbeEvidence& e : r.evidence) rows.push_back({e.name, EvidenceText(e.value), e.unit});
  page.Table({"evidence", "value", "unit"}, rows, {1});
  page.BeginGrid();
  page.AddSvg(LatencyChart(r));
  if (!r.trace.signals.empty()) {
    page.AddSvg(SignalsChart(r, false));
    if (AnyKv(r.trace)) page.AddSvg(SignalsChart(r, true));
  }
  page.EndGrid();
  if (r.trace.signals.empty()) {
    page.Paragraph("No engine signals: the target's /metrics did not answer with running / waiting counts.");
  }
  std::vector<std::vector<std::string>> events;
  for (const TimelineEvent& e : r.timeline) events.push_back({fmt::format("{:.1f}", Tenth(e.t_ms)), e.what});
  if (!events.empty()) page.Table({"t (ms)", "event"}, events, {0});
  page.EndSection();
}

}  // namespace

std::string EvidenceText(double value) {
  return std::isfinite(value) ? fmt::format("{:.6g}", value) : std::string("n/a");
}

std::string ProbeReportHtml(const std::string& target, const ProbeSuiteOutcome& outcome, bool complete) {
  report::HtmlPage page("infereng probe: " + target);
  std::size_t pass = 0, fail = 0;
  for (const ProbeResult& r : outcome.results) {
    pass += r.verdict == Verdict::kPass ? 1 : 0;
    fail += r.verdict == Verdict::kFail ? 1 : 0;
  }
  page.Header("Production-readiness probe", {"target: " + target, fmt::format("{} probes ran: {} pass, {} fail, {} n/a",
                                                                              outcome.results.size(), pass, fail,
                                                                              outcome.results.size() - pass - fail)});
  if (!outcome.error.ok()) page.Notice("The suite stopped early: " + outcome.error.message());
  if (!complete && outcome.error.ok()) page.Notice("The suite is still running (this report is rewritten after each probe).");
  page.BeginSection("checklist", "Readiness checklist");
  std::vector<std::vector<std::string>> rows;
  for (const ProbeResult& r : outcome.results) {
    rows.push_back({std::string(r.verdict == Verdict::kFail ? "!" : "") + r.name, std::string(VerdictName(r.verdict)),
                    r.finding});
  }
  page.Table({"probe", "verdict", "finding"}, rows);
  page.EndSection();
  for (const ProbeResult& r : outcome.results) ProbeSection(page, r);
  return page.Finish();
}

Status WriteProbeReport(const std::string& path, const std::string& target, const ProbeSuiteOutcome& outcome,
                        bool complete) {
  return report::WriteTextFile(path, ProbeReportHtml(target, outcome, complete));
}

}  // namespace infereng::job
