// RooflineStepCost: duration of one engine iteration from the roofline, for the twin.
//
//   t = max(FLOPs / (eff.flops * peak), bytes / (eff.bandwidth * BW)) + comm + fixed
//
// FLOPs: 2 * active non-embedding params per new token, the LM head for the tokens that
// are sampled, attention 4 * H * d_head per (query, key) pair (MLA: its absorbed decode /
// expanded prefill forms). Bytes, per GPU: dense weights once per step; MoE routed experts
// actually touched (E * (1 - (1 - k/E)^T) distinct experts per layer for T tokens under
// uniform routing); KV read for every context token and written for every new token;
// activations. comm: 2 TP all-reduces per layer, each a call's launch plus its hops of
// latency (fit/collective.h: ring 2(TP-1) within a node) plus 2(TP-1)/TP * bytes / link,
// and, with ep > 1, an all-to-all dispatch + combine per MoE layer (a hop each). fixed: eff.step_overhead_s + layers x eff.layer_overhead_s.
//
// Cost() is the twin's hot path (millions of calls): it allocates nothing and does a
// fixed handful of arithmetic; everything per-deployment is precomputed in the constructor.
// Thread-safety: immutable after construction; Cost() is const and thread-safe.
#pragma once

#include <cstdint>

#include "fit/deployment.h"
#include "fit/step_shape.h"

namespace infereng::fit {

struct StepCost {
  double flops = 0;      // per replica
  double bytes = 0;      // per GPU (what bounds the step)
  double compute_s = 0;
  double memory_s = 0;
  double comm_s = 0;
  double fixed_s = 0;
  double total_s = 0;    // max(compute_s, memory_s) + comm_s + fixed_s (0 for an empty step)
  bool memory_bound() const { return memory_s >= compute_s; }
};

class RooflineStepCost {
 public:
  // `d` must pass Validate(); precision/ops fall back as AcceleratorSpec::PeakFlops says.
  explicit RooflineStepCost(const Deployment& d);

  StepCost Cost(const StepShape& s) const;
  double Seconds(const StepShape& s) const { return Cost(s).total_s; }

  // Convenience shapes: a pure decode step of `batch` sequences at `context` tokens
  // each, and a single prefill of `tokens` new tokens on `cached` cached ones.
  StepCost Decode(int32_t batch, int64_t context) const;
  StepCost Prefill(int64_t tokens, int64_t cached = 0) const;

  const Deployment& deployment() const { return d_; }

 private:
  Deployment d_;
  // Precomputed per-deployment constants (per GPU unless said otherwise).
  double flops_per_token_ = 0;        // linear layers, per replica, per new token
  double flops_lm_head_ = 0;          // per sampled token
  double flops_attn_decode_pair_ = 0; // per (query, key) pair, all layers
  double flops_attn_prefill_pair_ = 0;
  double dense_weight_bytes_ = 0;     // per GPU: everything but the routed experts
  double expert_bytes_ = 0;           // per GPU: one routed expert of one layer
  double moe_layers_ = 0;
  double experts_ = 0;
  double expert_miss_ = 1;            // 1 - k/E
  double kv_bytes_per_token_ = 0;     // per GPU, all layers
  double act_bytes_per_token_ = 0;    // per GPU, all layers
  double comm_latency_s_ = 0;         // per step: TP all-reduce calls, PP and EP hops
  double tp_bytes_per_token_ = 0;     // ring bytes sent per GPU per token, all layers
  double ep_bytes_per_token_ = 0;     // all-to-all bytes per GPU per token, all layers
  double inv_flops_rate_ = 0;         // 1 / (eff.flops * peak * tp)
  double inv_mem_rate_ = 0;           // 1 / (eff.bandwidth * BW)
  double inv_link_rate_ = 0;          // 1 / (eff.interconnect * link BW)
  double fixed_s_ = 0;                // step + per-layer overheads
};

}  // namespace infereng::fit
