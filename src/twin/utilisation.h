// Utilisation: is the simulated system close to its capacity? A forecast from the cost
// model, reported as the twin's `near_saturation` warning: near capacity, small step-cost
// errors explode queueing (a 22% capacity error became a ~2000x TTFT error), so the twin
// says so. Not the sweep's "saturated" (sweep/saturation.h), which judges a point after
// the fact from its time series (completions falling behind sends). Two signals:
//  - a mean-field utilisation estimate: offered rate / capacity, where a replica's
//    capacity is 1 / (prefill time of a mean prompt (after prefix hits) + (mean output - 1)
//    x decode step time at the largest batch the KV cache and max_num_seqs allow / that
//    batch), speculative decoding included;
//  - the queue still growing when arrivals stop (mean waiting over the last quarter of the
//    arrival period well above the first half), or requests left unfinished.
// near_saturation = utilisation >= 0.9 or either of those.
#pragma once

#include "twin/cost_model.h"
#include "twin/engine_config.h"
#include "twin/simulation.h"

namespace infereng::twin {

struct UtilisationInputs {
  double mean_input_tokens = 0;
  double mean_output_tokens = 0;
  double serving_replicas_mean = 1;  // time-averaged serving replicas
  double arrival_s = 0;              // time of the last arrival
  double offered_rps = 0;
};

// Fills utilisation_estimate, capacity_rps_estimate, queue_growing, near_saturation and
// saturation_note of `t` (reads t.over_time, t.prefix_hit_rate and t.incomplete).
void EstimateUtilisation(const EngineConfig& engine, const CostModel& cost, const UtilisationInputs& in,
                        TwinReport& t);

}  // namespace infereng::twin
