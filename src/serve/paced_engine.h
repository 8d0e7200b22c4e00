// PacedEngine: a tiny fixed-cost engine behind EnginePort, for tests, the bench and
// `infereng serve --engine paced`. Not the twin: no batching effects on speed.
//
// Each request waits for one of `max_running` slots (FIFO), then emits its first token
// after ttft_base + uncached_prompt_tokens * prefill_per_token, then one token every `itl`.
// Prefix cache: leading block hashes seen before (bounded set) count as cached tokens.
// Every request is paced independently, so emissions of different requests interleave
// (unlike a batched engine, where one decode step emits for the whole batch at once).
// Thread-safety: none (driven by the server thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "serve/engine_port.h"

namespace infereng::serve {

struct PacedEngineOptions {
  Nanos ttft_base = 20 * kNanosPerMilli;
  Nanos prefill_per_token = 50 * kNanosPerMicro;
  Nanos itl = 20 * kNanosPerMilli;
  int64_t max_running = 256;
  int64_t max_model_len = 131072;
  std::size_t prefix_cache_blocks = 1 << 16;
  int32_t reasoning_tokens = 0;  // a reasoning model: this many reasoning tokens first
};

class PacedEngine final : public EnginePort {
 public:
  explicit PacedEngine(PacedEngineOptions options) : opt_(options) {}

  Status Submit(const EngineRequest& req, Nanos now) override;
  void Cancel(uint64_t id, Nanos now) override;
  std::optional<Nanos> NextEventTime() const override;
  void AdvanceTo(Nanos t, EngineSink& sink) override;
  EngineStats Stats() const override;
  int32_t ReasoningTokensFor(int32_t output_tokens) const override {
    return output_tokens > 1 && opt_.reasoning_tokens > 0 ? std::min(opt_.reasoning_tokens, output_tokens - 1) : 0;
  }

 private:
  struct Active {
    uint64_t id = 0;        // 0: free slot
    int32_t prompt_tokens = 0;
    int32_t remaining = 0;
    int32_t cached = 0;
    int32_t emitted = 0;
    std::vector<uint64_t> blocks;
    int32_t block_tokens = 16;
    bool running = false;
  };
  // The hot path (one event per token) reaches its request by slot, not by a hash lookup;
  // `id` tells a live slot from one freed (and maybe reused) after a cancel.
  struct Event {
    Nanos t;
    uint64_t id;     // high bit: "scheduled" report, not a token
    uint32_t slot;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : id > o.id; }
  };
  void StartWaiting(Nanos now, EngineSink* sink);
  void Free(uint32_t slot);

  PacedEngineOptions opt_;
  std::vector<Active> slots_;
  std::vector<uint32_t> free_slots_;
  std::unordered_map<uint64_t, uint32_t> slot_of_;  // id -> slot (submit, cancel)
  std::deque<uint64_t> waiting_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::unordered_set<uint64_t> cache_;
  int64_t running_ = 0;
  int64_t prefix_queries_ = 0, prefix_hits_ = 0;
};

}  // namespace infereng::serve
