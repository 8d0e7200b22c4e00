#include "twin/roofline_cost.h"

namespace infereng::twin {

double RooflineCostModel::StepSeconds(const StepShape& s) const {
  if (s.kv_occupied_tokens <= 0) return cost_.Seconds(s);
  // A unified KV cache (llama.cpp): every new token of the step attends over every occupied
  // cell, masked ones included, not only its own sequence's. The roofline prices that as
  // each decoding sequence reading the whole occupancy and each prompt token pairing with
  // every cell (so the KV read is counted per decoding sequence: an upper bound where one
  // pass over the cache serves the whole batch).
  StepShape u = s;
  const double occupied = static_cast<double>(s.kv_occupied_tokens);
  u.decode_context = int64_t{s.decode_seqs} * s.kv_occupied_tokens;
  u.prefill_attn_pairs = static_cast<double>(s.prefill_tokens) * occupied;
  u.kv_occupied_tokens = 0;
  return cost_.Seconds(u);
}

}  // namespace infereng::twin
