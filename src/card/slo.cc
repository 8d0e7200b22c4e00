// Per-request thresholds for goodput and attainment, and the ambiguity warnings of
// `card check` (the rules are stated in card/slo.h and docs/metrics.md).
#include "card/slo.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace infereng::card {
namespace {

// "slo.ttft (chat.yaml:12)" when the card says where the field is; else the path alone.
std::string Where(const WorkloadCard& card, const std::string& path) {
  auto it = card.fields.find(path);
  if (it == card.fields.end() || card.source_path.empty()) return path;
  return fmt::format("{} ({}:{})", path, card.source_path, it->second.line);
}

// Where the card wrote a metric's objective: "slo.ttft" or "slo.ttft_ms".
std::string ObjectivePath(const WorkloadCard& card, const std::string& metric) {
  const std::string short_path = "slo." + MetricShortName(metric);
  return card.Has(short_path) ? short_path : "slo." + metric;
}

}  // namespace

std::string MetricShortName(const std::string& metric) {
  return metric.size() > 3 && metric.ends_with("_ms") ? metric.substr(0, metric.size() - 3) : metric;
}

std::vector<RequestThreshold> GoodputThresholds(const SloSpec& slo) {
  if (!slo.goodput.empty()) return slo.goodput;
  std::vector<RequestThreshold> out;
  for (const SloTarget& t : slo.latency) {
    auto it = std::find_if(out.begin(), out.end(), [&](const RequestThreshold& r) { return r.metric == t.metric; });
    RequestThreshold r{t.metric, t.threshold_ms, t.percentile,
                       fmt::format("{} p{:g}", MetricShortName(t.metric), t.percentile)};
    if (it == out.end()) {
      out.push_back(std::move(r));
    } else if (t.percentile > it->percentile) {
      *it = std::move(r);  // the highest percentile stated is the loosest bar
    }
  }
  return out;
}

std::string DescribeGoodputThresholds(const std::vector<RequestThreshold>& thresholds) {
  if (thresholds.empty()) return "none (no latency objectives: every successful request counts)";
  std::string bars, origins;
  bool from_card = false;
  for (const RequestThreshold& t : thresholds) {
    bars += fmt::format("{}{} <= {:g} ms", bars.empty() ? "" : ", ", MetricShortName(t.metric), t.threshold_ms);
    if (t.metric == "itl_ms") bars += fmt::format(" (own p{:g} ITL)", t.percentile);
    if (t.origin == "slo.goodput") {
      from_card = true;
    } else {
      origins += (origins.empty() ? "" : ", ") + t.origin;
    }
  }
  return from_card ? bars + " (slo.goodput)"
                   : bars + " (default: the card's highest-percentile objectives: " + origins + ")";
}

std::vector<std::string> SloAmbiguities(const WorkloadCard& card) {
  std::vector<std::string> out;
  const SloSpec& s = card.slo;
  const double attain_pct = s.attainment * 100;
  const std::vector<RequestThreshold> bars = GoodputThresholds(s);
  if (s.goodput.empty()) {
    for (const RequestThreshold& b : bars) {
      // Defaulted from an objective below the attainment percentile: "p50 <= 200 ms" would
      // become "99% of requests <= 200 ms".
      if (b.percentile + 1e-9 >= attain_pct) continue;
      out.push_back(fmt::format(
          "{}: the only {} objective is p{:g} <= {:g} ms, so goodput's per-request threshold defaults to {:g} ms and "
          "attainment {:g} asks {:g}% of requests to meet it (a p{:g} bar, not a p{:g} one); state the per-request "
          "threshold as slo.goodput.{}",
          Where(card, ObjectivePath(card, b.metric)), MetricShortName(b.metric), b.percentile, b.threshold_ms,
          b.threshold_ms, s.attainment, attain_pct, attain_pct, b.percentile, MetricShortName(b.metric)));
    }
    return out;
  }
  std::set<std::string> reported;
  for (const SloTarget& t : s.latency) {
    if (reported.count(t.metric)) continue;
    auto it = std::find_if(bars.begin(), bars.end(), [&](const RequestThreshold& r) { return r.metric == t.metric; });
    const std::string name = MetricShortName(t.metric);
    if (it == bars.end()) {
      out.push_back(fmt::format("{}: slo.goodput has no {} threshold, so the {} p{:g} objective is judged on the "
                                "percentile only and never counts against goodput or attainment",
                                Where(card, "slo.goodput"), name, name, t.percentile));
      reported.insert(t.metric);
    } else if (it->threshold_ms < t.threshold_ms && t.percentile <= attain_pct + 1e-9) {
      out.push_back(fmt::format("{}: slo.goodput.{} {:g} ms with attainment {:g} asks {:g}% of requests to be under "
                                "{:g} ms, stricter than the p{:g} objective {:g} ms: that objective can never bind",
                                Where(card, "slo.goodput." + name), name, it->threshold_ms, s.attainment, attain_pct,
                                it->threshold_ms, t.percentile, t.threshold_ms));
      reported.insert(t.metric);
    }
  }
  return out;
}

}  // namespace infereng::card
