#include "job/plan_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace infereng::job {
namespace {

using nlohmann::json;

constexpr double kHeadroomFloor = 0.5;  // value / target below which headroom earns nothing

double Rel(double base, double exp) { return base != 0 ? exp / base - 1 : (exp != 0 ? 1 : 0); }

double RiskFactor(const std::string& risk) {
  if (risk == "high") return 0.5;
  if (risk == "medium") return 0.75;
  return 1.0;
}

// Successful requests under the SLO per dollar (per hour of the deployment), or goodput
// alone when a side has no price.
double GoodPerDollar(const Prediction& p, bool priced) {
  return priced ? p.goodput_rps / *p.cost_per_hour_usd : p.goodput_rps;
}

std::string SimulateCommand(const card::WorkloadCard& card, const Candidate& c, const twin::SimulationOptions& o) {
  std::string sets, edits;
  for (const PlanOverride& p : c.overrides) {
    const bool knob = p.key.starts_with("engine.") || p.key.starts_with("cluster.") || p.key.starts_with("cost.");
    if (knob) sets += " --set " + p.key + "=" + p.value;
    else edits += (edits.empty() ? "" : ", ") + p.key + ": " + p.value;
  }
  const std::string path = card.source_path.empty() ? "CARD" : card.source_path;
  std::string cmd = "infereng simulate --card " + (edits.empty() ? path : "CARD_B") +
                    fmt::format(" --duration {}s", o.duration_s.value_or(card.bench.duration_s)) + sets;
  if (!edits.empty()) cmd = "copy " + path + " to CARD_B with " + edits + "; " + cmd;
  return cmd;
}

}  // namespace

Prediction FiguresFromSummary(const metrics::Summary& s) {
  Prediction p;
  p.goodput_rps = s.goodput_rps;
  p.requests_per_s = s.requests_per_s;
  p.output_tokens_per_s = s.output_tokens_per_s;
  p.error_rate = s.counts.in_window > 0 ? static_cast<double>(s.counts.failed) / static_cast<double>(s.counts.in_window) : 0;
  p.slo_attainment = s.slo_attainment;
  p.slo_pass = s.slo_pass;
  p.ttft_p50_ms = s.ttft_ms.p50;
  p.ttft_p99_ms = s.ttft_ms.p99;
  p.itl_p50_ms = s.itl_ms.p50;
  p.itl_p99_ms = s.itl_ms.p99;
  p.e2e_p50_ms = s.e2e_ms.p50;
  p.e2e_p99_ms = s.e2e_ms.p99;
  p.requests = s.counts.in_window;
  for (const metrics::SloResult& o : s.slo) {
    if (o.threshold_ms <= 0 || o.samples == 0) continue;
    const double ratio = o.value_ms / o.threshold_ms;
    if (ratio > p.worst_slo_ratio) {
      p.worst_slo_ratio = ratio;
      std::string m = o.metric.ends_with("_ms") ? o.metric.substr(0, o.metric.size() - 3) : o.metric;
      p.worst_slo = fmt::format("{} p{:g}", m, o.percentile);
    }
  }
  return p;
}

Prediction PredictionFrom(const twin::SimulationResult& r) {
  const metrics::Summary& s = r.summary;
  const twin::TwinReport& t = r.twin;
  Prediction p = FiguresFromSummary(s);
  if (t.price_per_replica_hour > 0) {
    p.cost_per_hour_usd = t.cost_per_hour_usd;
    if (s.counts.output_tokens > 0) p.cost_per_1m_output_tokens_usd = t.cost_per_1m_output_tokens_usd;
    if (s.counts.succeeded > 0) p.cost_per_successful_request_usd = t.cost_per_successful_request_usd;
  }
  p.kv_usage_peak = t.kv_usage_peak;
  p.utilisation = t.utilisation_estimate;
  p.preemptions = t.preemptions;
  p.rejections = t.rejections;
  return p;
}

const std::vector<PredictedMetric>& PredictedMetrics() {
  static const std::vector<PredictedMetric> kMetrics = {
      {"goodput_rps", "goodput", "req/s", false, &Prediction::goodput_rps},
      {"ttft_ms.p50", "TTFT P50", "ms", true, &Prediction::ttft_p50_ms},
      {"ttft_ms.p99", "TTFT P99", "ms", true, &Prediction::ttft_p99_ms},
      {"itl_ms.p50", "ITL P50", "ms", true, &Prediction::itl_p50_ms},
      {"itl_ms.p99", "ITL P99", "ms", true, &Prediction::itl_p99_ms},
      {"e2e_ms.p50", "E2E P50", "ms", true, &Prediction::e2e_p50_ms},
      {"e2e_ms.p99", "E2E P99", "ms", true, &Prediction::e2e_p99_ms},
      {"output_tokens_per_s", "output throughput", "tok/s", false, &Prediction::output_tokens_per_s},
  };
  return kMetrics;
}

twin::SimulationOptions PlanSimulationOptions(const card::WorkloadCard& card, double max_duration_s) {
  twin::SimulationOptions o;
  const double card_s = card.bench.duration_s > 0 ? card.bench.duration_s : max_duration_s;
  o.duration_s = std::min(card_s, max_duration_s);
  return o;
}

Result<EvaluatedExperiment> EvaluateExperiment(const card::WorkloadCard& card, const Candidate& candidate,
                                               const twin::SimulationOptions& options, const catalog::Catalog& cat,
                                               const Prediction& base, const TwinUncertainty& u) {
  EvaluatedExperiment e;
  e.candidate = candidate;
  if (candidate.state != CandidateState::kEvaluate) return e;
  INFERENG_ASSIGN_OR_RETURN(OverriddenCard oc, ApplyOverrides(card, candidate.overrides));
  e.simulate_command = SimulateCommand(card, candidate, options);
  INFERENG_ASSIGN_OR_RETURN(twin::CandidateSetup cs, twin::ResolveCandidate(oc.card, oc.setup, cat));
  if (!cs.setup) {
    e.candidate.state = CandidateState::kSkipped;
    e.candidate.skip_reason = "the twin cannot host this change: " + cs.does_not_fit;
    return e;
  }
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult r, twin::RunSimulation(oc.card, *cs.setup, options));
  e.predicted = PredictionFrom(r);
  const Prediction& p = *e.predicted;

  const bool priced = base.cost_per_hour_usd && p.cost_per_hour_usd && *base.cost_per_hour_usd > 0 &&
                      *p.cost_per_hour_usd > 0;
  const double g1 = std::clamp(Rel(GoodPerDollar(base, priced), GoodPerDollar(p, priced)), -1.0, 2.0);
  // Headroom below half the target is worth nothing more: a 10-minute objective met in
  // 40 s does not make a faster configuration better.
  const double g2 = base.worst_slo_ratio > 0 && p.worst_slo_ratio > 0
                        ? std::clamp(std::max(base.worst_slo_ratio, kHeadroomFloor) /
                                             std::max(p.worst_slo_ratio, kHeadroomFloor) - 1,
                                     -1.0, 2.0)
                        : 0.0;
  e.gain = g1 + 0.5 * g2;
  e.score = e.gain > 0 ? e.gain * RiskFactor(candidate.risk) : e.gain;

  double best = -1e300;
  e.within_uncertainty = true;
  for (const PredictedMetric& m : PredictedMetrics()) {
    const double d = Rel(base.*m.value, p.*m.value);
    if (std::abs(d) > u.relative) e.within_uncertainty = false;
    const double improvement = m.lower_better ? -d : d;
    if (improvement > best) {
      best = improvement;
      e.headline = m.label;
      e.headline_key = m.accept_key;
      e.headline_change = d;
    }
  }
  if (priced && std::abs(Rel(*base.cost_per_hour_usd, *p.cost_per_hour_usd)) > u.relative) e.within_uncertainty = false;
  return e;
}

void RankExperiments(std::vector<EvaluatedExperiment>& v) {
  auto tier = [](const EvaluatedExperiment& e) {
    if (!e.predicted) return 2;
    return e.within_uncertainty ? 1 : 0;
  };
  std::stable_sort(v.begin(), v.end(), [&](const EvaluatedExperiment& a, const EvaluatedExperiment& b) {
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    if (!a.predicted) return false;
    return a.score > b.score;
  });
}

json PredictionToJson(const Prediction& p, const TwinUncertainty& u) {
  json j = json::object();
  json band = json::object();
  for (const PredictedMetric& m : PredictedMetrics()) {
    j[m.accept_key] = p.*m.value;
    band[m.accept_key] = {p.*m.value * (1 - u.relative), p.*m.value * (1 + u.relative)};
  }
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  j["cost_per_hour_usd"] = opt(p.cost_per_hour_usd);
  j["cost_per_1m_output_tokens_usd"] = opt(p.cost_per_1m_output_tokens_usd);
  j["cost_per_successful_request_usd"] = opt(p.cost_per_successful_request_usd);
  for (const char* k : {"cost_per_1m_output_tokens_usd", "cost_per_successful_request_usd"}) {
    band[k] = j[k].is_null() ? json(nullptr) : json::array({j[k].get<double>() * (1 - u.relative),
                                                             j[k].get<double>() * (1 + u.relative)});
  }
  j["requests_per_s"] = p.requests_per_s;
  j["error_rate"] = p.error_rate;
  j["slo_attainment"] = p.slo_attainment;
  j["slo_pass"] = p.slo_pass;
  j["kv_usage_peak"] = p.kv_usage_peak;
  j["utilisation"] = p.utilisation;
  j["preemptions"] = p.preemptions;
  j["rejections"] = p.rejections;
  j["requests"] = p.requests;
  j["worst_slo"] = p.worst_slo;
  j["worst_slo_ratio"] = p.worst_slo_ratio;
  j["band"] = band;
  j["uncertainty_relative"] = u.relative;
  return j;
}

json ExperimentToJson(const EvaluatedExperiment& e, const Prediction& base, const TwinUncertainty& u) {
  const Candidate& c = e.candidate;
  json overrides = json::array();
  for (const PlanOverride& o : c.overrides) overrides.push_back({{"key", o.key}, {"value", o.value}});
  json j = {{"id", c.id},
            {"family", c.family},
            {"title", c.title},
            {"variable", c.variable},
            {"status", CandidateStateName(c.state)},
            {"overrides", overrides},
            {"override_text", OverrideText(c.overrides)},
            {"risk", c.risk},
            {"risk_reason", c.risk_reason},
            {"quality_eval", c.quality_eval},
            {"watch", c.watch}};
  if (!c.skip_reason.empty()) j["skip_reason"] = c.skip_reason;
  if (e.predicted) {
    j["simulate_command"] = e.simulate_command;
    j["predicted"] = PredictionToJson(*e.predicted, u);
    json change = json::object();
    for (const PredictedMetric& m : PredictedMetrics()) change[m.accept_key] = Rel(base.*m.value, (*e.predicted).*m.value);
    if (base.cost_per_1m_output_tokens_usd && e.predicted->cost_per_1m_output_tokens_usd) {
      change["cost_per_1m_output_tokens_usd"] =
          Rel(*base.cost_per_1m_output_tokens_usd, *e.predicted->cost_per_1m_output_tokens_usd);
    }
    j["change"] = change;
    j["gain"] = e.gain;
    j["score"] = e.score;
    j["within_uncertainty"] = e.within_uncertainty;
    j["headline"] = {{"metric", e.headline}, {"key", e.headline_key}, {"change", e.headline_change}};
  }
  return j;
}

}  // namespace infereng::job
