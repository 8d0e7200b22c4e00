#include "fit/step_cost.h"

#include <algorithm>
#include <cmath>

#include "fit/collective.h"
#include "fit/memory_plan.h"

namespace infereng::fit {

RooflineStepCost::RooflineStepCost(const Deployment& d) : d_(d) {
  const auto& m = d.model;
  const catalog::ParamCounts p = catalog::CountParams(m);
  const double bits = catalog::WeightBitsPerParam(d.weights);
  const double tp = d.tp;
  const double layers = m.layers;

  // FLOPs per new token through the linear layers (embedding lookup is free; the LM head
  // is charged per sampled token).
  const double lm_head_params = static_cast<double>(m.vocab) * m.hidden;
  flops_per_token_ = 2.0 * static_cast<double>(p.active - p.embedding - p.lm_head);
  flops_lm_head_ = 2.0 * lm_head_params;
  if (m.IsMla()) {
    // Decode runs the absorbed form over the cached latent; prefill expands K/V per head.
    flops_attn_decode_pair_ =
        layers * (2.0 * m.heads * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * m.heads * m.kv_lora_rank);
    flops_attn_prefill_pair_ =
        layers * (2.0 * m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 2.0 * m.heads * m.v_head_dim);
  } else {
    flops_attn_decode_pair_ = layers * 4.0 * m.heads * m.head_dim;
    flops_attn_prefill_pair_ = flops_attn_decode_pair_;
  }

  // Weight bytes one GPU reads per step, summed over pipeline stages (a step crosses all).
  const double bf16_params = static_cast<double>(p.norms + p.router);
  const double quantised_params = static_cast<double>(p.attention + p.dense_mlp + p.shared_experts);
  dense_weight_bytes_ = (bf16_params * 2 + quantised_params * bits / 8 + lm_head_params * 2) / tp;
  if (m.IsMoe()) {
    expert_bytes_ = static_cast<double>(p.per_expert) * bits / 8 / d.expert_shards();
    moe_layers_ = m.MoeLayers();
    experts_ = m.experts;
    expert_miss_ = 1.0 - static_cast<double>(m.experts_per_token) / m.experts;
  }

  // KV per token on one GPU across all stages (each stage holds its share of layers).
  Deployment one_stage = d;
  one_stage.count = d.tp;  // pp = 1: all layers
  kv_bytes_per_token_ = ComputeKv(one_stage).bytes_per_token_per_gpu;

  const double dense_width = static_cast<double>(m.intermediate) / tp;
  const double moe_width =
      m.IsMoe() ? static_cast<double>(m.experts_per_token) * m.expert_intermediate / d.expert_shards() : 0;
  const double width = (m.IsMoe() && m.dense_layers == 0) ? moe_width : std::max(dense_width, moe_width);
  act_bytes_per_token_ = layers * (4.0 * m.hidden + 3.0 * width) * 2;

  const auto& a = d.accel;
  const double hop_s = a.interconnect_latency_s;
  // TP: two all-reduces of the BF16 hidden state per layer, each paying its call's launch
  // and its hops (fit/collective.h: NCCL-like small-message latency) before the bytes.
  if (d.tp > 1) {
    comm_latency_s_ = 2.0 * layers * AllReduceLatencySeconds(d.tp, d.eff.collective_launch_s, hop_s);
    tp_bytes_per_token_ = 2.0 * layers * 2.0 * (tp - 1) / tp * m.hidden * 2.0;
  }
  // Pipeline: one point-to-point hand-off of the hidden state per stage boundary.
  const double pp_hops = d.pp() - 1;
  comm_latency_s_ += pp_hops * hop_s;
  tp_bytes_per_token_ += pp_hops * m.hidden * 2.0;
  // EP: all-to-all dispatch and combine per MoE layer; each GPU sends its share of the
  // tokens' k expert copies, (ep-1)/ep of which leave the GPU.
  if (d.ep > 1 && m.IsMoe()) {
    const double ep = d.ep;
    ep_bytes_per_token_ = moe_layers_ * 2.0 * m.experts_per_token * m.hidden * 2.0 * (ep - 1) / ep / ep;
    comm_latency_s_ += moe_layers_ * 2.0 * hop_s;
  }

  inv_flops_rate_ = 1.0 / (d.eff.flops * a.PeakFlops(d.weights) * tp);
  inv_mem_rate_ = 1.0 / (d.eff.bandwidth * a.bandwidth_bytes_per_s);
  inv_link_rate_ = a.interconnect_bytes_per_s > 0 ? 1.0 / (d.eff.interconnect * a.interconnect_bytes_per_s) : 0;
  fixed_s_ = d.eff.step_overhead_s + layers * d.eff.layer_overhead_s;
}

StepCost RooflineStepCost::Cost(const StepShape& s) const {
  StepCost c;
  const double decode_tokens = static_cast<double>(s.decode_seqs) * s.decode_tokens_per_seq;
  const double prefill_tokens = static_cast<double>(s.prefill_tokens);
  const double tokens = prefill_tokens + decode_tokens;
  if (tokens <= 0) return c;

  double prefill_pairs = s.prefill_attn_pairs;
  if (prefill_pairs < 0) {
    const double seqs = std::max<int32_t>(1, s.prefill_seqs);
    prefill_pairs = prefill_tokens * (static_cast<double>(s.prefill_context) + prefill_tokens / 2) / seqs;
  }
  const double decode_pairs = static_cast<double>(s.decode_context) * s.decode_tokens_per_seq;
  const double sampled = decode_tokens + s.prefill_seqs;

  c.flops = tokens * flops_per_token_ + sampled * flops_lm_head_ + decode_pairs * flops_attn_decode_pair_ +
            prefill_pairs * flops_attn_prefill_pair_;
  // A vision encoder's FLOPs (card/vision.h EncoderFlops) at the same rate, split over TP as
  // vLLM's ViTs are; its weights' bytes are left out (an encoder over ~1k patches is
  // compute-bound).
  c.flops += s.encoder_flops;

  double weight_bytes = dense_weight_bytes_;
  if (moe_layers_ > 0) {
    const double touched = experts_ * (1.0 - std::pow(expert_miss_, tokens));
    weight_bytes += moe_layers_ * touched * expert_bytes_;
  }
  const double kv_read = static_cast<double>(s.decode_context + s.prefill_context) * kv_bytes_per_token_;
  const double kv_write = tokens * kv_bytes_per_token_;
  c.bytes = weight_bytes + kv_read + kv_write + tokens * act_bytes_per_token_;

  c.compute_s = c.flops * inv_flops_rate_;
  c.memory_s = c.bytes * inv_mem_rate_;
  c.comm_s = comm_latency_s_ + tokens * (tp_bytes_per_token_ + ep_bytes_per_token_) * inv_link_rate_;
  c.fixed_s = fixed_s_;
  c.total_s = std::max(c.compute_s, c.memory_s) + c.comm_s + c.fixed_s;
  return c;
}

StepCost RooflineStepCost::Decode(int32_t batch, int64_t context) const {
  StepShape s;
  s.decode_seqs = batch;
  s.decode_context = static_cast<int64_t>(batch) * context;
  return Cost(s);
}

StepCost RooflineStepCost::Prefill(int64_t tokens, int64_t cached) const {
  StepShape s;
  s.prefill_seqs = 1;
  s.prefill_tokens = tokens;
  s.prefill_context = cached;
  s.prefill_attn_pairs = static_cast<double>(tokens) * (static_cast<double>(cached) + static_cast<double>(tokens) / 2);
  return Cost(s);
}

}  // namespace infereng::fit
