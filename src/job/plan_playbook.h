// The optimisation playbook of the seed (../shared/docs/seed.ko.txt, "최적화 플레이북":
// batching and scheduling, quantisation, speculative decoding, KV and prefix caching,
// parallelism and disaggregation) as data: one candidate experiment per row, each changing
// ONE variable of the card (a twin knob, the weights' or KV precision, TP, replicas or the
// accelerator), with its risk, the quality eval it requires and the engine signals to watch
// when it rolls out. A row the card makes inapplicable is kept, skipped with the reason; a
// technique the twin cannot model is kept as "not evaluated by the twin", without numbers.
//
// `plan` (job/plan.h) evaluates every applicable row on the twin (job/plan_experiment.h).
#pragma once

#include <string>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::job {

// One assignment of an experiment: a twin knob ("engine.max_num_seqs", "cluster.replicas",
// any `simulate --set` key) or a card field ("model.precision", "model.kv_precision",
// "deployment.accelerator", "deployment.tp", "deployment.count").
struct PlanOverride {
  std::string key;
  std::string value;
};

enum class CandidateState {
  kEvaluate,      // run on the twin
  kSkipped,       // the card makes it inapplicable (skip_reason)
  kNotEvaluated,  // the twin cannot model it (skip_reason)
};
const char* CandidateStateName(CandidateState s);  // "evaluated", "skipped", "not evaluated by the twin"

struct Candidate {
  std::string id{};  // "batching.max_num_seqs"
  std::string family{};  // "batching", "chunked_prefill", "quantisation", "speculative_decoding",
                         // "prefix_caching", "routing", "parallelism", "replicas", "hardware", "disaggregation"
  std::string title{};  // "max_num_seqs 256 -> 512"
  std::string variable{};  // the one variable it changes
  std::vector<PlanOverride> overrides{};  // one variable; TP changes tp and count together
  std::string risk{};  // "low" | "medium" | "high"
  std::string risk_reason{};
  std::string quality_eval{};  // what quality check it requires ("" when none)
  std::vector<std::string> watch{};  // canonical engine signals (client/engine_signals.h) to watch
  CandidateState state = CandidateState::kEvaluate;
  std::string skip_reason{};
};

// The rows for `card`, given the baseline's resolved setup and its twin run (the direction
// of a knob follows the baseline: fewer sequences when the cache preempts, more otherwise).
std::vector<Candidate> PlaybookCandidates(const card::WorkloadCard& card, const twin::TwinSetup& base,
                                          const twin::SimulationResult& baseline);

// The card and setup options an experiment runs with: `card` with its card-field overrides
// applied, and its twin knobs as `--set` assignments. A changed accelerator drops the card's
// price override (that price was for the old accelerator). InvalidArgument for an unknown key.
struct OverriddenCard {
  card::WorkloadCard card;
  twin::SetupOptions setup;
};
Result<OverriddenCard> ApplyOverrides(const card::WorkloadCard& card, const std::vector<PlanOverride>& overrides);

// How to reproduce it by hand: "--set engine.max_num_seqs=512" for knobs; "model.precision: fp8"
// (a card edit) for card fields.
std::string OverrideText(const std::vector<PlanOverride>& overrides);

}  // namespace infereng::job
