// StepShape: one engine iteration of one replica (all TP ranks together), as the twin's
// engine describes it and every step-cost model (the roofline in step_cost.h, the twin's
// CostModel implementations) reads it. One type for both, so nothing copies it field by
// field.
#pragma once

#include <cstdint>

namespace infereng::fit {

struct StepShape {
  int32_t prefill_seqs = 0;      // sequences with a prompt chunk in this step
  int64_t prefill_tokens = 0;    // new prompt tokens computed (sum of chunk sizes n)
  int64_t prefill_context = 0;   // tokens already cached before the chunks (sum of c)
  // Sum over chunks of n * (c + n/2): the causal (query, key) pairs the chunks attend.
  // < 0: estimated from the sums above as if all chunks had the mean n and c.
  double prefill_attn_pairs = -1;
  int32_t decode_seqs = 0;       // sequences producing tokens
  int32_t decode_tokens_per_seq = 1;  // 1 + speculative tokens verified per sequence
  int64_t decode_context = 0;    // sum of the decoding sequences' context lengths
  // KV cells the step's attention runs over in the whole cache, for engines whose attention
  // spans every slot's cells, busy or idle, not only the batch's own (llama.cpp's unified KV
  // cache: kv_self.n, up to the highest used cell, holes included; llamacpp_kv.h). 0: not
  // reported; attention reads only the batch's own context (the paged engine).
  int64_t kv_occupied_tokens = 0;
  // Vision encoder FLOPs run in this step (the images of the requests whose prefill chunk
  // first reaches their image tokens; card/vision.h EncoderFlops). Priced at the step's
  // FLOP rate; 0 for text-only steps.
  double encoder_flops = 0;

  int64_t TotalTokens() const { return prefill_tokens + int64_t{decode_seqs} * decode_tokens_per_seq; }
  bool Empty() const { return prefill_tokens == 0 && decode_seqs == 0; }
};

}  // namespace infereng::fit
