// EngineGauges: what an engine reports at any instant, in vLLM's terms (metric names in
// brackets). The twin's EngineStats extends it with the simulation's own counters, and it
// is serve's view of any engine behind its port (serve::EngineStats), so the twin's
// figures reach /metrics without a field-by-field copy.
#pragma once

#include <cstdint>

namespace infereng::twin {

struct EngineGauges {
  int64_t running = 0;                // [vllm:num_requests_running]
  int64_t waiting = 0;                // [vllm:num_requests_waiting]
  double kv_usage = 0;                // [vllm:kv_cache_usage_perc] 0..1, cached-free counts as free
  int64_t prefix_queries_tokens = 0;  // [vllm:prefix_cache_queries_total] prompt tokens looked up
  int64_t prefix_hits_tokens = 0;     // [vllm:prefix_cache_hits_total]
  int64_t preemptions = 0;            // [vllm:num_preemptions_total]
  int64_t max_model_len = 0;          // context length (serve: /tokenize and /v1/models)
};

}  // namespace infereng::twin
