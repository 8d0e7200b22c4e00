#include "report/sweep_sections.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/axis.h"
#include "report/svg_chart.h"
#include "sweep/search.h"

namespace infereng::report {
namespace {

using sweep::Latency;
using sweep::SweepPoint;

const std::string kKneeColor = "#d55e00", kGoodColor = "#1a7f37", kSloColor = "#c0392b";

// Series of a latency field vs achieved throughput; points without samples are skipped.
Series LatencySeries(std::string name, const std::vector<SweepPoint>& pts, Latency SweepPoint::*field, double Latency::*pct,
                     std::string color, bool dashed, Series::Style style = Series::Style::kLinePoints,
                     bool skip_saturated = false) {
  Series s{.name = std::move(name), .style = style};
  s.color = std::move(color);
  s.dashed = dashed;
  for (const SweepPoint& p : pts) {
    const Latency& l = p.*field;
    if (l.count == 0) continue;
    if (skip_saturated && p.saturated) continue;  // drawn apart: throughput falls back past saturation
    s.x.push_back(p.throughput_rps);
    s.y.push_back(l.*pct);
    s.point_labels.push_back(fmt::format("load {:.4g}: {:.4g} req/s, {:.4g} ms", p.load, p.throughput_rps, l.*pct));
  }
  return s;
}

void AddKneeAndGoodput(ChartSpec& c, const sweep::SweepResult& r, double x_of(const SweepPoint&),
                       double y_of(const SweepPoint&)) {
  if (r.knee) {
    const SweepPoint& p = r.points[*r.knee];
    c.markers.push_back({.x = x_of(p), .y = y_of(p), .label = fmt::format("knee (saturation) @ {:.4g}", p.load), .color = kKneeColor});
  }
  if (r.max_goodput) {
    const SweepPoint& p = r.points[*r.max_goodput];
    c.markers.push_back({.x = x_of(p), .y = y_of(p), .label = fmt::format("max goodput @ {:.4g}", p.load), .color = kGoodColor});
  }
}

std::string LatencyVsThroughput(const sweep::SweepFile& f, const std::string& id, const std::string& title,
                                const std::string& metric_label, Latency SweepPoint::*field,
                                std::initializer_list<std::string_view> slo_metrics) {
  const sweep::SweepResult& r = f.result;
  // The upper curve is the percentile the card's SLO on this metric uses (P90 / P95 / P99),
  // so the SLO line is compared with the curve it constrains; P99 when there is none.
  double Latency::*upper = &Latency::p99;
  std::string upper_name = "P99";
  for (const sweep::SloLine& s : r.slos) {
    if (std::find(slo_metrics.begin(), slo_metrics.end(), s.metric) == slo_metrics.end()) continue;
    if (s.percentile == 90) upper = &Latency::p90;
    if (s.percentile == 95) upper = &Latency::p95;
    if (s.percentile == 90 || s.percentile == 95 || s.percentile == 99) upper_name = fmt::format("P{:g}", s.percentile);
    break;
  }
  ChartSpec c{.id = id, .title = title};
  c.subtitle = "each point is one load level; latency rises steeply past the knee";
  c.x = {.label = "achieved throughput (req/s)", .from_zero = true};
  c.y = {.label = metric_label + " (ms)", .from_zero = true};
  c.series.push_back(LatencySeries("P50", r.points, field, &Latency::p50, PaletteColor(0), false,
                                   Series::Style::kLinePoints, true));
  c.series.push_back(LatencySeries(upper_name, r.points, field, upper, PaletteColor(1), false,
                                   Series::Style::kLinePoints, true));
  std::vector<SweepPoint> saturated;
  for (const SweepPoint& p : r.points) {
    if (p.saturated) saturated.push_back(p);
  }
  if (!saturated.empty()) {
    c.series.push_back(LatencySeries("P50 saturated point", saturated, field, &Latency::p50, PaletteColor(0), false,
                                     Series::Style::kPoints));
    c.series.push_back(LatencySeries(upper_name + " saturated point", saturated, field, upper, PaletteColor(1), false,
                                     Series::Style::kPoints));
    c.series[c.series.size() - 2].hollow = c.series.back().hollow = true;
  }
  if (!f.predicted.empty()) {
    c.series.push_back(LatencySeries("P50 predicted (twin)", f.predicted, field, &Latency::p50, PaletteColor(0), true,
                                     Series::Style::kLine));
    c.series.push_back(LatencySeries(upper_name + " predicted (twin)", f.predicted, field, upper, PaletteColor(1), true,
                                     Series::Style::kLine));
  }
  for (const sweep::SloLine& s : r.slos) {
    if (std::find(slo_metrics.begin(), slo_metrics.end(), s.metric) == slo_metrics.end()) continue;
    c.ref_lines.push_back({.vertical = false, .value = s.threshold_ms,
                           .label = fmt::format("SLO p{:g} ≤ {:g} ms", s.percentile, s.threshold_ms), .color = kSloColor});
  }
  // Markers sit on the upper curve of this metric.
  if (r.knee && (r.points[*r.knee].*field).count) {
    const SweepPoint& p = r.points[*r.knee];
    c.markers.push_back({.x = p.throughput_rps, .y = (p.*field).*upper, .label = fmt::format("knee (saturation) @ {:.4g}", p.load),
                         .color = kKneeColor});
  }
  if (r.max_goodput && (r.points[*r.max_goodput].*field).count) {
    const SweepPoint& p = r.points[*r.max_goodput];
    c.markers.push_back({.x = p.throughput_rps, .y = (p.*field).*upper, .label = fmt::format("max goodput @ {:.4g}", p.load),
                         .color = kGoodColor});
  }
  // Latency past saturation can be orders of magnitude larger: switch to log when it is.
  double lo = 1e300, hi = 0;
  for (const Series& s : c.series) {
    for (double y : s.y) {
      if (y > 0) { lo = std::min(lo, y); hi = std::max(hi, y); }
    }
  }
  if (hi > 0 && hi / lo > 50) {
    c.y.log = true;
    c.y.from_zero = false;
  }
  return RenderChart(c);
}

}  // namespace

int AddSweepSections(HtmlPage& page, const sweep::SweepFile& f) {
  const sweep::SweepResult& r = f.result;
  const char* unit = sweep::LoadUnit(r.kind);
  int charts = 0;

  page.BeginSection("sweep", "Sweep result");
  std::vector<Kpi> k;
  k.push_back({"points run", std::to_string(r.points.size()), fmt::format("by {}", sweep::LoadKindName(r.kind))});
  if (r.saturation_load) {
    k.push_back({"saturation", fmt::format("{} {}", FormatNumber(*r.saturation_load), unit),
                 r.knee ? fmt::format("knee at {} {}", FormatNumber(r.points[*r.knee].load), unit) : "at the first point"});
  } else {
    k.push_back({"saturation", "not reached", fmt::format("highest load {}", r.points.empty() ? "-" : FormatNumber(r.points.back().load))});
  }
  k.push_back({"max throughput", FormatNumber(r.max_throughput_rps) + " req/s", "any point"});
  if (r.max_goodput) {
    const SweepPoint& p = r.points[*r.max_goodput];
    k.push_back({"max goodput under SLO", FormatNumber(p.goodput_rps) + " req/s",
                 fmt::format("at {} {}; every objective met, attainment ≥ {:.4g}%", FormatNumber(p.load), unit,
                             r.attainment_target * 100), Kpi::kGood});
    k.push_back({"binding SLO", r.binding_slo.empty() ? "-" : r.binding_slo, "fails first above it"});
  } else {
    k.push_back({"max goodput under SLO", "none",
                 fmt::format("no load met every objective and {:.4g}% attainment", r.attainment_target * 100), Kpi::kBad});
  }
  page.Kpis(k);
  if (r.partial) page.Notice("Partial sweep: interrupted by the user; the points shown are the ones that finished.");
  if (!r.goodput_thresholds.empty()) page.Paragraph("Goodput thresholds (per request): " + r.goodput_thresholds + ".");
  if (!r.stop_reason.empty()) page.Paragraph("Search stopped: " + r.stop_reason + ".");
  for (const std::string& n : r.notes) page.Notice(n, false);
  if (!r.error.empty()) page.Notice("A point failed to run: " + r.error);
  page.EndSection();

  page.BeginSection("curves", "Latency vs throughput",
                    "The knee is the last load before throughput stops growing; beyond it requests only queue. The "
                    "max-goodput point is the highest load that meets every objective (each on its percentile) and whose "
                    "attainment of the per-request thresholds meets the card's target.");
  page.BeginGrid();
  page.AddSvg(LatencyVsThroughput(f, "sw-ttft", "TTFT vs throughput", "TTFT", &SweepPoint::ttft_ms, {"ttft_ms"}));
  page.AddSvg(LatencyVsThroughput(f, "sw-itl", "ITL vs throughput", "ITL", &SweepPoint::itl_ms, {"itl_ms", "tpot_ms"}));
  page.AddSvg(LatencyVsThroughput(f, "sw-e2e", "E2E latency vs throughput", "E2E", &SweepPoint::e2e_ms, {"e2e_ms"}));
  charts += 3;
  page.EndGrid();
  page.EndSection();

  page.BeginSection("load", "Goodput and attainment vs offered load");
  page.BeginGrid();
  {
    ChartSpec c{.id = "sw-goodput", .title = "Throughput and goodput vs offered load"};
    c.subtitle = "goodput counts only requests that succeeded and met every per-request threshold";
    c.x = {.label = fmt::format("offered load ({})", unit), .from_zero = true};
    c.y = {.label = "requests / s", .from_zero = true};
    Series tput{.name = "throughput", .style = Series::Style::kLinePoints}, good{.name = "goodput", .style = Series::Style::kLinePoints};
    tput.color = PaletteColor(0);
    good.color = kGoodColor;
    for (const SweepPoint& p : r.points) {
      tput.x.push_back(p.load);
      tput.y.push_back(p.throughput_rps);
      good.x.push_back(p.load);
      good.y.push_back(p.goodput_rps);
    }
    if (r.kind == sweep::LoadKind::kRate && !r.points.empty()) {
      Series ideal{.name = "offered (ideal)", .x = {0, r.points.back().load}, .y = {0, r.points.back().load}};
      ideal.color = "#aaaaaa";
      ideal.dashed = true;
      c.series.push_back(std::move(ideal));
    }
    c.series.push_back(std::move(tput));
    c.series.push_back(std::move(good));
    if (!f.predicted.empty()) {
      Series pt{.name = "throughput predicted (twin)"}, pg{.name = "goodput predicted (twin)"};
      pt.color = PaletteColor(0);
      pg.color = kGoodColor;
      pt.dashed = pg.dashed = true;
      for (const SweepPoint& p : f.predicted) {
        pt.x.push_back(p.load);
        pt.y.push_back(p.throughput_rps);
        pg.x.push_back(p.load);
        pg.y.push_back(p.goodput_rps);
      }
      c.series.push_back(std::move(pt));
      c.series.push_back(std::move(pg));
    }
    AddKneeAndGoodput(c, r, [](const SweepPoint& p) { return p.load; }, [](const SweepPoint& p) { return p.throughput_rps; });
    if (r.max_goodput) c.markers.back().y = r.points[*r.max_goodput].goodput_rps;
    if (r.saturation_load) c.ref_lines.push_back({.value = *r.saturation_load, .label = "saturated from here", .color = kKneeColor});
    page.AddSvg(RenderChart(c));
  }
  {
    ChartSpec c{.id = "sw-attain", .title = "SLO attainment vs offered load"};
    c.subtitle = "share of in-window requests that succeeded and met every per-request threshold, and each alone";
    c.x = {.label = fmt::format("offered load ({})", unit), .from_zero = true};
    c.y = {.label = "attainment (%)", .min = 0, .max = 100};
    Series all{.name = "all thresholds", .style = Series::Style::kLinePoints};
    all.color = PaletteColor(0);
    std::map<std::string, Series> per;
    for (const SweepPoint& p : r.points) {
      all.x.push_back(p.load);
      all.y.push_back(p.attainment * 100);
      for (const auto& [name, share] : p.slo_met_share) {
        Series& s = per[name];
        s.name = name;
        s.x.push_back(p.load);
        s.y.push_back(share * 100);
      }
    }
    c.series.push_back(std::move(all));
    std::size_t i = 2;
    for (auto& [name, s] : per) {
      s.dashed = true;
      s.color = PaletteColor(i++);
      c.series.push_back(std::move(s));
    }
    if (!f.predicted.empty()) {
      Series pa{.name = "all thresholds predicted (twin)"};
      pa.color = PaletteColor(1);
      pa.dashed = true;
      for (const SweepPoint& p : f.predicted) {
        pa.x.push_back(p.load);
        pa.y.push_back(p.attainment * 100);
      }
      c.series.push_back(std::move(pa));
    }
    c.ref_lines.push_back({.vertical = false, .value = r.attainment_target * 100,
                           .label = fmt::format("target {:.4g}%", r.attainment_target * 100), .color = kSloColor});
    if (r.max_goodput) {
      const SweepPoint& p = r.points[*r.max_goodput];
      c.markers.push_back({.x = p.load, .y = p.attainment * 100, .label = fmt::format("max goodput @ {:.4g}", p.load), .color = kGoodColor});
    }
    page.AddSvg(RenderChart(c));
  }
  charts += 2;
  page.EndGrid();
  page.EndSection();

  page.BeginSection("points", "Points",
                    "One full run per load; each has its own directory and report. Highlighted: the max-goodput point.");
  std::vector<std::vector<std::string>> rows;
  auto lat = [](const Latency& l, double v) { return l.count ? FormatNumber(v) : std::string("-"); };
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    std::string flags;
    if (r.knee == i) flags += "knee ";
    if (r.max_goodput == i) flags += "max goodput ";
    if (sweep::PointSaturated(p, r.kind, 0.10)) flags += p.stopped_early ? "saturated (stopped early) " : "saturated ";
    if (!p.slo_pass) flags += "SLO miss ";
    rows.push_back({(r.max_goodput == i ? "!" : "") + FormatNumber(p.load), FormatNumber(p.throughput_rps),
                    FormatNumber(p.output_tok_s), FormatNumber(p.goodput_rps), fmt::format("{:.2f}", p.attainment * 100),
                    lat(p.ttft_ms, p.ttft_ms.p50), lat(p.ttft_ms, p.ttft_ms.p99), lat(p.itl_ms, p.itl_ms.p99),
                    lat(p.e2e_ms, p.e2e_ms.p99), std::to_string(p.errors), flags, p.dir});
  }
  page.Table({std::string("load (") + unit + ")", "req/s", "tok/s", "goodput", "attain %", "TTFT p50", "TTFT p99", "ITL p99",
              "E2E p99", "errors", "flags", "directory"},
             rows, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (const SweepPoint& p : r.points) {
    if (p.dir.empty()) continue;
    page.LocalLink(p.dir + "/report.html", fmt::format("report @ {}", FormatNumber(p.load)));
    page.AddRaw(" &middot; ");
  }
  page.EndSection();
  return charts;
}

}  // namespace infereng::report
