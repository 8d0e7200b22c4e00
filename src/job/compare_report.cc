// Comparison -> JSON, terminal text, Markdown, HTML (compare_report.h).
#include "job/compare_report.h"

#include <fmt/format.h>

#include <cmath>

#include "report/escape.h"
#include "report/html_page.h"

namespace infereng::job {
namespace {

nlohmann::json Opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string Num(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}
std::string Signed(double v) { return (v > 0 ? "+" : "") + Num(v); }
std::string Pct(double f) { return fmt::format("{:+.1f}%", 100 * f); }

// One table row, the same for text, Markdown and HTML.
struct Row {
  std::vector<std::string> cells;
  bool loud = false;  // a detected change
};

const std::vector<std::string> kHeader = {"metric", "A", "B", "B - A", "95% CI", "B/A - 1", "verdict", "n to detect"};

// The incl.-queue distributions matter only where the client queued (a capped open loop).
bool Queued(const Comparison& c) {
  const MetricDelta* t = c.Find("ttft_ms.p99");
  const MetricDelta* tq = c.Find("ttft_incl_queue_ms.p99");
  if (!t || !tq) return false;
  return tq->ci.a > t->ci.a * 1.05 + 1 || tq->ci.b > t->ci.b * 1.05 + 1;
}

std::vector<Row> MetricRows(const Comparison& c, bool all) {
  const bool queued = all || Queued(c);
  std::vector<Row> rows;
  for (const MetricDelta& d : c.metrics) {
    if (!queued && d.key.find("_incl_queue_") != std::string::npos) continue;
    const std::string unit = d.unit.empty() ? "" : " " + d.unit;
    Row r;
    r.cells.push_back(d.label + (d.unit.empty() ? "" : " (" + d.unit + ")"));
    r.cells.push_back(Num(d.ci.a));
    r.cells.push_back(Num(d.ci.b));
    r.cells.push_back(Signed(d.ci.delta));
    r.cells.push_back(d.ci.defined ? fmt::format("[{}, {}]", Signed(d.ci.low), Signed(d.ci.high)) : "n/a");
    std::string rel = d.ci.rel ? Pct(*d.ci.rel) : "n/a";
    if (d.ci.rel_low && d.ci.rel_high) rel += fmt::format(" [{}, {}]", Pct(*d.ci.rel_low), Pct(*d.ci.rel_high));
    r.cells.push_back(rel);
    r.cells.push_back(DeltaVerdictName(d.verdict));
    r.cells.push_back(d.requests_to_detect ? fmt::format("~{}", *d.requests_to_detect) : "");
    r.loud = d.verdict == DeltaVerdict::kBetter || d.verdict == DeltaVerdict::kWorse;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<std::vector<std::string>> SweepRows(const Comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const SweepShift& s : c.sweep) {
    auto v = [](const std::optional<double>& x) { return x ? Num(*x) : std::string("none"); };
    std::string delta = "n/a", rel = "n/a";
    if (s.a && s.b) {
      delta = Signed(*s.b - *s.a);
      if (*s.a > 0) rel = Pct(*s.b / *s.a - 1);
    }
    rows.push_back({s.what + " (" + s.unit + ")", v(s.a), v(s.b), delta, rel});
  }
  return rows;
}

std::vector<std::vector<std::string>> ChangeRows(const Comparison& c) {
  std::vector<std::vector<std::string>> rows;
  for (const ManifestChange& ch : c.manifest.changes) rows.push_back({ch.variable, ch.key, ch.a, ch.b});
  return rows;
}

std::string ExperimentLine(const Comparison& c) {
  std::string vars;
  for (const std::string& v : c.manifest.variables) vars += (vars.empty() ? "" : ", ") + v;
  return fmt::format("What changed: {}{}", ExperimentKindName(c.manifest.kind), vars.empty() ? "" : " (" + vars + ")");
}

std::string Table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& r) {
    std::string l = " ";
    for (std::size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      l += " " + cell + std::string(w[i] - std::min(w[i], cell.size()), ' ') + " ";
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

std::string AcceptLine(const AcceptResult& r) {
  return fmt::format("{} {} ({}): {}{}", r.pass ? "PASS" : "FAIL", r.expression, r.source, r.detail,
                     r.source == "--accept" && r.pass ? (r.confident ? "; the whole interval passes" : "; the interval straddles the bound") : "");
}

}  // namespace

nlohmann::json ComparisonToJson(const Comparison& c) {
  using nlohmann::json;
  json changes = json::array();
  for (const ManifestChange& ch : c.manifest.changes) {
    changes.push_back({{"variable", ch.variable}, {"kind", VariableKindName(ch.kind)}, {"key", ch.key}, {"a", ch.a}, {"b", ch.b}});
  }
  json metrics = json::array();
  for (const MetricDelta& d : c.metrics) {
    metrics.push_back({{"key", d.key},
                       {"label", d.label},
                       {"unit", d.unit},
                       {"better", d.better == Better::kLower ? "lower" : "higher"},
                       {"a", d.ci.a},
                       {"b", d.ci.b},
                       {"delta", d.ci.delta},
                       {"ci_low", d.ci.defined ? json(d.ci.low) : json(nullptr)},
                       {"ci_high", d.ci.defined ? json(d.ci.high) : json(nullptr)},
                       {"rel", Opt(d.ci.rel)},
                       {"rel_low", Opt(d.ci.rel_low)},
                       {"rel_high", Opt(d.ci.rel_high)},
                       {"n_a", d.ci.n_a},
                       {"n_b", d.ci.n_b},
                       {"verdict", DeltaVerdictName(d.verdict)},
                       {"requests_to_detect", d.requests_to_detect ? json(*d.requests_to_detect) : json(nullptr)},
                       {"method", d.method}});
  }
  json sweep = json::array();
  for (const SweepShift& s : c.sweep) {
    sweep.push_back({{"what", s.what}, {"a", Opt(s.a)}, {"b", Opt(s.b)},
                     {"delta", s.a && s.b ? json(*s.b - *s.a) : json(nullptr)}, {"unit", s.unit}});
  }
  json findings = json::array();
  for (const Finding& f : c.findings) {
    static const char* kNames[] = {"not_one_variable", "replicate", "identical", "quality_not_a_win", "quality_dropped",
                                   "partial_run", "source_mix", "no_records", "note"};
    findings.push_back({{"kind", kNames[static_cast<int>(f.kind)]}, {"warning", f.warning}, {"text", f.text}});
  }
  json acceptance = json::array();
  for (const AcceptResult& r : c.acceptance) {
    acceptance.push_back({{"expression", r.expression}, {"source", r.source}, {"pass", r.pass},
                          {"confident", r.confident}, {"detail", r.detail}});
  }
  const metrics::BootstrapOptions& o = c.bootstrap;
  return {{"schema", "infereng.compare/1"},
          {"a", c.a_dir},
          {"b", c.b_dir},
          {"kind", c.sweeps ? "sweeps" : "runs"},
          {"experiment",
           {{"kind", ExperimentKindName(c.manifest.kind)}, {"variables", c.manifest.variables},
            {"changes", changes}, {"notes", c.manifest.notes}}},
          {"metrics", metrics},
          {"sweep", sweep},
          {"findings", findings},
          {"acceptance", acceptance},
          {"accepted", c.accepted},
          {"notes", {{"a", c.notes_a}, {"b", c.notes_b}}},
          {"bootstrap", {{"resamples", o.resamples}, {"confidence", o.confidence}, {"seed", o.seed},
                         {"max_values", o.max_values}, {"min_units", o.min_units}, {"block", o.block}}},
          {"requests_to_detect_method", metrics::kRequestsToDetectMethod}};
}

std::string FormatComparisonText(const Comparison& c, const CompareTextOptions& options) {
  std::string out = fmt::format("A: {}\nB: {}\n\n", c.a_dir, c.b_dir);
  for (const Finding& f : c.findings) {
    if (f.warning) out += "!! " + f.text + "\n";
  }
  out += ExperimentLine(c) + "\n";
  for (const ManifestChange& ch : c.manifest.changes) {
    out += fmt::format("  {}: {}: {} -> {}\n", ch.variable, ch.key, ch.a, ch.b);
  }
  for (const std::string& n : c.manifest.notes) out += "  note: " + n + "\n";
  for (const Finding& f : c.findings) {
    if (!f.warning) out += "  " + f.text + "\n";
  }
  for (const std::string& n : c.notes_a) out += "  A: " + n + "\n";
  for (const std::string& n : c.notes_b) out += "  B: " + n + "\n";
  out += "\n";
  if (c.sweeps) {
    out += Table({"sweep", "A", "B", "B - A", "B/A - 1"}, SweepRows(c));
  } else {
    std::vector<std::vector<std::string>> rows;
    for (Row& r : MetricRows(c, options.all_metrics)) rows.push_back(std::move(r.cells));
    out += Table(kHeader, rows);
    out += fmt::format("\n{:.0f}% intervals: bootstrap over requests ({} resamples, seed {}); error and quality rates: "
                       "Newcombe's two-proportion interval.\nn to detect: {}.\n",
                       100 * c.bootstrap.confidence, c.bootstrap.resamples, c.bootstrap.seed,
                       metrics::kRequestsToDetectMethod);
  }
  if (!c.acceptance.empty()) {
    out += "\nAcceptance:\n";
    for (const AcceptResult& r : c.acceptance) out += "  " + AcceptLine(r) + "\n";
    out += c.accepted ? "ACCEPTED\n" : "NOT ACCEPTED\n";
  }
  return out;
}

std::string ComparisonMarkdown(const Comparison& c) {
  using report::MarkdownCell;
  std::string md = fmt::format("# infereng compare\n\n- A: `{}`\n- B: `{}`\n\n", MarkdownCell(c.a_dir), MarkdownCell(c.b_dir));
  for (const Finding& f : c.findings) md += (f.warning ? "> **" + MarkdownCell(f.text) + "**\n\n" : "");
  md += "## What changed\n\n" + MarkdownCell(ExperimentLine(c)) + "\n\n";
  if (!c.manifest.changes.empty()) {
    md += "| variable | key | A | B |\n|---|---|---|---|\n";
    for (const auto& r : ChangeRows(c)) {
      md += fmt::format("| {} | {} | {} | {} |\n", MarkdownCell(r[0]), MarkdownCell(r[1]), MarkdownCell(r[2]), MarkdownCell(r[3]));
    }
    md += "\n";
  }
  for (const std::string& n : c.manifest.notes) md += "- " + MarkdownCell(n) + "\n";
  for (const Finding& f : c.findings) md += f.warning ? "" : "- " + MarkdownCell(f.text) + "\n";
  md += "\n";
  if (c.sweeps) {
    md += "## Sweep shift\n\n| | A | B | B - A | B/A - 1 |\n|---|---|---|---|---|\n";
    for (const auto& r : SweepRows(c)) {
      md += "|";
      for (const std::string& cell : r) md += " " + MarkdownCell(cell) + " |";
      md += "\n";
    }
  } else {
    md += "## Metrics\n\n|";
    for (const std::string& h : kHeader) md += " " + h + " |";
    md += "\n|" + std::string("---|") + std::string("---:|---:|---:|---|---|---|---:|") + "\n";
    for (const Row& r : MetricRows(c, true)) {
      md += "|";
      for (std::size_t i = 0; i < r.cells.size(); ++i) {
        const std::string cell = MarkdownCell(r.cells[i]);
        md += " " + (r.loud && i == 6 ? "**" + cell + "**" : cell) + " |";
      }
      md += "\n";
    }
    md += fmt::format("\n{:.0f}% bootstrap intervals over requests ({} resamples, seed {}). {}.\n",
                      100 * c.bootstrap.confidence, c.bootstrap.resamples, c.bootstrap.seed,
                      MarkdownCell(metrics::kRequestsToDetectMethod));
  }
  if (!c.acceptance.empty()) {
    md += "\n## Acceptance\n\n";
    for (const AcceptResult& r : c.acceptance) md += "- " + MarkdownCell(AcceptLine(r)) + "\n";
    md += c.accepted ? "\n**ACCEPTED**\n" : "\n**NOT ACCEPTED**\n";
  }
  return md;
}

std::string ComparisonHtml(const Comparison& c) {
  report::HtmlPage page("infereng compare");
  page.Header("infereng compare", {"A: " + c.a_dir, "B: " + c.b_dir});
  for (const Finding& f : c.findings) {
    if (f.warning) page.Notice(f.text);
  }
  page.BeginSection("changed", "What changed", ExperimentLine(c));
  if (!c.manifest.changes.empty()) page.Table({"variable", "key", "A", "B"}, ChangeRows(c));
  for (const std::string& n : c.manifest.notes) page.Paragraph(n);
  for (const Finding& f : c.findings) {
    if (!f.warning) page.Paragraph(f.text);
  }
  page.EndSection();
  if (c.sweeps) {
    page.BeginSection("sweep", "Sweep shift");
    page.Table({"", "A", "B", "B - A", "B/A - 1"}, SweepRows(c), {1, 2, 3, 4});
    page.EndSection();
  } else {
    page.BeginSection("metrics", "Metrics",
                      fmt::format("{:.0f}% bootstrap intervals over requests ({} resamples, seed {}); error and quality "
                                  "rates: Newcombe's two-proportion interval. n to detect: {}.",
                                  100 * c.bootstrap.confidence, c.bootstrap.resamples, c.bootstrap.seed,
                                  metrics::kRequestsToDetectMethod));
    std::vector<std::vector<std::string>> rows;
    for (Row& r : MetricRows(c, true)) {
      if (r.loud) r.cells[0] = "!" + r.cells[0];  // highlighted by HtmlPage
      rows.push_back(std::move(r.cells));
    }
    page.Table(kHeader, rows, {1, 2, 3, 7});
    page.EndSection();
  }
  if (!c.acceptance.empty()) {
    page.BeginSection("acceptance", "Acceptance", c.accepted ? "ACCEPTED" : "NOT ACCEPTED");
    std::vector<std::vector<std::string>> rows;
    for (const AcceptResult& r : c.acceptance) {
      rows.push_back({(r.pass ? "" : "!") + std::string(r.pass ? "PASS" : "FAIL"), r.expression, r.source, r.detail});
    }
    page.Table({"result", "expression", "source", "detail"}, rows);
    page.EndSection();
  }
  return page.Finish();
}

}  // namespace infereng::job
