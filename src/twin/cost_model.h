// CostModel: the twin's seam for "how long does one engine iteration take".
//
// The engine describes each iteration as a StepShape (how many sequences prefill or
// decode, how many new tokens are computed, how much context their attention reads) and
// asks a CostModel for its duration. The roofline model built from fit/ (weights,
// FLOPs, bytes, TP all-reduce, MoE expert traffic, precision) is one implementation
// (twin/roofline_cost.h); a measured profile can be another; tests use LinearCostModel,
// whose numbers are easy to predict by hand.
//
// Thread-safety: implementations are immutable after construction; StepSeconds is const
// and may be called from any thread (several replicas share one model).
#pragma once

#include <cstdint>

#include "fit/step_shape.h"

namespace infereng::twin {

// One iteration of the engine (fit/step_shape.h: the one definition, shared with the
// roofline step cost).
using StepShape = fit::StepShape;

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Duration of one iteration of the target model, in seconds (> 0 for a non-empty step).
  virtual double StepSeconds(const StepShape& step) const = 0;
  // Duration of one draft-model step for speculative decoding over `decode_seqs` sequences
  // with `decode_context` context tokens. Default: a tenth of the target's decode step.
  virtual double DraftStepSeconds(int32_t decode_seqs, int64_t decode_context) const;
};

// t = fixed + per_token * (new tokens) + per_context_token * (context read) + per_seq * seqs.
// Deterministic and trivially predictable: for tests and for quick what-ifs.
struct LinearCostOptions {
  double fixed_s = 0.005;
  double per_token_s = 0.0;          // every new token (prefill or decode)
  double per_prefill_token_s = 50e-6;
  double per_decode_seq_s = 0.0;
  double per_context_token_s = 0.0;  // attention reads (prefill and decode)
  double draft_fraction = 0.1;       // draft step = this fraction of a 1-token decode step
  double per_encoder_gflop_s = 0.0;  // vision encoder: seconds per 1e9 encoder FLOPs in the step
};

class LinearCostModel final : public CostModel {
 public:
  explicit LinearCostModel(LinearCostOptions o = {}) : o_(o) {}
  double StepSeconds(const StepShape& s) const override;
  double DraftStepSeconds(int32_t decode_seqs, int64_t decode_context) const override;

 private:
  LinearCostOptions o_;
};

}  // namespace infereng::twin
