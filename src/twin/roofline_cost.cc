#include "twin/roofline_cost.h"

namespace infereng::twin {

double RooflineCostModel::StepSeconds(const StepShape& s) const {
  if (s.kv_occupied_tokens <= 0) return cost_.Seconds(s);
  // A unified KV cache (llama.cpp): every new token of the step attends over every occupied
  // cell, masked ones included, not only its own sequence's; one pass over the cache serves
  // the whole batch. So the step reads the occupancy once (as context) and its attention
  // pairs are new tokens x occupied cells (priced at the prefill pair's FLOPs, the decode
  // pair's for every model but MLA).
  StepShape u = s;
  u.decode_context = 0;
  u.prefill_context = s.kv_occupied_tokens;
  u.prefill_attn_pairs = static_cast<double>(s.TotalTokens()) * static_cast<double>(s.kv_occupied_tokens);
  u.kv_occupied_tokens = 0;
  return cost_.Seconds(u);
}

}  // namespace infereng::twin
