// EngineConfig: every knob of one simulated serving-engine replica (vLLM-like by default,
// llama.cpp-like with engine.scheduler=llamacpp), the cluster (router, autoscaler) and
// cost-model knobs, and the one place that turns "KEY=VALUE" text into them. `--set engine.KEY=VALUE` and the card's
// `engine:` map both go through ApplyEngineSetting, so a card and a flag mean the same.
//
// Unknown keys are InvalidArgument naming the key and listing the valid ones; bad values
// name the key and what was expected. Defaults follow vLLM V1 (0.8+) unless noted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::twin {

enum class SchedulingPolicy {
  kDecodeFirst,   // vLLM V1: running requests first, then new prefills fill the token budget
  kPrefillFirst,  // vLLM V0 without chunked prefill: a prefill-only step whenever one fits
};

// When a waiting request may take KV blocks (TensorRT-LLM's capacity_scheduler_policy).
enum class CapacityPolicy {
  kMaxUtilization,     // vLLM: admit what fits now; when the cache runs out, preempt the
                       // newest running request and recompute it later
  kGuaranteedNoEvict,  // TensorRT-LLM's default: admit only when blocks for the whole
                       // prompt + output are free after every running request's own
                       // remaining need, so nothing is ever evicted
};

// Which engine's scheduler the replica follows (`engine.scheduler`). vllm and trtllm are
// presets of the paged engine (engine.h: they set scheduling_policy and capacity_policy);
// llamacpp is a different engine (slot_engine.h: slots with their own context, a unified
// KV cache whose occupied cells every step attends over, no preemption). A preset sets
// only keys the user did not set (TwinSettings::explicit_keys), so order does not matter.
enum class EngineScheduler {
  kVllm,      // decode_first + max_utilization (the default)
  kTrtLlm,    // decode_first + guaranteed_no_evict (TensorRT-LLM's capacity scheduler)
  kLlamaCpp,  // llama-server b4748: max_num_seqs = slots (-np, default 1), n_batch 2048
  kVllmV0,    // vLLM 0.5/0.6 (V0): prefill_first + max_utilization + host costs
  kSglang,    // SGLang 0.3 (no overlap scheduler): prefill_first + max_utilization + host costs
};

struct EngineConfig {
  EngineScheduler scheduler = EngineScheduler::kVllm;
  // Iteration-level batching.
  int32_t max_num_batched_tokens = 8192;  // token budget of one step
  int32_t max_num_seqs = 256;             // sequences in one step
  bool enable_chunked_prefill = true;
  int32_t max_chunk_tokens = 0;           // per-request prefill chunk cap (0: token budget)
  SchedulingPolicy policy = SchedulingPolicy::kDecodeFirst;
  CapacityPolicy capacity = CapacityPolicy::kMaxUtilization;

  // Paged KV cache.
  int32_t block_size = 16;                // tokens per KV block
  int64_t kv_cache_tokens = 0;            // capacity override (0: from the fit)
  double gpu_memory_utilization = 0.9;    // passed to the fit when capacity comes from it
  double watermark = 0.01;                // share of blocks kept free when admitting prefills
  int32_t max_model_len = 0;              // prompt + output limit (0: model's context)

  // Prefix cache (block-hash reuse, LRU eviction of unreferenced blocks).
  bool enable_prefix_caching = true;
  bool prefix_cache_shared = false;       // allow reuse across tenants

  // Speculative decoding (0 draft tokens: off).
  int32_t spec_tokens = 0;                // gamma: draft tokens per round
  double spec_acceptance = 0.7;           // alpha: per-token acceptance probability
  double spec_draft_cost = 0;             // draft step as a share of a target decode step
                                          // (0: the cost model's DraftStepSeconds)

  // Admission control and timeouts.
  int32_t max_waiting_requests = 0;       // 0: unbounded
  int64_t max_waiting_tokens = 0;         // prompt tokens waiting (0: unbounded)
  double request_timeout_s = 0;           // engine aborts a request older than this (0: none)

  // Engine host costs added to every step's duration (modelling.md): a fixed per-step
  // CPU/scheduler time, and a per-sequence one for each sequence in the step (input
  // preparation, sampling, detokenisation and output processing done on the host while the
  // GPU waits; vLLM 0.5.3 measured ~0.1 ms per sequence for output processing alone,
  // vllm-project/vllm#6913). Both 0 in the vllm and trtllm presets, whose host work the cost
  // model's cost.step_overhead covers; set by the 2024-engine presets (vllm-v0, sglang-0.3).
  double step_overhead_s = 0;
  double seq_overhead_s = 0;
  // Host time of one step that runs `seqs` sequences.
  double HostSeconds(int64_t seqs) const { return step_overhead_s + seq_overhead_s * static_cast<double>(seqs); }
  // Host time per request that finished in a step, spent before the next batch is formed
  // (llama-server: the slot's release, its timings log and final response); an idle engine
  // woken by a request forms its batch one such time after it. A request that reaches the
  // engine meanwhile joins the batch. So closed-loop users whose answers end in one step are
  // prefilled together if their next prompts come back within (finished x window), and a user
  // whose answer ended while others decode gets its next prompt into the next step if it comes
  // back within one window. llama.cpp b11669 (CPU, 4 slots; docs/FIDELITY.md (b6)) keeps 4
  // users in lockstep for a minute in one run and splits them in another: a race of tenths of
  // a millisecond, which with cost.front_end_jitter the twin runs as the real server does
  // (0.5 ms with a 0.3 ms jitter there, chosen on one set of runs and held out on another).
  // Steps in which nothing finished form the next batch at once (measured: a prompt sent as a
  // mid-stream token arrives misses the step already formed). 0 (every preset): a batch is
  // formed the instant the engine is free.
  double admission_window_s = 0;
  // The host time after a step in which `finished` requests finished.
  Nanos AfterFinishes(int64_t finished) const {
    return finished > 0 ? SecondsToNanos(admission_window_s * static_cast<double>(finished)) : 0;
  }
  // When the engine forms its next batch: `free_at` (the last step's end, plus the host time
  // after its finishes) if the first waiting request arrived by then, else the request's
  // arrival plus one window (an idle engine woken by it).
  Nanos BatchAt(Nanos free_at, Nanos first_arrival) const {
    return first_arrival <= free_at ? free_at : first_arrival + SecondsToNanos(admission_window_s);
  }

  // llamacpp only (slot_engine.h). Each slot's context is kv_cache_tokens / max_num_seqs
  // (llama-server's -c / -np). Context shift on (llama-server's default): a prompt that
  // fills the slot is cut as llama.cpp cuts it, and generation past the slot's end drops
  // half of the slot's cells; off (--no-context-shift): such requests are refused.
  bool context_shift = true;
  // A new request takes the idle slot with the longest common prompt prefix when that
  // prefix is more than this share of the slot's cached tokens (llama-server's
  // --slot-prompt-similarity, 0.5), else the least recently used idle slot; 0: LRU only.
  double slot_prompt_similarity = 0.5;
  // llama.cpp's physical batch (-ub, 512): a step's tokens are placed and computed in
  // ubatches of at most this many, each priced alone over the cells it spans (llamacpp_kv.h).
  int32_t ubatch_tokens = 512;
  // KV defragmentation threshold (-dt, 0.1; <= 0: never) and flash attention (-fa: the
  // attention span is padded to 256 cells instead of 32).
  double defrag_threshold = 0.1;
  bool flash_attention = false;
  // A reasoning model: the first reasoning_tokens of every answer are reasoning (at most
  // all but the last output token), streamed by serve as delta.reasoning_content and
  // marked reasoning in the twin's records (docs/serve.md). 0: no reasoning.
  int32_t reasoning_tokens = 0;
  // Reasoning tokens of a request with `output_tokens` output tokens.
  int32_t ReasoningTokensFor(int32_t output_tokens) const {
    return output_tokens > 1 && reasoning_tokens > 0 ? std::min(reasoning_tokens, output_tokens - 1) : 0;
  }

  // Expected tokens per speculative round: (1 - a^(g+1)) / (1 - a); 1 when off.
  double SpecTokensPerRound() const;
};

// Cluster-level knobs (router, autoscaler), set with `--set cluster.KEY=VALUE`.
enum class RouterPolicy { kRoundRobin, kLeastOutstanding, kPrefixAffinity };
enum class AutoscaleMetric { kNone, kQueueDepth, kKvUtilisation, kInFlight };

struct ClusterConfig {
  int32_t replicas = 1;
  RouterPolicy router = RouterPolicy::kLeastOutstanding;
  AutoscaleMetric autoscale = AutoscaleMetric::kNone;
  double autoscale_target = 8;        // per-replica target of the metric
  int32_t min_replicas = 1;           // 0 allows scale to zero
  int32_t max_replicas = 8;
  double cold_start_s = 60;           // scale-up delay until a new replica serves
  double cooldown_s = 120;            // minimum time between two scaling decisions
  double autoscale_interval_s = 10;   // how often the autoscaler looks
  // Prefill/decode disaggregation (twin/disaggregation.h): > 0 makes this many of the
  // `replicas` a prefill pool and the rest a decode pool (same accelerators each). The
  // prompt's KV moves from the prefill replica to the decode replica over a link of
  // kv_transfer_gb_s per accelerator of the sending replica, plus kv_transfer_latency_s
  // per transfer; a replica's transfers go one after another.
  // Link defaults: Mooncake's measured vLLM P/D transfers (H800, TP8 each side, 8 RoCE
  // NICs; Mooncake docs/source/performance/vllm/vllm-v1-pd-performance.md): 0.54 ms for
  // 20 MB up to 31.65 ms for 4.5 GB, i.e. ~0.4 ms + bytes / ~144 GB/s, ~18 GB/s per GPU's NIC.
  // Inside one node over NVLink, Dynamo moved 7,500 tokens of Llama-3.1-8B KV in 8-20 ms
  // (~50-120 GB/s): set it per deployment (docs/modeling.md).
  int32_t prefill_replicas = 0;
  double kv_transfer_gb_s = 18;         // achieved, per accelerator of the sending replica
  double kv_transfer_latency_s = 0.4e-3;  // per transfer (handshake, descriptors, notification)
  bool Disaggregated() const { return prefill_replicas > 0; }
};

// Roofline efficiency knobs (fit::Efficiency), set with `--set cost.KEY=VALUE`.
// Negative: keep the fit's default.
struct CostKnobs {
  double eff_flops = -1;         // achieved / peak matmul FLOP/s
  double eff_bandwidth = -1;     // achieved / peak HBM bandwidth
  double eff_interconnect = -1;  // achieved / peak link bandwidth
  double step_overhead_s = -1;   // fixed per-step time inside the cost model
  double layer_overhead_s = -1;  // per layer per step (kernel launch gaps the roofline misses)
  double interconnect_latency_s = -1;  // per hop of a collective (replaces the accelerator's figure)
  double collective_launch_s = -1;     // per collective call (fit/collective.h)
  // Per-request front end (twin/front_end.h): replace the card's product figures.
  double preprocess_s = -1;
  double network_s = -1;               // round trip
  double postprocess_s = -1;
  // Mean of an exponential extra delay per request on its way to the engine (0: none): a
  // real front end never hands two requests over at the same instant (twin/front_end.h).
  double front_end_jitter_s = -1;
};

// "vllm", "trtllm", "llamacpp", "vllm-v0", "sglang-0.3": the engine.scheduler value that selects `s`.
std::string_view EngineSchedulerName(EngineScheduler s);

// Everything `--set` can change in the twin.
struct TwinSettings {
  EngineConfig engine;
  ClusterConfig cluster;
  CostKnobs cost;
  // Full keys set by --set or a card ("engine.max_num_seqs"): a preset leaves them alone.
  std::vector<std::string> explicit_keys = {};
};

// Applies "engine.KEY", "cluster.KEY" or "cost.KEY" = value. A bare KEY means engine.KEY.
// Errors: "engine.max_num_seqs: expected an integer >= 1, got \"lots\"", or for an unknown
// key "engine.max_num_seq: unknown setting (did you mean \"engine.max_num_seqs\"?); valid keys: ...".
Status ApplyTwinSetting(TwinSettings& settings, std::string_view key, std::string_view value);
// Applies "KEY=VALUE" text (the --set flag's argument); errors start "--set engine.KEY: ".
Status ApplyTwinAssignment(TwinSettings& settings, std::string_view assignment);
// Applies a card's `engine:` map (bare keys are engine keys; "cluster.x"/"cost.x" allowed).
// Errors name the card field as written, engine.KEY, after `locate(path)` (the card's
// "FILE:LINE"; "card" when no locator is given), never the --set flag the user did not type.
Status ApplyEngineMap(TwinSettings& settings, const std::map<std::string, std::string>& map,
                      const std::function<std::string(const std::string& path)>& locate = {});
// Checks ranges and consistency (the KV capacity is checked by Engine::Create).
Status ValidateEngineConfig(const EngineConfig& engine);
Status ValidateClusterConfig(const ClusterConfig& cluster);

// Every valid key, "engine.max_num_seqs", ..., for help texts and errors.
std::vector<std::string> TwinSettingKeys();

}  // namespace infereng::twin
