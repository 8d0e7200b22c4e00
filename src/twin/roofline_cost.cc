#include "twin/roofline_cost.h"

namespace infereng::twin {

double RooflineCostModel::StepSeconds(const StepShape& s) const {
  fit::StepShape f;
  f.prefill_seqs = s.prefill_seqs;
  f.prefill_tokens = s.prefill_tokens;
  f.prefill_context = s.prefill_context;
  f.prefill_attn_pairs = s.prefill_attn_pairs;
  f.decode_seqs = s.decode_seqs;
  f.decode_tokens_per_seq = s.decode_tokens_per_seq;
  f.decode_context = s.decode_context;
  return cost_.Seconds(f);
}

}  // namespace infereng::twin
