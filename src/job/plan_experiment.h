// One experiment of `plan`, evaluated on the twin: the card with the experiment's one
// change (job/plan_playbook.h) simulated with exactly the baseline's simulation options, its
// predicted figures (goodput, TTFT/ITL/E2E P50/P99, cost per 1M output tokens and per
// successful request) with the twin's uncertainty band, the change from the baseline's
// prediction, and the score it is ranked by.
//
// Ranking rule (docs/plan.md, "Ranking"): gain = the relative change in successful requests
// per dollar (goodput / cost per hour; goodput alone without a price) + half the relative
// change of the worst latency objective's headroom (baseline value/target over the
// experiment's, each taken as at least 0.5: headroom beyond half the target earns nothing); score = gain x the risk factor (low 1, medium 0.75, high 0.5). A change
// whose every predicted figure moves less than the uncertainty band is "within the twin's
// uncertainty" and ranks after every change that does not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "catalog/catalog.h"
#include "core/status.h"
#include "job/plan_playbook.h"
#include "twin/simulation.h"

namespace infereng::job {

// The twin's stated relative error: the band every predicted figure is quoted with.
struct TwinUncertainty {
  double relative = 0.194;
  std::string source =
      "docs/FIDELITY.md: the twin's median |error| against 30 published throughput measurements "
      "(catalog defaults); latency rows are not in that comparison yet, so treat it as a floor";
};

// What the twin predicts for one configuration (milliseconds, requests/s, USD).
struct Prediction {
  double goodput_rps = 0, requests_per_s = 0, output_tokens_per_s = 0;
  double error_rate = 0, slo_attainment = 0;
  bool slo_pass = false;
  double ttft_p50_ms = 0, ttft_p99_ms = 0, itl_p50_ms = 0, itl_p99_ms = 0, e2e_p50_ms = 0, e2e_p99_ms = 0;
  std::optional<double> cost_per_hour_usd, cost_per_1m_output_tokens_usd, cost_per_successful_request_usd;
  double kv_usage_peak = 0, utilisation = 0;
  int64_t preemptions = 0, rejections = 0, requests = 0;
  // The worst latency objective's value / target (0 when the card has none); > 1 misses.
  double worst_slo_ratio = 0;
  std::string worst_slo;  // "ttft p99"
};
// The twin's figures of a simulation; FiguresFromSummary: those a summary alone has (a
// measured baseline: no cost, KV or utilisation).
Prediction PredictionFrom(const twin::SimulationResult& r);
Prediction FiguresFromSummary(const metrics::Summary& s);

// One metric of a Prediction, named as `compare --accept` names it.
struct PredictedMetric {
  std::string accept_key;  // "ttft_ms.p99", "goodput_rps"; "" for cost (compare has no cost row)
  std::string label;       // "TTFT P99"
  std::string unit;        // "ms", "req/s", "$"
  bool lower_better = true;
  double Prediction::*value = nullptr;
};
const std::vector<PredictedMetric>& PredictedMetrics();

struct EvaluatedExperiment {
  Candidate candidate;
  std::optional<Prediction> predicted;   // when evaluated
  std::string simulate_command;          // how to reproduce the prediction
  std::string does_not_fit;              // the twin could not host this change (then skipped)
  double gain = 0, score = 0;
  bool within_uncertainty = true;        // no predicted figure moves beyond the band
  std::string headline;                  // the metric with the largest predicted improvement ("TTFT P99")
  std::string headline_key;              // its accept key
  double headline_change = 0;            // relative, experiment / baseline - 1
};

// The options the baseline and every experiment are simulated with (one place, so an
// experiment's figures equal `simulate` with the same override and these options).
twin::SimulationOptions PlanSimulationOptions(const card::WorkloadCard& card, double max_duration_s);

// Simulates `candidate` (state kEvaluate) and scores it against `baseline`. A change the
// deployment cannot host (the model no longer fits) comes back skipped with the reason.
Result<EvaluatedExperiment> EvaluateExperiment(const card::WorkloadCard& card, const Candidate& candidate,
                                               const twin::SimulationOptions& options, const catalog::Catalog& cat,
                                               const Prediction& baseline, const TwinUncertainty& u);

// Sorts best first: evaluated changes beyond the uncertainty by score, then those within it,
// then skipped and not-evaluated rows (in playbook order).
void RankExperiments(std::vector<EvaluatedExperiment>& experiments);

nlohmann::json PredictionToJson(const Prediction& p, const TwinUncertainty& u);
nlohmann::json ExperimentToJson(const EvaluatedExperiment& e, const Prediction& baseline, const TwinUncertainty& u);

}  // namespace infereng::job
