#include "job/fidelity.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace infereng::job {
namespace {

struct Stat {
  const char* metric;
  const char* label;
  metrics::SampleStats metrics::Summary::*field;
};

constexpr Stat kLatency[] = {
    {"ttft_ms", "TTFT", &metrics::Summary::ttft_ms},
    // Only when the measured run reasoned (else it equals TTFT): the twin plays the
    // reasoning with engine.reasoning_tokens.
    {"ttft_visible_ms", "TTFT visible", &metrics::Summary::ttft_visible_ms},
    {"tpot_ms", "TPOT", &metrics::Summary::tpot_ms},
    {"itl_ms", "ITL", &metrics::Summary::itl_ms},
    {"e2e_ms", "E2E", &metrics::Summary::e2e_ms},
};

struct Rate {
  const char* metric;
  double metrics::Summary::*field;
};

constexpr Rate kRates[] = {
    {"output_tokens_per_s", &metrics::Summary::output_tokens_per_s},
    {"goodput_rps", &metrics::Summary::goodput_rps},
};

FidelityRow Row(std::string metric, std::string stat, double measured, const std::vector<double>& predicted) {
  FidelityRow r;
  r.metric = std::move(metric);
  r.stat = std::move(stat);
  r.measured = measured;
  r.predicted = predicted.front();
  r.error = measured != 0 ? (r.predicted - measured) / measured : 0;
  const auto [lo, hi] = std::minmax_element(predicted.begin(), predicted.end());
  r.band_lo = *lo;
  r.band_hi = *hi;
  r.within_band = measured >= r.band_lo && measured <= r.band_hi;
  return r;
}

std::string Label(const FidelityRow& r) {
  for (const Stat& s : kLatency) {
    if (r.metric == s.metric) return std::string(s.label) + " " + (r.stat == "p50" ? "P50" : r.stat == "p90" ? "P90" : "P99");
  }
  return r.metric == "goodput_rps" ? "goodput" : "throughput";
}

}  // namespace

Fidelity CompareWithPrediction(const metrics::Summary& measured, const std::vector<metrics::Summary>& predicted,
                               bool near_saturation, const std::string& saturation_note) {
  Fidelity f;
  f.seeds = static_cast<int>(predicted.size());
  if (predicted.empty()) return f;
  for (const Stat& s : kLatency) {
    const metrics::SampleStats& m = measured.*s.field;
    if (m.empty()) continue;
    if (s.field == &metrics::Summary::ttft_visible_ms && measured.counts.with_reasoning == 0) continue;
    bool all = true;
    for (const metrics::Summary& p : predicted) all = all && !(p.*s.field).empty();
    if (!all) continue;
    for (const auto& [name, member] : {std::pair{"p50", &metrics::SampleStats::p50},
                                       std::pair{"p90", &metrics::SampleStats::p90},
                                       std::pair{"p99", &metrics::SampleStats::p99}}) {
      std::vector<double> pv;
      for (const metrics::Summary& p : predicted) pv.push_back((p.*s.field).*member);
      f.rows.push_back(Row(s.metric, name, m.*member, pv));
    }
  }
  for (const Rate& r : kRates) {
    if (!(measured.*r.field > 0)) continue;
    std::vector<double> pv;
    for (const metrics::Summary& p : predicted) pv.push_back(p.*r.field);
    f.rows.push_back(Row(r.metric, "value", measured.*r.field, pv));
  }
  std::vector<double> abs_err;
  for (const FidelityRow& r : f.rows) abs_err.push_back(std::abs(r.error));
  if (!abs_err.empty()) {
    std::sort(abs_err.begin(), abs_err.end());
    const size_t n = abs_err.size();
    f.median_abs_error = n % 2 ? abs_err[n / 2] : (abs_err[n / 2 - 1] + abs_err[n / 2]) / 2;
  }
  f.low_confidence = near_saturation;
  if (near_saturation) {
    f.note = "low confidence: " + (saturation_note.empty() ? std::string("the twin predicts this load near or past saturation")
                                                           : saturation_note);
  }
  return f;
}

nlohmann::json FidelityToJson(const Fidelity& f) {
  nlohmann::json rows = nlohmann::json::array();
  for (const FidelityRow& r : f.rows) {
    rows.push_back({{"metric", r.metric},
                    {"stat", r.stat},
                    {"measured", r.measured},
                    {"predicted", r.predicted},
                    {"error", r.error},
                    {"band", {r.band_lo, r.band_hi}},
                    {"within_band", r.within_band}});
  }
  return {{"rows", rows},
          {"seeds", f.seeds},
          {"median_abs_error", f.median_abs_error},
          {"low_confidence", f.low_confidence},
          {"note", f.note}};
}

std::string FidelityLine(const Fidelity& f) {
  if (f.rows.empty()) return "twin vs measured: nothing to compare (no successful requests on one side)";
  std::string s = "twin vs measured:";
  std::string last_metric;
  for (const FidelityRow& r : f.rows) {
    if (r.stat == "p90") continue;  // P50 and P99 on the line; P90 in the JSON
    const std::string label = Label(r);
    const bool same = r.metric == last_metric;
    s += same ? " " + label.substr(label.rfind(' ') + 1) : std::string(last_metric.empty() ? " " : ", ") + label;
    s += fmt::format(" {:+.0f}%{}", 100 * r.error, r.within_band ? "~" : "");
    last_metric = r.metric;
  }
  s += fmt::format(" (median |error| {:.1f}%; ~ = inside the twin's own spread over {} seeds)", 100 * f.median_abs_error,
                   f.seeds);
  if (f.low_confidence) s += "\n  " + f.note;
  return s;
}

}  // namespace infereng::job
