#include "fit/memory_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace infereng::fit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string Gb(double bytes) { return fmt::format("{:.2f} GB", bytes / 1e9); }

int StageLayers(const Deployment& d) {  // layers on the largest pipeline stage
  const int pp = std::max(1, d.pp());
  return (d.model.layers + pp - 1) / pp;
}

// Peak activation memory of vLLM's profiling forward pass over max_batched_tokens dummy
// tokens plus the sampler over max_num_seqs sequences (per GPU).
double ActivationBytes(const Deployment& d, const MemoryOptions& o, std::string* basis) {
  const auto& m = d.model;
  const double t = static_cast<double>(o.max_batched_tokens);
  const double dense_width = (m.IsMoe() && m.dense_layers == 0) ? 0 : static_cast<double>(m.intermediate) / d.tp;
  const double moe_width =
      m.IsMoe() ? static_cast<double>(m.experts_per_token) * (m.expert_intermediate + m.hidden) / d.expert_shards() : 0;
  const double width = std::max(dense_width, moe_width);
  const double hidden_states = t * 2.0 * (4.0 * m.hidden + 3.0 * width);
  const double logits = static_cast<double>(o.max_num_seqs) * m.vocab * 4.0 * 2;  // fp32 logits + probs
  *basis = fmt::format("{} tokens x (4 x {} + 3 x {:.0f}) x 2 B + {} seqs x {} vocab x 8 B", o.max_batched_tokens,
                       m.hidden, width, o.max_num_seqs, m.vocab);
  return hidden_states + logits;
}

}  // namespace

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kFits: return "fits";
    case Verdict::kMarginal: return "marginal";
    case Verdict::kDoesNotFit: return "does not fit";
  }
  return "?";
}

WeightBytes ComputeWeightBytes(const Deployment& d) {
  const catalog::ParamCounts p = catalog::CountParams(d.model);
  const double bits = catalog::WeightBitsPerParam(d.weights);
  WeightBytes w;
  // Kept in BF16 under every quantisation: embeddings, LM head, norms, MoE router.
  w.embeddings = static_cast<double>(p.embedding + p.lm_head) * 2;
  const double bf16_other = static_cast<double>(p.norms + p.router) * 2;
  w.routed_experts = static_cast<double>(p.routed_experts) * bits / 8;
  const double other_linear = static_cast<double>(p.attention + p.dense_mlp + p.shared_experts) * bits / 8;
  w.linear = other_linear + w.routed_experts;
  w.total = w.embeddings + bf16_other + w.linear;
  const double pp = std::max(1, d.pp());
  w.per_gpu = (w.embeddings + bf16_other + other_linear) / (d.tp * pp) + w.routed_experts / (d.expert_shards() * pp);
  return w;
}

KvFootprint ComputeKv(const Deployment& d) {
  const auto& m = d.model;
  const double b = catalog::KvBytesPerElement(d.kv);
  KvFootprint k;
  k.bytes_per_token = static_cast<double>(catalog::KvElementsPerToken(m)) * b;
  const int layers = StageLayers(d);
  if (m.IsMla()) {
    k.heads_per_rank = 1;
    k.replicated = d.tp > 1;
    k.bytes_per_token_per_gpu = static_cast<double>(layers) * (m.kv_lora_rank + m.qk_rope_head_dim) * b;
  } else {
    k.heads_per_rank = std::max(1, (m.kv_heads + d.tp - 1) / d.tp);
    k.replicated = d.tp > m.kv_heads;
    k.bytes_per_token_per_gpu = 2.0 * layers * k.heads_per_rank * m.head_dim * b;
  }
  return k;
}

namespace {

struct Budget {
  double device = 0, budget = 0, used = 0;
  std::vector<LineItem> items;
  WeightBytes weights;
};

Budget ComputeBudget(const Deployment& d, const MemoryOptions& o) {
  Budget b;
  b.device = d.accel.memory_bytes;
  b.budget = b.device * o.gpu_memory_utilization;
  b.weights = ComputeWeightBytes(d);
  const auto& m = d.model;
  const std::string prec(catalog::PrecisionName(d.weights));

  std::string weight_basis = fmt::format("{} linear weights at {} bits ({}), embeddings/LM head/norms in BF16, / {} GPU{}",
                                         prec, catalog::WeightBitsPerParam(d.weights), Gb(b.weights.linear),
                                         d.count, d.count > 1 ? "s" : "");
  if (m.IsMoe()) weight_basis += fmt::format("; all {} experts resident", m.experts);
  b.items.push_back({"weights", "Weights", b.weights.per_gpu, weight_basis,
                     "parameter counts from the model config; int4 = group-128 with FP16 scales (4.125 bit)"});

  std::string act_basis;
  const double act = ActivationBytes(d, o, &act_basis);
  b.items.push_back({"activations", "Activation peak", act, act_basis,
                     "estimate of vLLM's profile run at max_num_batched_tokens (default 8192) and max_num_seqs (256)"});

  const double ctx = o.cuda_context_bytes >= 0 ? o.cuda_context_bytes : 0.5 * kGiB;
  b.items.push_back({"cuda_context", "CUDA context", ctx, o.cuda_context_bytes >= 0 ? "set" : "default 0.5 GiB",
                     "typical CUDA + PyTorch context on H100-class GPUs (non-torch memory in vLLM's profile)"});

  const double graphs = o.cuda_graph_bytes >= 0 ? o.cuda_graph_bytes : 0.5 * kGiB;
  b.items.push_back({"cuda_graphs", "CUDA graphs", graphs, o.cuda_graph_bytes >= 0 ? "set" : "default 0.5 GiB",
                     "vLLM startup log 'Graph capturing finished ... took 0.4-1.5 GiB' (varies with model and batch sizes)"});

  const double nccl = o.nccl_bytes >= 0 ? o.nccl_bytes : (d.count > 1 ? 0.35e9 : 0.0);
  b.items.push_back({"nccl", "NCCL / comm buffers", nccl,
                     o.nccl_bytes >= 0 ? "set" : (d.count > 1 ? "default 0.35 GB (multi-GPU)" : "single GPU: none"),
                     "docs/modeling.md: NCCL buffers ~0.35 GB"});

  const double frag = o.fragmentation * (b.weights.per_gpu + act);
  b.items.push_back({"fragmentation", "Allocator fragmentation", frag,
                     fmt::format("{:.0f}% of weights + activations", o.fragmentation * 100),
                     "assumption: PyTorch caching-allocator slack; paged KV itself wastes at most one block per sequence"});

  if (o.framework_reserve_bytes > 0) {
    b.items.push_back({"framework_reserve", "Framework reserve", o.framework_reserve_bytes, "set",
                       "user setting (one planner reserves 3.5 GiB)"});
  }
  for (const auto& it : b.items) b.used += it.bytes;
  return b;
}

}  // namespace

KvCapacity ComputeKvCapacity(const Deployment& d, const MemoryOptions& o) {
  const Budget b = ComputeBudget(d, o);
  const KvFootprint kv = ComputeKv(d);
  KvCapacity c;
  c.block_size = o.block_size;
  c.pool_bytes_per_gpu = b.budget - b.used;
  if (c.pool_bytes_per_gpu > 0 && kv.bytes_per_token_per_gpu > 0) {
    const double block_bytes = kv.bytes_per_token_per_gpu * o.block_size;
    c.blocks = static_cast<int64_t>(std::floor(c.pool_bytes_per_gpu / block_bytes));
    c.tokens = c.blocks * o.block_size;
  }
  return c;
}

MemoryPlan PlanMemory(const Deployment& d, const MemoryOptions& o, int64_t context, int batch) {
  MemoryPlan p;
  Budget b = ComputeBudget(d, o);
  p.device_bytes = b.device;
  p.budget_bytes = b.budget;
  p.items = std::move(b.items);
  p.used_bytes = b.used;
  p.weights = b.weights;
  p.kv = ComputeKv(d);
  p.capacity = ComputeKvCapacity(d, o);
  p.kv_pool_bytes = b.budget - b.used;
  p.context = context;
  p.batch = std::max(1, batch);
  p.blocks_per_seq = (context + o.block_size - 1) / o.block_size;
  const double seq_bytes = static_cast<double>(p.blocks_per_seq) * o.block_size * p.kv.bytes_per_token_per_gpu;
  p.max_concurrent_sequences = p.blocks_per_seq > 0 ? p.capacity.blocks / p.blocks_per_seq : 0;
  p.headroom_bytes = p.kv_pool_bytes - seq_bytes * p.batch;

  const std::string usable = fmt::format("{} usable ({:.2f} x {})", Gb(b.budget), o.gpu_memory_utilization, Gb(b.device));
  const double pool_share = p.kv_pool_bytes / b.device;
  if (p.weights.per_gpu > b.budget) {
    p.verdict = Verdict::kDoesNotFit;
    p.reason = fmt::format("weights alone take {} per GPU, more than the {}", Gb(p.weights.per_gpu), usable);
  } else if (p.kv_pool_bytes <= 0) {
    p.verdict = Verdict::kDoesNotFit;
    p.reason = fmt::format("weights {} + overheads {} = {} per GPU exceed the {}; nothing is left for KV cache",
                           Gb(p.weights.per_gpu), Gb(b.used - p.weights.per_gpu), Gb(b.used), usable);
  } else if (p.max_concurrent_sequences < 1) {
    p.verdict = Verdict::kDoesNotFit;
    p.reason = fmt::format(
        "after weights {} and overheads {}, the KV pool of {} per GPU holds {} tokens; one sequence of {} tokens needs {}",
        Gb(p.weights.per_gpu), Gb(b.used - p.weights.per_gpu), Gb(p.kv_pool_bytes), p.capacity.tokens, context,
        Gb(seq_bytes));
  } else if (p.max_concurrent_sequences < p.batch) {
    // The batch asked for is the question fit answers: holding fewer is not "marginal".
    p.verdict = Verdict::kDoesNotFit;
    p.reason = fmt::format("the KV pool of {} per GPU holds {} sequences of {} tokens, fewer than the {} requested",
                           Gb(p.kv_pool_bytes), p.max_concurrent_sequences, context, p.batch);
  } else if (pool_share < o.marginal_fraction) {
    p.verdict = Verdict::kMarginal;
    p.reason = fmt::format(
        "only {} per GPU ({:.1f}% of memory) is left for KV cache after weights {} and overheads {}: {} sequences of {} "
        "tokens; small changes in overheads or context tip it over",
        Gb(p.kv_pool_bytes), pool_share * 100, Gb(p.weights.per_gpu), Gb(b.used - p.weights.per_gpu),
        p.max_concurrent_sequences, context);
  } else {
    p.verdict = Verdict::kFits;
    p.reason = fmt::format("KV pool of {} per GPU ({:.1f}% of memory) holds {} tokens: {} sequences of {} tokens",
                           Gb(p.kv_pool_bytes), pool_share * 100, p.capacity.tokens, p.max_concurrent_sequences, context);
  }
  return p;
}

}  // namespace infereng::fit
