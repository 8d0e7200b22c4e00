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
//    (disaggregated: the smaller of the two pools' capacities, UtilisationInputs);
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
  // A disaggregated cluster (both > 0): capacity is the smaller of the prefill pool's (one
  // prompt per step-time of a full prefill step) and the decode pool's (the last prompt
  // token, then the decode steps at the largest batch).
  int32_t prefill_replicas = 0;
  int32_t decode_replicas = 0;
};

// The busy time one request costs a replica of each disaggregated pool, at the largest
// decode batch the KV cache and max_num_seqs allow: a prefill replica's share of a full
// prefill step (as many mean prompts, after prefix hits, as the token budget holds), and a
// decode replica's (the last prompt token riding a decode step, then the output's steps).
// Their ratio is the rate-matched split of a cluster into pools (TensorRT-LLM's guidance).
struct PoolSeconds {
  double prefill_s = 0;
  double decode_s = 0;
};
PoolSeconds PoolSecondsPerRequest(const EngineConfig& engine, const CostModel& cost, double mean_input_tokens,
                                  double mean_output_tokens, double prefix_hit_rate);

// Fills utilisation_estimate, capacity_rps_estimate, queue_growing, near_saturation and
// saturation_note of `t` (reads t.over_time, t.prefix_hit_rate and t.incomplete).
void EstimateUtilisation(const EngineConfig& engine, const CostModel& cost, const UtilisationInputs& in,
                        TwinReport& t);

}  // namespace infereng::twin
