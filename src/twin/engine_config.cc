// Knob registry: one table row per key, so the list of valid keys, the parser and the
// error messages can never disagree.
#include "twin/engine_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <limits>
#include <optional>
#include <string>

#include "core/strings.h"
#include "core/units.h"

namespace infereng::twin {
namespace {

using Setter = std::function<Status(TwinSettings&, std::string_view)>;

struct Knob {
  std::string_view key;  // "engine.max_num_seqs"
  std::string_view expected;
  Setter set;
};

// "expected an integer >= 1, got \"lots\"", plus why when the setter said (an integer
// past the field's range).
std::string BadValue(std::string_view expected, std::string_view value, const Status& why) {
  std::string msg = "expected " + std::string(expected) + ", got \"" + std::string(value) + "\"";
  if (!why.message().empty()) msg += " (" + why.message() + ")";
  return msg;
}

Result<double> Num(std::string_view v) { return units::ParseNumber(v); }

Result<bool> Bool(std::string_view v) {
  if (v == "true" || v == "1" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "off" || v == "no") return false;
  return Status::InvalidArgument("not a boolean");
}

template <typename Cfg>
Cfg& Part(TwinSettings& t) {
  if constexpr (std::is_same_v<Cfg, EngineConfig>) return t.engine;
  else if constexpr (std::is_same_v<Cfg, ClusterConfig>) return t.cluster;
  else return t.cost;
}


// Integer >= lo that fits the field (an int32 knob never wraps).
template <typename T, typename Cfg>
Setter Int(T Cfg::*field, int64_t lo) {
  return [field, lo](TwinSettings& t, std::string_view v) -> Status {
    auto r = Num(v);

    if (!r.ok() || *r != std::floor(*r) || *r < static_cast<double>(lo)) return Status::InvalidArgument("");
    const double hi = std::min(9e15, static_cast<double>(std::numeric_limits<T>::max()));
    if (*r > hi) return Status::OutOfRange("at most " + units::FormatNumber(hi));
    Part<Cfg>(t).*field = static_cast<T>(*r);
    return Status::Ok();
  };
}

template <typename Cfg>
Setter Real(double Cfg::*field, double lo, double hi) {
  return [field, lo, hi](TwinSettings& t, std::string_view v) -> Status {
    auto r = Num(v);
    if (!r.ok() || !std::isfinite(*r) || *r < lo || *r > hi) return Status::InvalidArgument("");
    Part<Cfg>(t).*field = *r;
    return Status::Ok();
  };
}

// A duration in seconds: "30s", "500ms" or a plain number of seconds.
template <typename Cfg>
Setter Seconds(double Cfg::*field) {
  return [field](TwinSettings& t, std::string_view v) -> Status {
    auto r = units::ParseDurationSeconds(v, "s");
    if (!r.ok()) return Status::InvalidArgument("");
    Part<Cfg>(t).*field = *r;
    return Status::Ok();
  };
}

Setter Flag(bool EngineConfig::*field) {
  return [field](TwinSettings& t, std::string_view v) -> Status {
    auto r = Bool(v);
    if (!r.ok()) return r.status();
    t.engine.*field = *r;
    return Status::Ok();
  };
}

Setter SchedulerPreset();

const std::vector<Knob>& Knobs() {
  static const std::vector<Knob> kKnobs = {
      {"engine.max_num_batched_tokens", "an integer >= 1", Int(&EngineConfig::max_num_batched_tokens, 1)},
      {"engine.max_num_seqs", "an integer >= 1", Int(&EngineConfig::max_num_seqs, 1)},
      {"engine.enable_chunked_prefill", "true or false", Flag(&EngineConfig::enable_chunked_prefill)},
      {"engine.max_chunk_tokens", "an integer >= 0 (0: the token budget)", Int(&EngineConfig::max_chunk_tokens, 0)},
      {"engine.scheduling_policy", "decode_first or prefill_first",
       [](TwinSettings& t, std::string_view v) -> Status {
         EngineConfig& e = t.engine;
         if (v == "decode_first") e.policy = SchedulingPolicy::kDecodeFirst;
         else if (v == "prefill_first") e.policy = SchedulingPolicy::kPrefillFirst;
         else return Status::InvalidArgument("");
         return Status::Ok();
       }},
      {"engine.capacity_policy", "max_utilization or guaranteed_no_evict",
       [](TwinSettings& t, std::string_view v) -> Status {
         EngineConfig& e = t.engine;
         if (v == "max_utilization") e.capacity = CapacityPolicy::kMaxUtilization;
         else if (v == "guaranteed_no_evict") e.capacity = CapacityPolicy::kGuaranteedNoEvict;
         else return Status::InvalidArgument("");
         return Status::Ok();
       }},
      {"engine.scheduler", "vllm, trtllm, llamacpp, vllm-v0 or sglang-0.3", SchedulerPreset()},
      {"engine.block_size", "an integer >= 1", Int(&EngineConfig::block_size, 1)},
      {"engine.kv_cache_tokens", "an integer >= 0 (0: from the fit)", Int(&EngineConfig::kv_cache_tokens, 0)},
      {"engine.gpu_memory_utilization", "a number in (0, 1]", Real(&EngineConfig::gpu_memory_utilization, 0.01, 1.0)},
      {"engine.watermark", "a number in [0, 0.5]", Real(&EngineConfig::watermark, 0.0, 0.5)},
      {"engine.max_model_len", "an integer >= 0 (0: the model's context)", Int(&EngineConfig::max_model_len, 0)},
      {"engine.enable_prefix_caching", "true or false", Flag(&EngineConfig::enable_prefix_caching)},
      {"engine.prefix_cache_shared", "true or false", Flag(&EngineConfig::prefix_cache_shared)},
      {"engine.spec_tokens", "an integer in [0, 16]",
       [](TwinSettings& t, std::string_view v) -> Status {
         INFERENG_RETURN_IF_ERROR(Int(&EngineConfig::spec_tokens, 0)(t, v));
         return t.engine.spec_tokens <= 16 ? Status::Ok() : Status::InvalidArgument("");
       }},
      {"engine.spec_acceptance", "a number in [0, 1)", Real(&EngineConfig::spec_acceptance, 0.0, 0.9999)},
      {"engine.spec_draft_cost", "a number in [0, 1] (share of a target decode step)",
       Real(&EngineConfig::spec_draft_cost, 0.0, 1.0)},
      {"engine.max_waiting_requests", "an integer >= 0 (0: unbounded)", Int(&EngineConfig::max_waiting_requests, 0)},
      {"engine.max_waiting_tokens", "an integer >= 0 (0: unbounded)", Int(&EngineConfig::max_waiting_tokens, 0)},
      {"engine.request_timeout", "a duration like 30s (0: none)", Seconds(&EngineConfig::request_timeout_s)},
      {"engine.step_overhead", "a duration like 200us", Seconds(&EngineConfig::step_overhead_s)},
      {"engine.seq_overhead", "a duration like 100us (per sequence in a step)", Seconds(&EngineConfig::seq_overhead_s)},
      {"engine.admission_window", "a duration like 200us (host time per finished request before the next batch; 0: none)",
       Seconds(&EngineConfig::admission_window_s)},
      {"engine.slots", "an integer >= 1 (llama-server -np; the same as engine.max_num_seqs)",
       Int(&EngineConfig::max_num_seqs, 1)},
      {"engine.context_shift", "true or false", Flag(&EngineConfig::context_shift)},
      {"engine.slot_prompt_similarity", "a number in [0, 1]", Real(&EngineConfig::slot_prompt_similarity, 0.0, 1.0)},
      {"engine.ubatch_tokens", "an integer >= 1 (llama-server -ub)", Int(&EngineConfig::ubatch_tokens, 1)},
      {"engine.defrag_threshold", "a number in [0, 1] (llama-server -dt; 0: never)",
       Real(&EngineConfig::defrag_threshold, 0.0, 1.0)},
      {"engine.flash_attention", "true or false (llama-server -fa)", Flag(&EngineConfig::flash_attention)},
      {"engine.reasoning_tokens", "an integer >= 0 (reasoning tokens before each answer; 0: none)",
       Int(&EngineConfig::reasoning_tokens, 0)},
      {"cluster.replicas", "an integer >= 1", Int(&ClusterConfig::replicas, 1)},
      {"cluster.router", "round_robin, least_outstanding or prefix_affinity",
       [](TwinSettings& t, std::string_view v) -> Status {
         ClusterConfig& c = t.cluster;
         if (v == "round_robin") c.router = RouterPolicy::kRoundRobin;
         else if (v == "least_outstanding") c.router = RouterPolicy::kLeastOutstanding;
         else if (v == "prefix_affinity") c.router = RouterPolicy::kPrefixAffinity;
         else return Status::InvalidArgument("");
         return Status::Ok();
       }},
      {"cluster.autoscale", "none, queue_depth, kv_utilisation or in_flight",
       [](TwinSettings& t, std::string_view v) -> Status {
         ClusterConfig& c = t.cluster;
         if (v == "none") c.autoscale = AutoscaleMetric::kNone;
         else if (v == "queue_depth") c.autoscale = AutoscaleMetric::kQueueDepth;
         else if (v == "kv_utilisation" || v == "kv_utilization") c.autoscale = AutoscaleMetric::kKvUtilisation;
         else if (v == "in_flight") c.autoscale = AutoscaleMetric::kInFlight;
         else return Status::InvalidArgument("");
         return Status::Ok();
       }},
      {"cluster.autoscale_target", "a number > 0 (per replica)", Real(&ClusterConfig::autoscale_target, 1e-9, 1e12)},
      {"cluster.min_replicas", "an integer >= 0", Int(&ClusterConfig::min_replicas, 0)},
      {"cluster.max_replicas", "an integer >= 1", Int(&ClusterConfig::max_replicas, 1)},
      {"cluster.cold_start", "a duration like 60s", Seconds(&ClusterConfig::cold_start_s)},
      {"cluster.cooldown", "a duration like 120s", Seconds(&ClusterConfig::cooldown_s)},
      {"cluster.autoscale_interval", "a duration like 10s", Seconds(&ClusterConfig::autoscale_interval_s)},
      {"cluster.prefill_replicas", "an integer >= 0 (of cluster.replicas; 0: no disaggregation)",
       Int(&ClusterConfig::prefill_replicas, 0)},
      {"cluster.kv_transfer_bandwidth", "a number of GB/s per accelerator > 0, like 50",
       Real(&ClusterConfig::kv_transfer_gb_s, 1e-6, 1e6)},
      {"cluster.kv_transfer_latency", "a duration like 1ms (per transfer)", Seconds(&ClusterConfig::kv_transfer_latency_s)},
      {"cost.eff_flops", "a number in (0, 1]", Real(&CostKnobs::eff_flops, 0.001, 1.0)},
      {"cost.eff_bandwidth", "a number in (0, 1]", Real(&CostKnobs::eff_bandwidth, 0.001, 1.0)},
      {"cost.eff_interconnect", "a number in (0, 1]", Real(&CostKnobs::eff_interconnect, 0.001, 1.0)},
      {"cost.step_overhead", "a duration like 1ms", Seconds(&CostKnobs::step_overhead_s)},
      {"cost.layer_overhead", "a duration like 3us (per layer per step)", Seconds(&CostKnobs::layer_overhead_s)},
      {"cost.interconnect_latency", "a duration like 5us (per hop of a collective)",
       Seconds(&CostKnobs::interconnect_latency_s)},
      {"cost.collective_launch", "a duration like 6.6us (per collective call, before its hops)",
       Seconds(&CostKnobs::collective_launch_s)},
      {"cost.preprocess", "a duration like 5ms (per request, before the engine sees it)",
       Seconds(&CostKnobs::preprocess_s)},
      {"cost.network", "a duration like 2ms (client <-> server round trip, half each way)",
       Seconds(&CostKnobs::network_s)},
      {"cost.postprocess", "a duration like 1ms (per response chunk, after the engine emits it)",
       Seconds(&CostKnobs::postprocess_s)},
      {"cost.front_end_jitter", "a duration like 1ms (the mean of an exponential extra delay per request, before the engine)",
       Seconds(&CostKnobs::front_end_jitter_s)},
  };
  return kKnobs;
}

const Knob* FindKnob(std::string_view key) {
  for (const Knob& k : Knobs()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

// What each engine.scheduler preset sets: the keys every preset names (so switching presets
// leaves no value of the previous one behind), each skipped when the user set it.
struct PresetRow {
  std::string_view name;
  EngineScheduler scheduler;
  std::vector<std::pair<std::string_view, std::string_view>> sets;
};

const std::vector<PresetRow>& Presets() {
  // Host costs (engine.step_overhead, engine.seq_overhead) are 0 in the presets of current
  // engines, whose host work the cost model's cost.step_overhead covers; the 2024-engine
  // presets carry their own (docs/modeling.md, engine.scheduler, gives each value's source).
  static const std::vector<PresetRow> kPresets = {
      {"vllm", EngineScheduler::kVllm,
       {{"engine.scheduling_policy", "decode_first"}, {"engine.capacity_policy", "max_utilization"},
        {"engine.max_num_batched_tokens", "8192"}, {"engine.max_num_seqs", "256"},
        {"engine.step_overhead", "0"}, {"engine.seq_overhead", "0"}}},
      // TensorRT-LLM's default capacity_scheduler_policy GUARANTEED_NO_EVICT; its batch
      // limits are left at the paged engine's (set them to the deployment's).
      {"trtllm", EngineScheduler::kTrtLlm,
       {{"engine.scheduling_policy", "decode_first"}, {"engine.capacity_policy", "guaranteed_no_evict"},
        {"engine.max_num_batched_tokens", "8192"}, {"engine.max_num_seqs", "256"},
        {"engine.step_overhead", "0"}, {"engine.seq_overhead", "0"}}},
      // llama-server b4748 defaults (common/common.h): n_batch 2048, n_parallel (-np) 1.
      {"llamacpp", EngineScheduler::kLlamaCpp,
       {{"engine.scheduling_policy", "decode_first"}, {"engine.capacity_policy", "max_utilization"},
        {"engine.max_num_batched_tokens", "2048"}, {"engine.max_num_seqs", "1"},
        {"engine.step_overhead", "0"}, {"engine.seq_overhead", "0"}}},
      // vLLM V0 (0.5/0.6): a prefill-only step whenever a prompt waits (no chunked-prefill
      // mixing, as with --num-scheduler-steps > 1), preempt by recompute, and host costs.
      // Host costs: least squares on the Llama-3.1-8B A100 rows of sglang's benchmark_vllm_060
      // (vLLM 0.6.0, --num-scheduler-steps 10: TPOT at 4 and 8 rps, offline throughput),
      // checked on its held-out 70B TP4 H100 rows (FIDELITY.md (d3)).
      {"vllm-v0", EngineScheduler::kVllmV0,
       {{"engine.scheduling_policy", "prefill_first"}, {"engine.capacity_policy", "max_utilization"},
        {"engine.max_num_batched_tokens", "8192"}, {"engine.max_num_seqs", "256"},
        {"engine.step_overhead", "2ms"}, {"engine.seq_overhead", "25us"}}},
      // SGLang 0.3 as that table ran it (--disable-radix-cache, so its lpm queue order is
      // FCFS): prefill batches run alone and first (no --enable-mixed-chunk) and its host
      // costs before 0.4's overlap scheduler, fitted the same way on its SGLang 0.3.0 rows.
      // Not modelled: the radix-cache lpm order and admission by an estimated new-token
      // ratio with retraction (modeling.md).
      {"sglang-0.3", EngineScheduler::kSglang,
       {{"engine.scheduling_policy", "prefill_first"}, {"engine.capacity_policy", "max_utilization"},
        {"engine.max_num_batched_tokens", "8192"}, {"engine.max_num_seqs", "256"},
        {"engine.step_overhead", "1.5ms"}, {"engine.seq_overhead", "25us"}}},
  };
  return kPresets;
}

bool IsExplicit(const TwinSettings& t, std::string_view key) {
  return std::find(t.explicit_keys.begin(), t.explicit_keys.end(), key) != t.explicit_keys.end();
}

Setter SchedulerPreset() {
  return [](TwinSettings& t, std::string_view v) -> Status {
    for (const PresetRow& p : Presets()) {
      if (p.name != v) continue;
      t.engine.scheduler = p.scheduler;
      for (const auto& [key, value] : p.sets) {
        if (IsExplicit(t, key)) continue;
        INFERENG_RETURN_IF_ERROR(FindKnob(key)->set(t, value));
      }
      return Status::Ok();
    }
    return Status::InvalidArgument("");
  };
}

}  // namespace

std::string_view EngineSchedulerName(EngineScheduler s) {
  for (const PresetRow& p : Presets()) {
    if (p.scheduler == s) return p.name;
  }
  return "vllm";
}

double EngineConfig::SpecTokensPerRound() const {
  if (spec_tokens <= 0) return 1.0;
  const double a = spec_acceptance;
  if (a <= 0) return 1.0;
  return (1.0 - std::pow(a, spec_tokens + 1)) / (1.0 - a);
}

std::vector<std::string> TwinSettingKeys() {
  std::vector<std::string> keys;
  for (const Knob& k : Knobs()) keys.emplace_back(k.key);
  return keys;
}

namespace {

// A bare KEY means engine.KEY.
std::string FullTwinKey(std::string_view key) {
  if (key.starts_with("engine.") || key.starts_with("cluster.") || key.starts_with("cost.")) return std::string(key);
  return "engine." + std::string(key);
}

// Sets the knob `full` (a full key); on failure the message says what was wrong without
// naming the key, so each caller names it as its user wrote it (--set KEY, a card path).
Status SetKnob(TwinSettings& settings, const std::string& full, std::string_view value) {
  if (const Knob* k = FindKnob(full)) {
    Status s = k->set(settings, value);
    if (!s.ok()) return Status::InvalidArgument(BadValue(k->expected, value, s));
    // engine.slots is engine.max_num_seqs by another name: a preset must skip both.
    const std::string_view field = full == "engine.slots" ? std::string_view("engine.max_num_seqs") : full;
    if (!IsExplicit(settings, field)) settings.explicit_keys.emplace_back(field);
    return s;
  }
  const std::vector<std::string> keys = TwinSettingKeys();
  std::string msg = "unknown setting" + DidYouMean(full, keys) + "; valid keys:";
  for (const std::string& k : keys) msg += " " + k;
  return Status::InvalidArgument(msg);
}

}  // namespace

Status ApplyTwinSetting(TwinSettings& settings, std::string_view key, std::string_view value) {
  const std::string full = FullTwinKey(key);
  return SetKnob(settings, full, value).WithContext(full);
}

Status ApplyTwinAssignment(TwinSettings& settings, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status::InvalidArgument("--set " + std::string(assignment) +
                                   ": expected KEY=VALUE, e.g. engine.max_num_seqs=256");
  }
  const std::string full = FullTwinKey(assignment.substr(0, eq));
  return SetKnob(settings, full, assignment.substr(eq + 1)).WithContext("--set " + full);
}

Status ApplyEngineMap(TwinSettings& settings, const std::map<std::string, std::string>& map,
                      const std::function<std::string(const std::string& path)>& locate) {
  for (const auto& [key, value] : map) {
    // The card writes every knob under `engine:`, so its path is engine.KEY even for
    // cluster.* and cost.* keys.
    const std::string path = "engine." + key;
    Status s = SetKnob(settings, FullTwinKey(key), value);
    if (!s.ok()) return s.WithContext((locate ? locate(path) : std::string("card")) + ": " + path);
  }
  return Status::Ok();
}

Status ValidateEngineConfig(const EngineConfig& e) {
  if (e.max_num_batched_tokens < 1) return Status::InvalidArgument("engine.max_num_batched_tokens must be >= 1");
  if (e.max_num_seqs < 1) return Status::InvalidArgument("engine.max_num_seqs must be >= 1");
  if (e.block_size < 1) return Status::InvalidArgument("engine.block_size must be >= 1");
  if (e.kv_cache_tokens < e.block_size) {
    return Status::FailedPrecondition("engine.kv_cache_tokens must hold at least one block of " +
                                      std::to_string(e.block_size) + " tokens (got " +
                                      std::to_string(e.kv_cache_tokens) + ")");
  }
  if (e.spec_tokens < 0 || e.spec_acceptance < 0 || e.spec_acceptance >= 1) {
    return Status::InvalidArgument("engine.spec_acceptance must be in [0, 1)");
  }
  if (e.scheduler == EngineScheduler::kLlamaCpp) {
    // llama-server gives each of its -np slots n_ctx / np cells; a slot must hold a prompt
    // token, a generated one and llama.cpp's n_keep margin of 4 (server.cpp: n_ctx - 4).
    const int64_t slot_ctx = e.kv_cache_tokens / e.max_num_seqs;
    if (slot_ctx < 8) {
      return Status::FailedPrecondition("engine.scheduler=llamacpp: each of the " + std::to_string(e.max_num_seqs) +
                                        " slots (engine.slots) gets engine.kv_cache_tokens / slots = " +
                                        std::to_string(slot_ctx) + " tokens of context; at least 8 are needed");
    }
    if (e.spec_tokens > 0) {
      return Status::InvalidArgument("engine.spec_tokens: speculative decoding is not modelled with engine.scheduler=llamacpp");
    }
  }
  return Status::Ok();
}

Status ValidateClusterConfig(const ClusterConfig& c) {
  if (c.replicas < 1) return Status::InvalidArgument("cluster.replicas must be >= 1");
  if (c.autoscale != AutoscaleMetric::kNone) {
    if (c.min_replicas > c.max_replicas) {
      return Status::InvalidArgument("cluster.min_replicas (" + std::to_string(c.min_replicas) +
                                     ") exceeds cluster.max_replicas (" + std::to_string(c.max_replicas) + ")");
    }
    if (c.autoscale_interval_s <= 0) return Status::InvalidArgument("cluster.autoscale_interval must be > 0");
  }
  if (c.Disaggregated()) {
    if (c.prefill_replicas >= c.replicas) {
      return Status::InvalidArgument("cluster.prefill_replicas (" + std::to_string(c.prefill_replicas) +
                                     ") must leave at least one of cluster.replicas (" + std::to_string(c.replicas) +
                                     ") for the decode pool");
    }
    if (!(c.kv_transfer_latency_s >= 0 && c.kv_transfer_latency_s <= 3600)) {
      return Status::InvalidArgument("cluster.kv_transfer_latency must be between 0 and 1h");
    }
    if (c.autoscale != AutoscaleMetric::kNone) {
      return Status::InvalidArgument("cluster.prefill_replicas: disaggregated pools are not autoscaled by the twin "
                                     "(set cluster.autoscale=none)");
    }
  }
  return Status::Ok();
}

}  // namespace infereng::twin
