#include "report/quality_section.h"

#include <fmt/format.h>

#include "report/axis.h"
#include "report/svg_chart.h"

namespace infereng::report {
namespace {

std::string Pct(double x) { return fmt::format("{:.1f}%", x * 100); }

std::string OverTimeChart(const metrics::QualityReport& q, const std::string& id_prefix) {
  ChartSpec c;
  c.id = id_prefix + "-quality-time";
  c.title = "Quality pass rate over time";
  c.subtitle = "per bucket of completions; the band is each bucket's 95% Wilson interval";
  c.x.label = "time since start (s)";
  c.y = {.label = "pass rate (%)", .min = 0, .max = 100};
  Series rate{.name = "pass rate", .style = Series::Style::kLinePoints};
  Series lo{.name = "95% low", .style = Series::Style::kLine, .color = "#999999", .dashed = true};
  Series hi{.name = "95% high", .style = Series::Style::kLine, .color = "#999999", .dashed = true};
  for (const metrics::QualityBucket& b : q.timeseries) {
    if (b.checked == 0) continue;
    const double mid = b.start_s + b.width_s / 2;
    const metrics::ProportionCi ci = metrics::WilsonInterval(b.passed, b.checked);
    rate.x.push_back(mid);
    rate.y.push_back(100.0 * static_cast<double>(b.passed) / static_cast<double>(b.checked));
    rate.point_labels.push_back(fmt::format("{} of {} passed at {}-{} s", b.passed, b.checked, FormatNumber(b.start_s),
                                            FormatNumber(b.start_s + b.width_s)));
    lo.x.push_back(mid);
    lo.y.push_back(100 * ci.low);
    hi.x.push_back(mid);
    hi.y.push_back(100 * ci.high);
  }
  c.series = {std::move(rate), std::move(lo), std::move(hi)};
  if (q.pass_threshold > 0) {
    c.ref_lines.push_back({.vertical = false, .value = 100 * q.pass_threshold, .label = "threshold " + Pct(q.pass_threshold)});
  }
  return RenderChart(c);
}

std::string ByCheckChart(const metrics::QualityReport& q, const std::string& id_prefix) {
  BarChartSpec b;
  b.id = id_prefix + "-quality-kind";
  b.title = "Pass rate by check kind";
  b.value_label = "pass rate (%)";
  b.color = "#2e86c1";
  for (const auto& [kind, t] : q.by_check) {
    const double rate = t.checked > 0 ? 100.0 * static_cast<double>(t.passed) / static_cast<double>(t.checked) : 0;
    b.bars.push_back({fmt::format("{} ({}/{})", kind, t.passed, t.checked), rate});
  }
  return RenderBarChart(b);
}

}  // namespace

int AddQualitySection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                      const std::string& heading_prefix) {
  if (!run.quality) return 0;
  const metrics::QualityReport& q = *run.quality;
  page.BeginSection(id_prefix + "-quality", heading_prefix + "Quality",
                    "The eval-set requests sent among the load, checked as they finished: a faster configuration "
                    "that fails the task is no win.");
  const std::optional<double> rate = q.PassRate();
  if (!rate) {
    page.Paragraph("No eval-set request finished inside the measurement window: quality was not judged.");
    page.EndSection();
    return 0;
  }
  const metrics::ProportionCi ci = q.Interval();
  Kpi k{.label = "quality pass rate", .value = Pct(*rate),
        .detail = fmt::format("{} of {} · 95% CI [{}, {}] (Wilson)", q.passed, q.checked, Pct(ci.low), Pct(ci.high))};
  std::vector<Kpi> kpis = {k};
  if (q.pass_threshold > 0) {
    kpis[0].state = q.Pass() ? Kpi::kGood : Kpi::kBad;
    kpis.push_back({.label = "threshold", .value = Pct(q.pass_threshold), .detail = q.Pass() ? "PASS" : "FAIL",
                    .state = q.Pass() ? Kpi::kGood : Kpi::kBad});
  }
  page.Kpis(kpis);
  if (q.pass_threshold > 0 && !q.Pass()) {
    page.Notice(metrics::QualityFailureReason(q) + ": the run fails on quality whatever its latency.");
  }
  int charts = 0;
  page.BeginGrid();
  page.AddSvg(OverTimeChart(q, id_prefix));
  ++charts;
  if (!q.by_check.empty()) {
    page.AddSvg(ByCheckChart(q, id_prefix));
    ++charts;
  }
  page.EndGrid();
  const int64_t failed = q.checked - q.passed;
  if (q.failures.empty()) {
    page.Paragraph(failed > 0 ? "The failing cases were not kept." : "No failing case.");
  } else {
    page.Paragraph(fmt::format("Failing cases: the first {} of {} (texts cut to {} bytes, on one line).", q.failures.size(),
                               failed, metrics::kQualityExcerptBytes));
    std::vector<std::vector<std::string>> rows;
    for (const metrics::QualityFailure& f : q.failures) {
      rows.push_back({std::to_string(f.item), f.check, f.prompt, f.expected, f.got, f.why});
    }
    page.Table({"item", "check", "prompt", "expected", "got", "why"}, rows, {0});
  }
  page.EndSection();
  return charts;
}

}  // namespace infereng::report
