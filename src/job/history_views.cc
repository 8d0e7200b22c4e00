#include "job/history_views.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/strings.h"
#include "core/units.h"
#include "report/escape.h"
#include "report/html_page.h"
#include "report/svg_chart.h"

namespace infereng::job {
namespace {

std::string Num(const store::RunEntry& e, const char* metric) {
  const store::MetricValue* m = e.Metric(metric);
  return m ? units::FormatSignificant(m->value, 4) : "-";
}

std::string Verdict(const store::RunEntry& e) {
  std::string v = !e.slo_pass ? "-" : *e.slo_pass ? "pass" : "FAIL";
  if (e.partial) v += " (partial)";
  return v;
}

// "2026-12-01T10:00:00Z" -> "2026-12-01 10:00".
std::string Short(const std::string& iso) {
  if (iso.size() < 16) return iso;
  std::string s = iso.substr(0, 16);
  s[10] = ' ';
  return s;
}

std::string Pad(std::string s, size_t w) {
  // Pads by bytes; history text is ASCII except names users chose.
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string Range(const TrendPoint& p) {
  if (!p.ci_low || !p.ci_high) return "";
  return "[" + units::FormatSignificant(*p.ci_low, 4) + ", " + units::FormatSignificant(*p.ci_high, 4) + "]";
}

}  // namespace

std::string FormatHistoryList(const std::vector<store::RunEntry>& entries) {
  if (entries.empty()) return "no runs in the history match\n";
  std::string out = fmt::format("{:>5}  {:<16}  {:<8}  {:<18}  {:<28}  {:>10}  {:>10}  {}\n", "ID", "REGISTERED (UTC)",
                                "KIND", "CARD", "TARGET", "TTFT P99", "TOK/S", "SLO");
  for (const store::RunEntry& e : entries) {
    out += fmt::format("{:>5}  {:<16}  {:<8}  {:<18}  {:<28}  {:>10}  {:>10}  {}\n", e.id, Short(e.registered_at),
                       e.kind, e.card_name.substr(0, 18), e.target.substr(0, 28), Num(e, "ttft_ms.p99"),
                       Num(e, "output_tokens_per_s"), Verdict(e));
  }
  return out;
}

std::string FormatHistoryEntry(const store::RunEntry& e) {
  std::string out = fmt::format("run #{} ({})\n", e.id, e.kind);
  auto line = [&](const char* k, const std::string& v) {
    if (!v.empty()) out += "  " + Pad(std::string(k) + ":", 16) + v + "\n";
  };
  line("registered", e.registered_at);
  line("started", e.started_at);
  line("directory", e.dir);
  line("card", e.card_name + (e.card_sha256.empty() ? "" : " (sha256 " + e.card_sha256.substr(0, 12) + ")"));
  line("target", e.target);
  line("model", e.model + (e.model_revision.empty() ? "" : " @ " + e.model_revision));
  line("engine", e.engine + (e.engine_version.empty() ? "" : " " + e.engine_version));
  line("host", e.hardware);
  line("infereng", e.tool_version + (e.git_commit.empty() ? "" : " (" + e.git_commit + ")"));
  line("seed", e.seed ? std::to_string(*e.seed) : "");
  line("load", e.load == "{}" ? "" : e.load);
  line("verdict", Verdict(e));
  if (!e.slos.empty()) {
    out += "  SLOs:\n";
    for (const store::SloVerdict& v : e.slos) {
      out += "    " + Pad(v.objective, 36) + (v.pass ? "pass" : "FAIL") +
             (v.value ? "  (measured " + units::FormatSignificant(*v.value, 4) + ")" : "") + "\n";
    }
  }
  if (!e.metrics.empty()) {
    out += "  metrics:\n";
    for (const store::MetricValue& m : e.metrics) {
      std::string ci;
      if (m.ci_low && m.ci_high) {
        ci = "  95% CI [" + units::FormatSignificant(*m.ci_low, 4) + ", " + units::FormatSignificant(*m.ci_high, 4) + "]";
      }
      out += "    " + Pad(m.name, 28) + units::FormatSignificant(m.value, 6) + ci + "\n";
    }
  }
  return out;
}

Result<std::vector<TrendPoint>> TrendOf(const std::vector<store::RunEntry>& entries, const std::string& metric) {
  std::vector<TrendPoint> out;
  std::set<std::string> known;
  for (const store::RunEntry& e : entries) {
    for (const store::MetricValue& m : e.metrics) known.insert(m.name);
    if (const store::MetricValue* m = e.Metric(metric)) {
      out.push_back({e.id, e.registered_at, m->value, m->ci_low, m->ci_high, e.partial});
    }
  }
  if (out.empty()) {
    if (entries.empty()) return Status::NotFound("history trend: no runs match");
    const std::vector<std::string> names(known.begin(), known.end());
    std::string list;
    for (size_t i = 0; i < names.size() && i < 12; ++i) list += (i ? ", " : "") + names[i];
    return Status::NotFound("history trend: no run has metric \"" + metric + "\"" + DidYouMean(metric, names) +
                            "; metrics recorded: " + list + (names.size() > 12 ? ", ..." : ""));
  }
  return out;
}

std::string Sparkline(const std::vector<double>& values) {
  static const char* kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  if (values.empty()) return "";
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string out;
  for (double v : values) {
    int k = 3;
    if (*hi > *lo && std::isfinite(v)) k = static_cast<int>(std::lround((v - *lo) / (*hi - *lo) * 7));
    out += kBlocks[std::clamp(k, 0, 7)];
  }
  return out;
}

std::string FormatTrend(const std::string& metric, const std::vector<TrendPoint>& points) {
  std::vector<double> values;
  for (const TrendPoint& p : points) values.push_back(p.value);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string out = fmt::format("{} over {} run(s): {}  (min {}, max {})\n", metric, points.size(), Sparkline(values),
                                units::FormatSignificant(*lo, 4), units::FormatSignificant(*hi, 4));
  out += fmt::format("{:>5}  {:<16}  {:>12}  {}\n", "ID", "REGISTERED (UTC)", "VALUE", "95% CI");
  for (const TrendPoint& p : points) {
    out += fmt::format("{:>5}  {:<16}  {:>12}  {}{}\n", p.id, Short(p.when), units::FormatSignificant(p.value, 6),
                       Range(p), p.partial ? "  (partial)" : "");
  }
  return out;
}

std::string TrendHtml(const std::string& metric, const std::vector<TrendPoint>& points) {
  report::HtmlPage page("infereng history: " + metric);
  page.Header(metric + " over time", {std::to_string(points.size()) + " run(s) from the history; x = run order "
                                      "(registration time in the table), bars = 95% CI across trials where a run had them"});
  report::ChartSpec c;
  c.id = "trend";
  c.title = metric;
  c.x.label = "run (oldest to newest)";
  c.y.label = metric;
  report::Series s{.name = metric, .style = report::Series::Style::kLinePoints};
  report::Series low{.name = "95% CI low", .style = report::Series::Style::kPoints, .hollow = true};
  report::Series high{.name = "95% CI high", .style = report::Series::Style::kPoints, .hollow = true};
  for (size_t i = 0; i < points.size(); ++i) {
    const TrendPoint& p = points[i];
    s.x.push_back(static_cast<double>(i + 1));
    s.y.push_back(p.value);
    s.point_labels.push_back("#" + std::to_string(p.id) + " " + p.when);
    if (p.ci_low && p.ci_high) {
      low.x.push_back(static_cast<double>(i + 1));
      low.y.push_back(*p.ci_low);
      high.x.push_back(static_cast<double>(i + 1));
      high.y.push_back(*p.ci_high);
    }
  }
  c.series.push_back(std::move(s));
  if (!low.x.empty()) {
    c.series.push_back(std::move(low));
    c.series.push_back(std::move(high));
  }
  page.BeginSection("chart", "Trend");
  page.BeginGrid();
  page.AddSvg(report::RenderChart(c));
  page.EndGrid();
  page.EndSection();
  std::vector<std::vector<std::string>> rows;
  for (const TrendPoint& p : points) {
    rows.push_back({std::to_string(p.id), p.when, units::FormatSignificant(p.value, 6), Range(p),
                    p.partial ? "partial" : ""});
  }
  page.BeginSection("runs", "Runs");
  page.Table({"id", "registered (UTC)", "value", "95% CI", ""}, rows, {0, 2});
  page.EndSection();
  return page.Finish();
}

std::string HistoryCsv(const std::vector<store::RunEntry>& entries) {
  std::set<std::string> names;
  for (const store::RunEntry& e : entries) {
    for (const store::MetricValue& m : e.metrics) names.insert(m.name);
  }
  std::string out = "id,registered_at,started_at,kind,card,card_sha256,target,model,engine,engine_version,seed,"
                    "partial,slo_pass,dir";
  for (const std::string& n : names) out += "," + report::CsvField(n);
  out += "\n";
  for (const store::RunEntry& e : entries) {
    out += std::to_string(e.id);
    for (const std::string* v : {&e.registered_at, &e.started_at, &e.kind, &e.card_name, &e.card_sha256, &e.target,
                                 &e.model, &e.engine, &e.engine_version}) {
      out += "," + report::CsvField(*v);
    }
    out += "," + (e.seed ? std::to_string(*e.seed) : std::string());
    out += std::string(",") + (e.partial ? "1" : "0");
    out += "," + (e.slo_pass ? std::string(*e.slo_pass ? "1" : "0") : std::string());
    out += "," + report::CsvField(e.dir);
    for (const std::string& n : names) {
      const store::MetricValue* m = e.Metric(n);
      out += "," + (m ? fmt::format("{}", m->value) : std::string());
    }
    out += "\n";
  }
  return out;
}

}  // namespace infereng::job
