#include "twin/cost_model.h"

namespace infereng::twin {

double CostModel::DraftStepSeconds(int32_t decode_seqs, int64_t decode_context) const {
  StepShape s;
  s.decode_seqs = decode_seqs;
  s.decode_context = decode_context;
  return 0.1 * StepSeconds(s);
}

double LinearCostModel::StepSeconds(const StepShape& s) const {
  if (s.Empty()) return 0;
  const double new_tokens = static_cast<double>(s.TotalTokens());
  return o_.fixed_s + o_.per_token_s * new_tokens +
         o_.per_prefill_token_s * static_cast<double>(s.prefill_tokens) +
         o_.per_decode_seq_s * s.decode_seqs +
         o_.per_context_token_s * static_cast<double>(s.prefill_context + s.decode_context) +
         o_.per_encoder_gflop_s * s.encoder_flops * 1e-9;
}

double LinearCostModel::DraftStepSeconds(int32_t decode_seqs, int64_t decode_context) const {
  if (decode_seqs == 0) return 0;
  StepShape s;
  s.decode_seqs = decode_seqs;
  s.decode_context = decode_context;
  return o_.draft_fraction * StepSeconds(s);
}

}  // namespace infereng::twin
