#include "report/engine_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "report/svg_chart.h"

namespace infereng::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct EngineSeries {
  std::map<std::string, Series> by_signal;
  std::string engine;
  int bad_lines = 0;
  double t_max = 0;
};

std::string EngineFile(const std::string& dir) {
  for (const char* n : {"engine_metrics.jsonl", "trial-1/engine_metrics.jsonl"}) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / n, ec)) return (fs::path(dir) / n).string();
  }
  return "";
}

EngineSeries ReadEngineSeries(const std::string& path) {
  EngineSeries out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("t_s") || !j["t_s"].is_number()) {
      ++out.bad_lines;
      continue;
    }
    const double t = j["t_s"].get<double>();
    out.t_max = std::max(out.t_max, t);
    if (j.contains("engine") && j["engine"].is_string()) out.engine = j["engine"].get<std::string>();
    if (!j.contains("signals") || !j["signals"].is_object()) continue;
    for (const auto& [name, v] : j["signals"].items()) {
      if (!v.is_number()) continue;
      Series& s = out.by_signal[name];
      s.name = name;
      s.x.push_back(t);
      s.y.push_back(v.get<double>());
    }
  }
  return out;
}

ChartSpec TimeChart(const std::string& id, const std::string& title, const std::string& y_label, double t_max) {
  ChartSpec c;
  c.id = id;
  c.title = title;
  c.x = {.label = "time since start (s)", .from_zero = true, .min = 0, .max = t_max};
  c.y = {.label = y_label, .from_zero = true};
  c.width = 900;
  c.height = 220;
  return c;
}

std::string Fmt(double v) { return std::abs(v) >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

json ReadDiagnosis(const std::string& dir) {
  std::ifstream in((fs::path(dir) / "diagnose.json").string());
  if (!in) return json();
  json j = json::parse(in, nullptr, false);
  return j.is_object() && j.value("schema", "") == "infereng.diagnose/1" ? j : json();
}

std::string EvidenceText(const json& ev) {
  std::string s;
  for (const json& e : ev) {
    const std::string unit = e.value("unit", "");
    s += fmt::format("{}{}: {}{}{} ({})", s.empty() ? "" : "; ", e.value("what", ""), Fmt(e.value("value", 0.0)),
                     unit == "%" || unit == "x" || unit.empty() ? "" : " ", unit, e.value("source", ""));
  }
  return s;
}

}  // namespace

int AddEngineSignalsSection(HtmlPage& page, const RunData& run, const std::string& id_prefix) {
  const std::string path = EngineFile(run.dir);
  if (path.empty()) return 0;
  EngineSeries es = ReadEngineSeries(path);
  if (es.by_signal.empty()) return 0;
  double t_max = es.t_max;
  if (run.summary && !run.summary->timeseries.empty()) {
    const metrics::TimeBucket& b = run.summary->timeseries.back();
    t_max = std::max(t_max, b.start_s + b.width_s);
  }
  page.BeginSection(id_prefix + "-engine", "Engine signals on the client's time axis",
                    "The client's TTFT (top) and the engine's own /metrics, scraped during the run "
                    "(engine_metrics.jsonl, engine \"" + es.engine + "\"), on one time axis: seconds since the run's start.");
  if (es.bad_lines > 0) page.Notice(fmt::format("{}: {} unreadable line(s) skipped", path, es.bad_lines));
  int charts = 0;
  if (run.summary && !run.summary->timeseries.empty()) {
    ChartSpec c = TimeChart(id_prefix + "-eng-ttft", "Client: TTFT per second", "ms", t_max);
    Series mean{.name = "TTFT mean"}, p99{.name = "TTFT p99", .dashed = true};
    for (const metrics::TimeBucket& b : run.summary->timeseries) {
      if (b.ttft_count == 0) continue;
      mean.x.push_back(b.start_s + b.width_s / 2);
      mean.y.push_back(b.ttft_mean_ms);
      p99.x.push_back(b.start_s + b.width_s / 2);
      p99.y.push_back(b.ttft_p99_ms);
    }
    c.series = {mean, p99};
    page.AddSvg(RenderChart(c));
    ++charts;
  }
  struct Panel {
    const char* id;
    const char* title;
    const char* unit;
    std::vector<const char*> signals;
    double scale;
  };
  const Panel panels[] = {
      {"queue", "Engine: requests waiting and running", "requests", {"waiting", "running"}, 1},
      {"kv", "Engine: KV-cache usage", "%", {"kv_usage"}, 100},
      {"preempt", "Engine: preemptions per scrape", "count", {"preemptions"}, 1},
      {"times", "Engine: queue / prefill / decode time (mean per interval)", "ms",
       {"queue_time_s", "prefill_time_s", "decode_time_s"}, 1000},
      {"tput", "Engine: prompt and generation throughput", "tokens/s", {"prompt_tokens_per_s", "generation_tokens_per_s"}, 1},
  };
  for (const Panel& p : panels) {
    ChartSpec c = TimeChart(id_prefix + "-eng-" + p.id, p.title, p.unit, t_max);
    for (const char* name : p.signals) {
      auto it = es.by_signal.find(name);
      if (it == es.by_signal.end()) continue;
      Series s = it->second;
      for (double& y : s.y) y *= p.scale;
      s.style = Series::Style::kLinePoints;
      c.series.push_back(std::move(s));
    }
    if (c.series.empty()) continue;
    page.AddSvg(RenderChart(c));
    ++charts;
  }
  page.EndSection();
  return charts;
}

void AddDiagnosisSection(HtmlPage& page, const std::string& dir, const std::string& id_prefix) {
  const json d = ReadDiagnosis(dir);
  if (d.is_null()) return;
  page.BeginSection(id_prefix + "-diagnosis", "Diagnosis",
                    "Validity of the measurement first, then bottleneck hypotheses ranked, each with its evidence, what "
                    "would refute it and the one-variable experiment that proves it (infereng diagnose; docs/diagnose.md).");
  if (d.value("client_shaped", false)) {
    page.Notice("The client shaped this result: read these numbers as the client's, not the engine's.");
  }
  std::vector<std::vector<std::string>> rows;
  for (const json& c : d.value("validity", json::array())) {
    const std::string status = c.value("status", "");
    rows.push_back({(status == "fail" ? "!" : "") + c.value("title", ""), status, c.value("detail", ""),
                    EvidenceText(c.value("evidence", json::array()))});
  }
  page.Table({"check", "status", "finding", "figures"}, rows);
  rows.clear();
  for (const json& h : d.value("hypotheses", json::array())) {
    const json& x = h.value("experiment", json::object());
    rows.push_back({std::to_string(h.value("rank", 0)), h.value("title", ""), h.value("confidence", ""),
                    EvidenceText(h.value("evidence", json::array())), h.value("refuted_by", ""),
                    x.value("variable", "") + ": " + x.value("change", "") + " (confirmed if " + x.value("expect", "") + ")"});
  }
  if (rows.empty()) {
    page.Paragraph("None of the symptom table's patterns shows in this run.");
  } else {
    page.Table({"#", "hypothesis", "confidence", "evidence", "refuted if", "one-variable experiment"}, rows, {0});
  }
  for (const json& n : d.value("notes", json::array())) {
    if (n.is_string()) page.Paragraph("Note: " + n.get<std::string>());
  }
  page.EndSection();
}

std::string DiagnosisMarkdownSection(const std::string& dir) {
  const json d = ReadDiagnosis(dir);
  if (d.is_null()) return "";
  std::string out = "\n## Diagnosis\n\n";
  if (d.value("client_shaped", false)) out += "**The client shaped this result.**\n\n";
  out += "| check | status | finding |\n|---|---|---|\n";
  for (const json& c : d.value("validity", json::array())) {
    out += fmt::format("| {} | {} | {} |\n", c.value("title", ""), c.value("status", ""), c.value("detail", ""));
  }
  out += "\n";
  for (const json& h : d.value("hypotheses", json::array())) {
    const json& x = h.value("experiment", json::object());
    out += fmt::format("{}. **{}** ({} confidence): {}. Experiment: {}.\n", h.value("rank", 0), h.value("title", ""),
                       h.value("confidence", ""), EvidenceText(h.value("evidence", json::array())), x.value("change", ""));
  }
  return out;
}

}  // namespace infereng::report
