// Engine: one replica of a continuous-batching LLM serving engine (vLLM-like), simulated
// at the level of engine iterations ("steps"). The same object runs in virtual time
// (`simulate`, `capacity`, `sweep --simulate`) and in wall time (`serve`): it never reads
// a clock. The caller passes the time of every call and drives it with
//
//     while (auto t = engine.NextEventTime()) { wait/jump until *t; engine.AdvanceTo(*t, sink); }
//
// interleaved with Submit(req, now) and Cancel(id, now) as requests come and go.
//
// Timing model. A step starts as soon as the previous one ends (or, when idle, at the
// time work arrives). At its start the scheduler picks the batch (decode-first or
// prefill-first, chunked prefill, token budget, sequence cap, KV blocks, preemption by
// recompute) and asks the CostModel for its duration, so its end time is fixed then.
// At the step's end every sequence in it emits its output tokens (OnTokens, timestamped
// at the end), finished requests are reported (OnFinished) and the next step starts.
// Requests submitted while a step runs join at the next step start; a request whose
// arrival time is after a step's start waits for the following one (so a late AdvanceTo
// never lets a request travel back in time). After a step in which a request finished,
// and after work reaches an idle engine, the next step starts engine.admission_window later
// (0 by default; engine_config.h), and requests that arrive in that time join it.
//
// KV cache: paged (block_size tokens per block), capacity config.kv_cache_tokens. Prompt
// blocks carry the caller's chained block hashes; completed hashed blocks stay cached
// after their request ends and are reused by later requests with the same leading hashes
// (LRU eviction of unreferenced blocks). Tenant isolation is in the hashes: the caller
// salts them per tenant unless sharing is allowed (see PrefixBlockHashes()).
//
// Output length: exactly `output_tokens` tokens (the caller resolves EOS/max_tokens).
//
// engine.scheduler=llamacpp replaces this scheduler by llama.cpp's server (slot_engine.h):
// slots that keep their cached tokens when idle, one unified batch per step, no preemption.
// The calls, callbacks and timing rules above are the same.
//
// Thread-safety: none. Call every method from one thread (serve: its engine thread).
// Invariants: times passed in never decrease; every step lasts >= 1 ns; KV blocks in use
// + cached + free == capacity; a cancelled request holds no KV and no batch slot on return.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "twin/cost_model.h"
#include "twin/engine_config.h"
#include "twin/engine_gauges.h"

namespace infereng::twin {

struct EngineRequest {
  uint64_t id = 0;              // unique among the requests alive in this engine
  uint64_t tag = 0;             // the caller's handle, echoed in every callback
  int32_t prompt_tokens = 0;    // >= 1
  int32_t output_tokens = 1;    // >= 1; exactly this many are generated
  int32_t tenant = 0;
  // Chained hash per FULL prompt block (hash i covers tokens [0, (i+1)*block_size)),
  // already salted by tenant when tenants must not share. Copied by Submit. Empty: the
  // prompt is never served from or added to the prefix cache.
  std::span<const uint64_t> block_hashes = {};
  // Prompt tokens whose KV arrives with the request (a disaggregated decode replica: the
  // prefill replica computed them and the KV was transferred). At admission they count as
  // computed, as a prefix-cache hit would (capped at prompt - 1: the last prompt token is
  // always computed here, which samples the first output token, as vLLM's decode instance
  // does). Lost on preemption (the request is then recomputed locally). Paged engine only.
  int32_t preloaded_tokens = 0;
  // Vision inputs: prompt positions [image_begin, image_end) are image tokens, whose vision
  // encoder costs `encoder_flops`. Charged once, to the step whose prefill chunk first
  // reaches image_begin (vLLM V1 schedules the encoder with that chunk); not charged when
  // the prefix cache already holds every image token; charged again after a preemption
  // (the recompute re-runs the encoder). image_end 0: no images. Paged engine only.
  int32_t image_begin = 0;
  int32_t image_end = 0;
  double encoder_flops = 0;
};

enum class RejectReason : uint8_t {
  kNone = 0,
  kWaitingRequestsFull,  // max_waiting_requests reached (serve: 429)
  kWaitingTokensFull,    // max_waiting_tokens reached (serve: 429)
  kTooLong,              // prompt + output exceed max_model_len or the whole KV cache
  kPromptOverBudget,     // chunked prefill off and prompt > max_num_batched_tokens
  kInvalid,              // prompt_tokens < 1, output_tokens < 1, or duplicate id
};
std::string_view RejectReasonName(RejectReason r);  // "waiting_requests_full", ...

struct Admission {
  RejectReason reason = RejectReason::kNone;
  bool ok() const { return reason == RejectReason::kNone; }
  // Ok, ResourceExhausted (queue limits: retry later) or InvalidArgument (never fits).
  Status ToStatus() const;
};

enum class FinishReason : uint8_t {
  kLength,   // generated every requested token
  kTimeout,  // request_timeout_s passed before it finished (its KV is freed)
};

// Receives what happens inside AdvanceTo. Calls come in time order. Callbacks may read
// the engine (Stats) but must not call Submit/Cancel/AdvanceTo (queue those for later).
class EngineSink {
 public:
  virtual ~EngineSink() = default;
  // The request left the waiting queue for the first time (its first step starts at t).
  virtual void OnScheduled(uint64_t id, uint64_t tag, Nanos t) {}
  // `count` output tokens became available at t (the end of the step that made them).
  // The first call for a request is its first token (prefill done); count > 1 only with
  // speculative decoding. `cached_prompt_tokens`: prompt tokens served from the prefix
  // cache (meaningful on the first call).
  virtual void OnTokens(uint64_t id, uint64_t tag, Nanos t, int32_t count,
                        int32_t cached_prompt_tokens) = 0;
  // The request left the engine at t; its KV blocks and batch slot are free.
  virtual void OnFinished(uint64_t id, uint64_t tag, Nanos t, FinishReason reason) = 0;
  // KV ran out: the request went back to the waiting queue and its KV was freed; its
  // prefill will be recomputed (tokens already emitted stay emitted).
  virtual void OnPreempted(uint64_t id, uint64_t tag, Nanos t) {}
};

// Counters and gauges for /metrics and the simulation summary (vLLM names in brackets):
// the gauges every engine reports (engine_gauges.h) and the twin's own counters.
struct EngineStats : EngineGauges {
  int64_t kv_blocks_total = 0;
  int64_t kv_blocks_used = 0;         // referenced by live requests
  int64_t kv_blocks_cached = 0;       // unreferenced, reusable prefix blocks
  int64_t prompt_tokens = 0;          // [vllm:prompt_tokens_total] prompt tokens of scheduled requests
  int64_t generation_tokens = 0;      // [vllm:generation_tokens_total]
  int64_t prefill_tokens_computed = 0;  // actual prefill work, recompute after preemption included
  int64_t requests_submitted = 0;
  int64_t requests_rejected = 0;
  int64_t requests_finished = 0;      // kLength
  int64_t requests_timed_out = 0;
  int64_t requests_cancelled = 0;
  int64_t steps = 0;
  int64_t spec_draft_tokens = 0;      // proposed draft tokens (speculative decoding)
  int64_t spec_accepted_tokens = 0;   // accepted draft tokens
  double busy_s = 0;                  // sum of step durations
  double kv_usage_integral_s = 0;     // integral of kv_usage over busy and idle time, up to now
};

class Engine {
 public:
  // config.kv_cache_tokens must be > 0 (the caller resolves it from the fit). The cost
  // model is shared (several replicas may use one).
  static Result<std::unique_ptr<Engine>> Create(const EngineConfig& config,
                                                std::shared_ptr<const CostModel> cost);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Adds a request that arrived at `now`. Rejected requests leave no trace but a counter.
  Admission Submit(const EngineRequest& req, Nanos now);
  // The rejections that do not depend on the engine's state (invalid counts, too long,
  // over the token budget without chunked prefill): what Submit would refuse at any time.
  // Lets a caller that delays the submission (serve's front end) answer them at once.
  RejectReason Precheck(const EngineRequest& req) const;
  // Client cancellation at `now`: frees the request's KV blocks and batch slot at once
  // (tokens of an in-flight step are dropped); no callback. False if `id` is not alive.
  bool Cancel(uint64_t id, Nanos now);
  // Time of the next step end or step start; nullopt when there is nothing to do.
  std::optional<Nanos> NextEventTime() const;
  // Processes every step end/start with time <= t, reporting to `sink`.
  void AdvanceTo(Nanos t, EngineSink& sink);

  EngineStats Stats() const;
  // Requests alive here (waiting + running): the router's "outstanding".
  int64_t Outstanding() const;
  int64_t WaitingCount() const;
  double KvUsage() const;
  const EngineConfig& config() const;

 private:
  struct Impl;
  explicit Engine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Chained block hashes for a synthetic prompt whose first `prefix_tokens` tokens are the
// shared prefix `prefix_id` (-1: none): one hash per full prefix block, salted by tenant
// unless `shared_across_tenants`. Writes into `out` (cleared first; no allocation once it
// has grown). Used by simulate; serve hashes real token ids instead.
void PrefixBlockHashes(int32_t tenant, int32_t prefix_id, int32_t prefix_tokens,
                       int32_t block_size, bool shared_across_tenants,
                       std::vector<uint64_t>& out);

// Chained block hashes for a trace request's prompt (workload::RequestSpec::block_ids):
// the prompt is the trace's blocks of `trace_block_tokens` tokens in order, cut at
// `prompt_tokens`; one hash per FULL engine block of `block_size` tokens, covering the
// chain of trace ids up to the block's last token and the length so far, so two prompts
// whose leading trace ids agree get equal hashes for every engine block inside the shared
// blocks (what the embedded engine sees from the prompt text bench builds, bench/prompt.h).
// Salted by tenant as PrefixBlockHashes. Writes into `out` (cleared first).
void TraceBlockHashes(int32_t tenant, std::span<const uint64_t> trace_ids, int32_t trace_block_tokens,
                      int32_t prompt_tokens, int32_t block_size, bool shared_across_tenants,
                      std::vector<uint64_t>& out);

}  // namespace infereng::twin
