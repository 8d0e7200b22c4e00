// `infereng plan CARD [--run DIR]`: the seed's response format (../shared/docs/seed.ko.txt,
// "추론 작업을 위한 응답 형식") for one workload card, in five sections:
//  1. workload assumptions and missing measurements (card check's gaps, card/gaps.h);
//  2. goals (the card's objectives, budget, quality floor) and the baseline: measured from
//     DIR/summary.json with --run, else the twin's prediction for the card, saying which;
//  3. bottleneck hypotheses and how each is proven: diagnose's (job/diagnose.h) with --run,
//     else from the twin's prediction (job/plan_hypotheses.h);
//  4. ranked experiments from the playbook (job/plan_playbook.h), each changing one variable
//     and evaluated on the twin with its uncertainty (job/plan_experiment.h);
//  5. acceptance criteria as `compare --accept` expressions with numbers, and the rollout.
// Markdown, HTML and JSON renderings: job/plan_report.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "card/gaps.h"
#include "core/status.h"
#include "job/diagnose_evidence.h"
#include "job/plan_experiment.h"

namespace infereng::job {

// One goal of the card beside the baseline's figure.
struct PlanGoal {
  std::string category{};  // "tail latency", "throughput", "reliability", "quality", "cost"
  std::string what{};  // "TTFT P99", "goodput attainment", "cost per hour"
  double target = 0;
  std::string unit{};  // "ms", "%", "tok/s", "$"
  bool at_most = true;   // target is an upper bound
  std::optional<double> baseline{};  // absent: the baseline cannot say (named in `note`)
  std::optional<bool> pass{};
  std::string note{};  // where the baseline figure comes from, or why there is none
};

struct AcceptCriterion {
  std::string category{};  // "tail latency", "throughput", "reliability", "quality", "cost", "security"
  std::string text{};  // what it means, with the numbers
  std::string accept{};  // a `compare --accept` expression ("" when compare --card judges it, or by hand)
};

struct PlanOptions {
  std::string run_dir;          // --run: a measured baseline ("" = the twin's)
  double max_duration_s = 120;  // simulated window: the card's bench.duration, at most this
};

struct Plan {
  std::string card_name, card_path;
  // 1.
  std::vector<card::Gap> gaps;
  // 2.
  std::vector<PlanGoal> goals;
  std::string baseline_source;       // "measured" | "twin"
  std::string run_dir;
  Prediction baseline;               // the figures section 2 shows (measured or the twin's)
  Prediction twin_baseline;          // the twin's, always: experiments are compared with it
  std::string twin_description;      // model on hardware
  std::vector<std::string> twin_cost_caveats;  // the roofline's known limits here (twin/cost_caveats.h)
  std::string load_description;      // "open loop 20 rps (poisson)"
  double simulated_s = 0;            // each simulation's arrival window
  // 3.
  std::string hypotheses_source;     // "diagnose" | "twin"
  std::vector<ValidityCheck> validity;  // diagnose's, with --run
  bool client_shaped = false;
  std::vector<Hypothesis> hypotheses;
  // 4.
  TwinUncertainty uncertainty;
  std::vector<EvaluatedExperiment> experiments;  // ranked, best first
  // 5.
  std::string accepted_experiment;   // the top experiment's id ("" when none was evaluated)
  std::vector<AcceptCriterion> acceptance;
  std::string compare_command;
  std::vector<std::string> rollout;
  std::vector<std::string> notes;
};

// InvalidArgument / NotFound naming the path for a bad --run directory (no summary.json,
// a bad line); the card's own errors carry FILE:LINE (twin::ResolveTwin).
Result<Plan> BuildPlan(const card::WorkloadCard& card, const PlanOptions& options);

// Section 5 for `top` (the first ranked experiment with a prediction).
void BuildAcceptance(const card::WorkloadCard& card, const EvaluatedExperiment& top, Plan* plan);

}  // namespace infereng::job
