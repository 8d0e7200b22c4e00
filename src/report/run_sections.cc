#include "report/run_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "card/slo.h"
#include "metrics/caveats.h"
#include "metrics/summary_table.h"
#include "report/axis.h"
#include "report/quality_section.h"
#include "report/embeddings_section.h"
#include "report/audio_section.h"
#include "report/vision_section.h"
#include "report/session_section.h"
#include "report/run_charts.h"

namespace infereng::report {
namespace {

bool SecretKey(std::string key) {
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* s : {"api_key", "apikey", "api-key", "secret", "password", "passwd", "authorization", "bearer"}) {
    if (key.find(s) != std::string::npos) return true;
  }
  // "api_key_source" says where a key came from (env:NAME), never the key: keep it.
  return key == "key" || key == "token" || key == "access_token";
}

// A manifest value as text: strings as they are, fractions to 6 significant digits
// (0.4381412531622871 -> 0.438141), everything else as JSON.
std::string ScalarText(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_float()) return fmt::format("{:.6g}", j.get<double>());
  return j.dump();
}

void Flatten(const nlohmann::json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    if (j.empty()) out.emplace_back(prefix, "{}");
    for (const auto& [k, v] : j.items()) {
      std::string key = prefix.empty() ? k : prefix + "." + k;
      if (SecretKey(k) && k.find("source") == std::string::npos) {
        out.emplace_back(key, "[redacted]");
      } else {
        Flatten(v, key, out);
      }
    }
  } else if (j.is_array()) {
    bool scalars = std::all_of(j.begin(), j.end(), [](const nlohmann::json& e) { return !e.is_structured(); });
    if (scalars) {
      std::string s;
      for (const auto& e : j) s += (s.empty() ? "" : ", ") + ScalarText(e);
      out.emplace_back(prefix, s);
    } else {
      for (std::size_t i = 0; i < j.size(); ++i) Flatten(j[i], fmt::format("{}[{}]", prefix, i), out);
    }
  } else {
    out.emplace_back(prefix, ScalarText(j));
  }
}

std::string Pct(double share) { return fmt::format("{:.2f}%", share * 100); }

// "12.3 [11.0, 13.6]" from a trials {"mean", "ci_low", "ci_high", "defined", "clamped"} object
// ("*": the interval was cut to the metric's range; "CI n/a" below 3 trials); "-" when absent.
std::string MeanCi(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("mean") || !j["mean"].is_number()) return "-";
  std::string s = FormatNumber(j["mean"].get<double>());
  if (!j.value("defined", false) || !j.contains("ci_low") || !j["ci_low"].is_number() || !j.contains("ci_high") ||
      !j["ci_high"].is_number()) {
    return s + " [CI n/a]";
  }
  return fmt::format("{} [{}, {}]{}", s, FormatNumber(j["ci_low"].get<double>()),
                     FormatNumber(j["ci_high"].get<double>()), j.value("clamped", false) ? "*" : "");
}

// Every trial's verdict, and the mean and 95% confidence interval of the headline figures
// across repeated trials.
void AddTrials(HtmlPage& page, const RunData& run) {
  const nlohmann::json& t = run.trials;
  if (!t.is_object() || !t.contains("distributions") || !t["distributions"].is_object()) return;
  int64_t n = t.value("trials", int64_t{0});
  if (n < 2) return;
  if (t.contains("verdict") && t["verdict"].is_object()) {
    const nlohmann::json& v = t["verdict"];
    std::string failed;
    for (const auto& f : v.value("failed_trials", nlohmann::json::array())) {
      failed += (failed.empty() ? "" : ", ") + f.dump();
    }
    page.Paragraph(fmt::format("Verdict over {} trials: {} ({}){}.", n, v.value("pass", false) ? "PASS" : "FAIL",
                               v.value("rule", std::string()), failed.empty() ? "" : "; failed: trial " + failed));
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : v.value("per_trial", nlohmann::json::array())) {
      if (!p.is_object()) continue;
      rows.push_back({p.value("trial", nlohmann::json()).dump(), p.value("pass", false) ? "PASS" : "FAIL",
                      Pct(p.value("slo_attainment", 0.0)), FormatNumber(p.value("goodput_rps", 0.0)),
                      FormatNumber(p.value("requests_per_s", 0.0)), FormatNumber(p.value("output_tokens_per_s", 0.0)),
                      p.value("partial", false) ? "partial" : ""});
    }
    page.Table({"trial", "result", "attainment", "goodput req/s", "requests/s", "output tok/s", ""}, rows, {2, 3, 4, 5});
  }
  page.Paragraph(fmt::format("Across {} trials: mean [95% confidence interval: Student t, cut to the metric's possible "
                             "range (* = cut); n/a below 3 trials]. The charts show trial 1.", n));
  const nlohmann::json& d = t["distributions"];
  std::vector<std::vector<std::string>> rows;
  for (const char* key : {"ttft_incl_queue_ms", "ttft_ms", "itl_ms", "tpot_ms", "e2e_incl_queue_ms", "e2e_ms"}) {
    if (!d.contains(key) || !d[key].is_object()) continue;
    const nlohmann::json& k = d[key];
    rows.push_back({key, MeanCi(k.value("p50", nlohmann::json())), MeanCi(k.value("p95", nlohmann::json())),
                    MeanCi(k.value("p99", nlohmann::json())), MeanCi(k.value("mean", nlohmann::json()))});
  }
  if (t.contains("scalars") && t["scalars"].is_object()) {
    for (const char* key : {"output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment"}) {
      if (t["scalars"].contains(key)) rows.push_back({key, "", "", "", MeanCi(t["scalars"][key])});
    }
  }
  page.Table({"across trials", "p50", "p95", "p99", "mean / value"}, rows, {1, 2, 3, 4});
}

// A latency KPI: "P99" of `d` with its P50 below, or "n/a" and why; a few-samples note.
Kpi LatencyKpi(const metrics::Summary& s, const std::string& label, const char* key, const stats::SampleStats& d,
               const std::string& p50_label, const stats::SampleStats& p50_of) {
  if (d.count == 0) return {label, "n/a", metrics::EmptyDistributionReason(s, key)};
  std::string detail = p50_label + " " + Ms(p50_of, p50_of.p50) + " ms";
  if (std::string few = metrics::FewSamplesNote(d.count, 99); !few.empty()) detail += " · " + few;
  return {label, Ms(d, d.p99) + " ms", detail};
}

std::string RateKpi(const metrics::Summary& s, double v, const char* unit, bool offered = false) {
  const std::string why = offered ? metrics::OfferedUnavailable(s) : metrics::RatesUnavailable(s);
  return why.empty() ? FormatNumber(v) + " " + unit : "n/a (" + why + ")";
}

// Percentile objectives (each on its percentile) and the per-request thresholds that
// goodput and attainment count, as two tables: the two notions never share a row.
void AddSloTables(HtmlPage& page, const metrics::Summary& s) {
  std::vector<std::vector<std::string>> rows;
  for (const metrics::SloResult& slo : s.slo) {
    const bool na = slo.samples == 0;
    rows.push_back({std::string(slo.pass ? "" : "!") + slo.metric, slo.measured_as, fmt::format("p{:g}", slo.percentile),
                    fmt::format("{:g}", slo.threshold_ms), na ? "n/a" : FormatNumber(slo.value_ms),
                    slo.pass ? "PASS" : "FAIL",
                    na ? metrics::EmptyDistributionReason(s, slo.measured_as)
                       : metrics::FewSamplesNote(slo.samples, slo.percentile)});
  }
  if (s.min_output_tokens_per_s) {
    bool pass = s.output_tokens_per_s >= *s.min_output_tokens_per_s;
    rows.push_back({std::string(pass ? "" : "!") + "min output tok/s", "output_tokens_per_s", "-",
                    FormatNumber(*s.min_output_tokens_per_s), RateKpi(s, s.output_tokens_per_s, "tok/s"),
                    pass ? "PASS" : "FAIL", ""});
  }
  if (!rows.empty()) {
    page.Paragraph("Objectives, each judged on the run's percentile (the pooled in-window distribution):");
    page.Table({"objective", "measured as", "percentile", "threshold (ms)", "measured (ms)", "verdict", "note"}, rows,
               {3, 4});
  }
  std::vector<card::RequestThreshold> bars;
  std::vector<std::vector<std::string>> trows;
  for (const metrics::ThresholdResult& t : s.goodput_thresholds) {
    bars.push_back(t.threshold);
    const double met = t.requests_checked > 0
                           ? static_cast<double>(t.requests_met) / static_cast<double>(t.requests_checked)
                           : 0;
    trows.push_back({card::MetricShortName(t.threshold.metric), fmt::format("{:g}", t.threshold.threshold_ms),
                     t.threshold.origin, t.requests_checked > 0 ? Pct(met) : "n/a"});
  }
  page.Paragraph(fmt::format("Goodput and attainment count requests meeting every per-request threshold: {}. "
                             "Attainment {} of in-window requests (target {}).",
                             card::DescribeGoodputThresholds(bars),
                             s.counts.in_window > 0 ? Pct(s.slo_attainment) : "n/a", Pct(s.slo_attainment_target)));
  if (!trows.empty()) page.Table({"per-request threshold", "ms", "from", "requests meeting it"}, trows, {1, 3});
}

void AddHeadline(HtmlPage& page, const RunData& run, const RunSectionOptions& o) {
  page.BeginSection(o.id_prefix + "-summary", o.heading_prefix + "Summary");
  if (!run.summary) {
    page.Paragraph(fmt::format("No summary.json: {} records read, run-level figures not available.", run.rows.size()));
    page.EndSection();
    return;
  }
  const metrics::Summary& s = *run.summary;
  bool open = s.open_loop;
  const stats::SampleStats& ttft = open ? s.ttft_incl_queue_ms : s.ttft_ms;
  const stats::SampleStats& e2e = open ? s.e2e_incl_queue_ms : s.e2e_ms;
  int64_t in_window = s.counts.in_window;
  double ok_share = in_window > 0 ? static_cast<double>(s.counts.succeeded) / static_cast<double>(in_window) : 0;
  std::vector<Kpi> k;
  k.push_back({"requests in window", fmt::format("{}", in_window),
               fmt::format("{} records, {} failed{}", s.counts.records, s.counts.failed,
                           s.counts.interrupted > 0
                               ? fmt::format(", {} cancelled by interrupt (not counted)", s.counts.interrupted)
                               : "")});
  k.push_back({"success", in_window > 0 ? Pct(ok_share) : "n/a", in_window > 0 ? "" : "no requests in the window",
               s.counts.failed > 0 ? Kpi::kBad : Kpi::kNeutral});
  k.push_back(LatencyKpi(s, open ? "TTFT P99 (incl. queue)" : "TTFT P99", open ? "ttft_incl_queue_ms" : "ttft_ms", ttft,
                         "P50", ttft));
  if (s.counts.with_reasoning > 0) {  // a reasoning model: the first answer token, and the reasoning
    const stats::SampleStats& vis = open ? s.ttft_visible_incl_queue_ms : s.ttft_visible_ms;
    k.push_back(LatencyKpi(s, open ? "TTFT visible P99 (incl. queue)" : "TTFT visible P99",
                           open ? "ttft_visible_incl_queue_ms" : "ttft_visible_ms", vis, "P50", vis));
    k.push_back({"reasoning tokens / request", FormatNumber(s.reasoning_tokens.p50) + " P50",
                 fmt::format("P99 {} · {} of {} requests · {} of output · visible {}", FormatNumber(s.reasoning_tokens.p99),
                             s.counts.with_reasoning, s.counts.succeeded, Pct(s.reasoning_share),
                             RateKpi(s, s.visible_output_tokens_per_s, "tok/s"))});
  }
  k.push_back(LatencyKpi(s, "ITL P99", "itl_ms", s.itl_ms, "TPOT P50", s.tpot_ms));
  k.push_back(LatencyKpi(s, open ? "E2E P99 (incl. queue)" : "E2E P99", open ? "e2e_incl_queue_ms" : "e2e_ms", e2e,
                         "P50", e2e));
  k.push_back({"output throughput", RateKpi(s, s.output_tokens_per_s, "tok/s"), "system-wide, in the window"});
  k.push_back({"request throughput", RateKpi(s, s.requests_per_s, "req/s"),
               "offered " + RateKpi(s, s.offered_rps, "req/s", true)});
  k.push_back({"goodput", RateKpi(s, s.goodput_rps, "req/s"), "succeeded, met every per-request threshold"});
  if (!s.slo.empty() || !s.goodput_thresholds.empty() || s.min_output_tokens_per_s) {
    k.push_back({"SLO attainment", in_window > 0 ? Pct(s.slo_attainment) : "n/a", "target " + Pct(s.slo_attainment_target),
                 s.slo_attainment_pass ? Kpi::kGood : Kpi::kBad});
    const nlohmann::json& tv = run.trials.is_object() ? run.trials.value("verdict", nlohmann::json()) : nlohmann::json();
    if (tv.is_object()) {
      // Repeated trials: the run's verdict is over every trial; the figures above are trial 1's.
      const bool pass = tv.value("pass", false);
      k.push_back({fmt::format("verdict over {} trials", run.trials.value("trials", 0)), pass ? "PASS" : "FAIL",
                   tv.value("rule", std::string()), pass ? Kpi::kGood : Kpi::kBad});
    } else {
      k.push_back({"SLO verdict", s.slo_pass ? "PASS" : "FAIL", "every objective, attainment and floor",
                   s.slo_pass ? Kpi::kGood : Kpi::kBad});
    }
  }
  page.Kpis(k);
  if (s.partial) page.Notice("This run is partial (interrupted or the target went away): the figures cover what finished.");
  if (s.schedule_lag_flagged) {
    // A hint over the whole window; the verdict on the client is the run's saturation note.
    page.Notice(fmt::format("Schedule lag P99 {} ms > 1 ms over the window: requests left the client late.",
                            Ms(s.schedule_lag_ms, s.schedule_lag_ms.p99)));
  }
  if (s.percentile_method != "exact") {
    page.Notice(fmt::format("Percentiles from histograms (relative error ≤ {:.2g}%).", s.histogram_relative_error * 100), false);
  }
  if (std::string few = metrics::FewSamplesNote(ttft.count, 99); !few.empty()) {
    page.Notice(fmt::format("TTFT {}: a window this short cannot support a P99 (it needs at least {} samples); "
                            "treat tail figures as indicative.",
                            few, metrics::MinSamplesFor(99)));
  }
  if (!s.slo.empty() || !s.goodput_thresholds.empty() || s.min_output_tokens_per_s) AddSloTables(page, s);
  AddTrials(page, run);
  page.EndSection();
}

void AddErrors(HtmlPage& page, const RunData& run, const RunSectionOptions& o, int& charts) {
  std::string chart = ErrorChart(run, {.id_prefix = o.id_prefix});
  page.BeginSection(o.id_prefix + "-errors", o.heading_prefix + "Errors");
  if (chart.empty()) {
    page.Paragraph("No errors.");
    page.EndSection();
    return;
  }
  page.BeginGrid();
  page.AddSvg(chart);
  ++charts;
  page.EndGrid();
  // Top messages (user data: escaped by the table).
  std::map<std::tuple<std::string, int, std::string>, int64_t> by_msg;
  for (const RequestRow& r : run.rows) {
    if (r.record.ok() || r.record.error == metrics::ErrorClass::kInterrupted) continue;
    std::string msg = r.record.error_message.substr(0, 300);
    by_msg[{std::string(metrics::ErrorClassName(r.record.error)), r.record.http_status, msg}]++;
  }
  std::vector<std::pair<int64_t, std::vector<std::string>>> sorted;
  for (const auto& [key, n] : by_msg) {
    const auto& [cls, status, msg] = key;
    sorted.push_back({n, {cls, status ? std::to_string(status) : "-", msg, std::to_string(n)}});
  }
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < sorted.size() && i < 15; ++i) rows.push_back(sorted[i].second);
  if (!rows.empty()) page.Table({"class", "HTTP", "message", "requests (all records)"}, rows, {1, 3});
  page.EndSection();
}

}  // namespace

std::string Ms(const stats::SampleStats& s, double v) { return s.count > 0 ? FormatNumber(v) : "n/a"; }

std::vector<std::pair<std::string, std::string>> FlattenManifest(const nlohmann::json& manifest) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!manifest.is_null()) Flatten(manifest, "", out);
  return out;
}

std::string CardNameOf(const nlohmann::json& m) {
  if (!m.is_object()) return "";
  for (const char* key : {"card_name", "name"}) {
    if (m.contains(key) && m[key].is_string()) return m[key].get<std::string>();
  }
  if (m.contains("card") && m["card"].is_object()) {
    const auto& c = m["card"];
    if (c.contains("name") && c["name"].is_string()) return c["name"].get<std::string>();
  }
  return "";
}

void AddDefinitionsSection(HtmlPage& page) {
  page.BeginSection("definitions", "Metric definitions",
                    "What each number measures, from which timestamp to which (docs/metrics.md), and the names other "
                    "tools use for the same quantity: compare like with like.");
  page.Pre(metrics::MetricBoundariesText());
  std::vector<std::vector<std::string>> rows;
  for (const metrics::AliasRow& a : metrics::ToolAliases()) {
    rows.push_back({a.infereng, a.vllm, a.sglang, a.aiperf, a.guidellm, a.llmperf});
  }
  page.Table({"infereng", "vLLM bench", "SGLang bench", "AIPerf / GenAI-Perf", "GuideLLM", "LLMPerf"}, rows);
  page.EndSection();
}

int AddRunSections(HtmlPage& page, const RunData& run, const RunSectionOptions& o) {
  int charts = 0;
  AddHeadline(page, run, o);
  RunChartOptions co{.id_prefix = o.id_prefix, .predicted = o.predicted, .waterfall_rows = o.waterfall_rows};

  charts += AddQualitySection(page, run, o.id_prefix, o.heading_prefix);
  AddSessionSection(page, run, o.id_prefix, o.heading_prefix);
  AddEmbeddingsSection(page, run, o.id_prefix, o.heading_prefix);
  AddVisionSection(page, run, o.id_prefix, o.heading_prefix);
  AddAudioSection(page, run, o.id_prefix, o.heading_prefix);

  page.BeginSection(o.id_prefix + "-latency", o.heading_prefix + "Latency distributions",
                    "Cumulative distributions of successful requests in the measurement window (the population of the summary's percentiles); dashed red lines are the card's SLO thresholds "
                    "(vertical) and percentile levels (horizontal). The curve must cross the level left of the threshold.");
  if (run.rows.empty()) page.Paragraph("No per-request records: nothing to plot.");
  page.BeginGrid();
  for (const std::string& svg : LatencyCdfCharts(run, co)) {
    page.AddSvg(svg);
    ++charts;
  }
  page.EndGrid();
  page.EndSection();

  page.BeginSection(o.id_prefix + "-time", o.heading_prefix + "Over time",
                    "Latency and load through the run; grey lines mark the measurement window (warm-up before it).");
  page.BeginGrid();
  for (const std::string& svg : OverTimeCharts(run, co)) {
    page.AddSvg(svg);
    ++charts;
  }
  page.EndGrid();
  page.EndSection();

  page.BeginSection(o.id_prefix + "-waterfall", o.heading_prefix + "Requests",
                    "Where each request's time went. Hover a row for its details.");
  page.AddSvg(WaterfallChart(run, co));
  ++charts;
  if (std::string split = TtftSplitChart(run, co); !split.empty()) {
    page.AddSvg(split);
    ++charts;
  }
  page.EndSection();

  AddErrors(page, run, o, charts);

  if (run.summary) {
    page.BeginSection(o.id_prefix + "-table", o.heading_prefix + "Full summary");
    page.Pre(metrics::FormatSummaryTable(*run.summary, {.show_boundaries = false, .show_timeseries = false, .color = false}));
    page.EndSection();
  }
  if (o.definitions) AddDefinitionsSection(page);
  if (o.manifest) {
    page.BeginSection(o.id_prefix + "-manifest", o.heading_prefix + "Manifest",
                      "What was run, against what, with which versions: enough to reproduce it or distrust it.");
    auto rows = FlattenManifest(run.manifest);
    if (rows.empty()) {
      page.Paragraph("No manifest.json.");
    } else {
      std::vector<std::vector<std::string>> table;
      for (auto& [k, v] : rows) table.push_back({k, v});
      page.Table({"field", "value"}, table);
    }
    page.EndSection();
  }
  return charts;
}

}  // namespace infereng::report
