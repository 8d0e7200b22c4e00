// TwinSetup: a workload card (+ `--set` overrides) resolved into what the twin runs:
// engine and cluster configs with the KV capacity filled in from the fit, the roofline
// cost model of the card's model on its accelerators, and the price of a replica.
//
// Order of precedence (later wins): defaults < card `engine:` map < `--set` < explicit
// options (replicas, accelerator/count/tp from `capacity`). Errors name the card field at
// its line, or the --set key ("chat.yaml:51: model.architecture: unknown model \"llama-9\"
// (known: ...)"; "card model.architecture: ..." for a card built from flags).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "card/card.h"
#include "catalog/catalog.h"
#include "core/status.h"
#include "fit/deployment.h"
#include "twin/cost_model.h"
#include "twin/engine_config.h"
#include "twin/front_end.h"

namespace infereng::twin {

struct SetupOptions {
  std::vector<std::string> sets;         // "engine.max_num_seqs=256", "cluster.router=..."
  std::optional<int> replicas;           // --replicas
  std::optional<std::string> accelerator;  // capacity search overrides of `deployment:`
  std::optional<int> count;
  std::optional<int> tp;
};

struct TwinSetup {
  TwinSettings settings;                     // engine.kv_cache_tokens and max_model_len resolved
  std::shared_ptr<const CostModel> cost;
  std::optional<fit::Deployment> deployment; // absent when built by hand (tests)
  double price_per_accelerator_hour = 0;     // USD
  int accelerators_per_replica = 1;
  int64_t kv_tokens_from_fit = 0;            // before any engine.kv_cache_tokens override
  double kv_bytes_per_token = 0;             // whole model, from the fit (0: unknown; a disaggregated
                                             // cluster needs it to price KV transfers)
  std::string description;                   // "llama-3.1-8b on 1x h100-sxm (tp 1, bf16)"
  std::vector<std::string> cost_caveats;     // where the roofline's defaults are off or unchecked
                                             // for this deployment (twin/cost_caveats.h); none
                                             // once a measured profile prices the steps
  FrontEnd front_end;                        // per request outside the engine (none: ManualTwin)
  std::optional<card::VisionSpec> vision;    // model.vision: serve counts image parts with it
  std::optional<card::AudioModelSpec> audio; // model.audio: serve counts a transcription's clip with it
  double transcript_tokens_per_s = 3.25;     // traffic.audio's: serve's transcript length per second

  double PricePerReplicaHour() const { return price_per_accelerator_hour * accelerators_per_replica; }
  // Prices steps with a measured cost model (a profile, a calibration) instead of the
  // roofline: the description says which ("..., LABEL") and the roofline's caveats go.
  void UseMeasuredCost(std::shared_ptr<const CostModel> measured, const std::string& label);
};

Result<TwinSetup> ResolveTwin(const card::WorkloadCard& card, const SetupOptions& options,
                              const catalog::Catalog& catalog);

// One candidate deployment of a search (capacity): a setup, or why this deployment cannot
// host the model (it cannot be split this way, or leaves no memory for the KV cache).
struct CandidateSetup {
  std::optional<TwinSetup> setup;
  std::string does_not_fit;  // set when `setup` is absent
};

// As ResolveTwin, but a failure that belongs to the deployment is a CandidateSetup with
// `does_not_fit`, not an error. Errors are the input's (unknown model, bad --set, bad
// precision): they would fail every candidate alike.
Result<CandidateSetup> ResolveCandidate(const card::WorkloadCard& card, const SetupOptions& options,
                                        const catalog::Catalog& catalog);

// A setup for tests and what-ifs without a catalog: the given cost model and settings
// (engine.kv_cache_tokens must be set), price per replica-hour as given.
TwinSetup ManualTwin(TwinSettings settings, std::shared_ptr<const CostModel> cost,
                     double price_per_replica_hour = 0);

}  // namespace infereng::twin
