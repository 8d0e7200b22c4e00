// Roofline summary of a deployment: the headline numbers `infereng fit` prints.
//
// All derived from RooflineStepCost, so the CLI and the twin agree by construction.
#pragma once

#include <cstdint>

#include "fit/step_cost.h"

namespace infereng::fit {

struct RooflineSummary {
  StepCost decode;             // one decode step of `batch` sequences at `context`
  StepCost decode_batch1;      // one decode step of a single sequence at `context`
  StepCost prefill;            // prefill of `context` tokens (one sequence, no cache)
  double ridge_flop_per_byte = 0;  // accelerator: peak FLOP/s / BW (datasheet)
  int64_t compute_bound_batch = 0; // smallest batch at which decode turns compute-bound
                                   // (at `context`); 0 = never up to 1M
  double output_tokens_per_s = 0;  // batch / decode step at `batch`
  double peak_output_tokens_per_s = 0;  // best over batches up to `max_batch`
  int64_t peak_batch = 0;
};

// `max_batch` bounds the search for peak throughput (e.g. the KV-limited concurrency).
RooflineSummary Summarise(const RooflineStepCost& cost, int batch, int64_t context,
                          int64_t max_batch);

}  // namespace infereng::fit
