// Memory plan: where one accelerator's memory goes when a replica is deployed, and how
// much KV cache (hence how many concurrent sequences) is left.
//
// Like vLLM, everything sits inside the engine's memory-utilisation cap
// (gpu_memory_utilization x device memory): weights, activation peak at the max batched
// tokens, CUDA context, CUDA graphs, NCCL buffers, allocator fragmentation and any
// framework reserve are taken out of that budget, and the rest is the paged KV pool.
// Each is its own LineItem with the value used and where the default comes from, so a
// user can see (and override) the overheads that other calculators leave out.
// All figures are per GPU (the largest rank: every rank holds the same share here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fit/deployment.h"

namespace infereng::fit {

// Engine-side knobs and overhead defaults. Negative "bytes" fields mean "use the default".
struct MemoryOptions {
  double gpu_memory_utilization = 0.9;  // vLLM --gpu-memory-utilization default
  int64_t max_batched_tokens = 8192;    // vLLM max_num_batched_tokens (chunked prefill)
  int max_num_seqs = 256;               // vLLM max_num_seqs default
  int block_size = 16;                  // vLLM KV block (tokens)
  double cuda_context_bytes = -1;       // default 0.5 GiB
  double cuda_graph_bytes = -1;         // default 0.5 GiB (0 if graphs are disabled)
  double nccl_bytes = -1;               // default 0.35 GB when more than one GPU, else 0
  double fragmentation = 0.02;          // fraction of (weights + activations)
  double framework_reserve_bytes = 0;   // e.g. 3.5 GiB as one planner reserves
  double marginal_fraction = 0.10;      // KV pool below this share of memory = marginal
};

struct LineItem {
  std::string key;     // "weights", "activations", ... (JSON key; stable)
  std::string label;   // human label
  double bytes = 0;    // per GPU
  std::string basis;   // how the value was obtained ("default 0.5 GiB", "2 x 8.03e9 x 16 bit")
  std::string source;  // where the default or formula comes from
};

// Weight bytes of the whole replica and per GPU, by parameter group.
struct WeightBytes {
  double total = 0;            // all ranks together
  double per_gpu = 0;
  double embeddings = 0;       // embedding + LM head (kept BF16), whole replica
  double linear = 0;           // everything quantised, whole replica
  double routed_experts = 0;   // part of `linear` (all experts are resident)
};
WeightBytes ComputeWeightBytes(const Deployment& d);

// KV bytes per token: the whole model and what one GPU holds. Per GPU each TP rank holds
// max(1, kv_heads / tp) heads (replicated once tp > kv_heads) of its pipeline stage's
// layers; MLA's latent is replicated on every TP rank.
struct KvFootprint {
  double bytes_per_token = 0;          // unsharded, all layers
  double bytes_per_token_per_gpu = 0;
  int heads_per_rank = 0;              // KV heads one rank holds (MLA: 1 latent)
  bool replicated = false;             // some heads are stored on more than one rank
};
KvFootprint ComputeKv(const Deployment& d);

// What the twin needs: the KV pool of one replica.
struct KvCapacity {
  double pool_bytes_per_gpu = 0;
  int64_t tokens = 0;     // tokens of KV the replica can hold (block-rounded)
  int64_t blocks = 0;     // paged blocks of block_size tokens
  int block_size = 16;
};

enum class Verdict { kFits, kMarginal, kDoesNotFit };
std::string_view VerdictName(Verdict v);  // "fits" | "marginal" | "does not fit"

struct MemoryPlan {
  double device_bytes = 0;   // per GPU
  double budget_bytes = 0;   // device x utilisation cap
  std::vector<LineItem> items;  // weights, activations, ... (everything but the KV pool)
  double used_bytes = 0;     // sum of items
  double kv_pool_bytes = 0;  // budget - used (may be negative)
  double headroom_bytes = 0; // kv_pool - KV needed by `batch` sequences at `context`
  WeightBytes weights;
  KvFootprint kv;
  KvCapacity capacity;
  int64_t context = 0;
  int batch = 1;
  int64_t blocks_per_seq = 0;
  int64_t max_concurrent_sequences = 0;  // KV-limited, at `context` (not capped by max_num_seqs)
  Verdict verdict = Verdict::kDoesNotFit;
  std::string reason;        // one sentence saying why
};

// Plans memory for `batch` sequences of `context` tokens each (prompt + output). The
// verdict is "does not fit" when the KV pool holds fewer than `batch` such sequences,
// "marginal" when they fit with little memory to spare. `d` must pass Validate().
MemoryPlan PlanMemory(const Deployment& d, const MemoryOptions& o, int64_t context, int batch);

// The KV pool the twin allocates from (same accounting as PlanMemory).
KvCapacity ComputeKvCapacity(const Deployment& d, const MemoryOptions& o);

}  // namespace infereng::fit
