// Engine implementation: the per-replica scheduler (vLLM V1-like), step timing and
// paged-KV bookkeeping. See engine.h for the model; kv_cache.h for the block pool.
// Engine itself forwards to the EngineCore engine.scheduler chose: PagedEngine here, or
// llama.cpp's slot engine (slot_engine.cc).
//
// Hot path: StartStep/FinishStep run once per engine iteration and touch every running
// sequence; they use only preallocated vectors (batch_, running_, scratch), so a long
// simulation does not allocate per step. Per-request state lives in a slot pool whose
// vectors keep their capacity when a slot is reused.
#include "twin/engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "twin/engine_core.h"
#include "twin/kv_cache.h"

namespace infereng::twin {

namespace {

enum class SeqState : uint8_t { kFree, kWaiting, kRunning };

// Hot fields (touched by every step) first, in one cache line.
struct Seq {
  int32_t computed = 0;          // tokens whose KV is in the cache
  int32_t generated = 0;         // output tokens emitted
  int32_t prompt = 0, output = 0;
  int32_t private_blocks = 0;
  int32_t cached_blocks = 0;     // == cached_slots.size()
  int32_t num_hashes = 0;        // == hashes.size()
  uint32_t gen = 0;              // bumped when the slot is freed (stale references die)
  SeqState state = SeqState::kFree;
  bool scheduled_once = false;
  bool emitted_any = false;
  bool caching_stopped = false;  // a duplicate block was found: stop registering
  uint64_t id = 0, tag = 0;
  double spec_acc = 0;           // fractional accumulator of speculative tokens
  int32_t hit_tokens = 0;        // prefix-cache hit of the current residency
  int32_t preloaded = 0;         // prompt KV that arrived with the request (until preempted)
  Nanos t_arrival = 0;
  // Vision: image tokens at [image_begin, image_end) and their encoder's FLOPs, charged
  // once per residency (`encoded`; EngineRequest has the rule).
  int32_t image_begin = 0, image_end = 0;
  double encoder_flops = 0;
  bool encoded = false;
  std::vector<uint64_t> hashes;
  std::vector<int32_t> cached_slots;  // leading blocks that are cached (shared) blocks

  int32_t Known() const { return prompt + generated; }
  int32_t Blocks() const { return cached_blocks + private_blocks; }
  bool Decoding() const { return generated > 0 && computed + 1 == Known(); }
};

struct BatchEntry {
  int32_t slot;
  uint32_t gen;
  int32_t tokens;
  bool decode;
};

struct SlotRef {
  int32_t slot;
  uint32_t gen;
  Nanos deadline;
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

class PagedEngine final : public EngineCore {
 public:
  EngineConfig cfg;
  std::shared_ptr<const CostModel> cost;
  KvBlockPool pool;
  int32_t bs;
  int64_t watermark_blocks;
  double spec_expected;

  std::vector<Seq> seqs;
  std::vector<int32_t> free_slots;
  std::unordered_map<uint64_t, int32_t> by_id;
  std::deque<SlotRef> waiting;      // FIFO; preempted requests go to the front
  std::deque<SlotRef> deadlines;    // submit order == deadline order
  std::vector<int32_t> running;     // scheduling order; victims come from the back
  std::vector<int32_t> scratch;
  std::vector<BatchEntry> batch;
  int64_t live_waiting = 0;
  int64_t waiting_tokens = 0;

  bool in_flight = false;
  bool stalled = false;   // a step could not be formed; wait for Submit/Cancel
  Nanos step_end = 0;
  Nanos idle_since = 0;   // end of the last step: the earliest start of the next one
  Nanos last_t = 0;       // latest time seen
  Nanos usage_t = 0;      // kv usage integrated up to here
  EngineStats st;

  PagedEngine(const EngineConfig& c, std::shared_ptr<const CostModel> m)
      : cfg(c), cost(std::move(m)), pool(c.kv_cache_tokens / c.block_size), bs(c.block_size) {
    watermark_blocks = static_cast<int64_t>(std::floor(cfg.watermark * static_cast<double>(pool.total())));
    spec_expected = cfg.SpecTokensPerRound();
    running.reserve(static_cast<size_t>(cfg.max_num_seqs));
    batch.reserve(static_cast<size_t>(cfg.max_num_seqs));
    st.kv_blocks_total = pool.total();
    st.max_model_len = cfg.max_model_len > 0 ? cfg.max_model_len : pool.total() * bs;
  }

  void Touch(Nanos t) {
    if (t > usage_t) {
      st.kv_usage_integral_s += pool.Usage() * NanosToSeconds(t - usage_t);
      usage_t = t;
    }
    if (t > last_t) last_t = t;
  }

  Seq& S(int32_t slot) { return seqs[static_cast<size_t>(slot)]; }

  void FreeKv(Seq& s) {
    // Tail blocks first, so LRU eviction takes a chain's tail before its head (as vLLM
    // does): evicting a head block would strand every block after it.
    for (auto it = s.cached_slots.rbegin(); it != s.cached_slots.rend(); ++it) pool.Unref(*it);
    s.cached_slots.clear();
    s.cached_blocks = 0;
    pool.ReleasePrivate(s.private_blocks);
    s.private_blocks = 0;
    s.computed = 0;
    s.hit_tokens = 0;
    s.caching_stopped = false;
    s.encoded = false;  // a recompute re-runs the vision encoder
  }

  void ReleaseSlot(int32_t slot) {
    Seq& s = S(slot);
    FreeKv(s);
    by_id.erase(s.id);
    s.state = SeqState::kFree;
    ++s.gen;
    free_slots.push_back(slot);
  }

  void DropDeadWaitingFront() {
    while (!waiting.empty() && S(waiting.front().slot).gen != waiting.front().gen) waiting.pop_front();
  }

  void RemoveWaiting(Seq& s) {  // bookkeeping only: the deque entry dies lazily
    --live_waiting;
    waiting_tokens -= s.prompt;
  }

  void RemoveRunning(int32_t slot) {
    auto it = std::find(running.begin(), running.end(), slot);
    if (it != running.end()) running.erase(it);
  }

  // Grows `s` to hold `tokens` tokens of KV. False if blocks ran out.
  bool Grow(Seq& s, int64_t tokens) {
    if (tokens <= int64_t{s.Blocks()} * bs) return true;  // the common case: no division
    const int64_t need = CeilDiv(tokens, bs) - s.Blocks();
    if (need <= 0) return true;
    if (!pool.Allocate(need)) return false;
    s.private_blocks += static_cast<int32_t>(need);
    return true;
  }

  // Caches the full blocks of `s` up to `tokens` (capped at its known tokens) when they are
  // scheduled, before the step computes them: vLLM V1's allocate_slots caches
  // min(computed + new, num_tokens) at allocation, so a request admitted later in the same
  // step (a parallel call, a burst with one system prompt) already hits them.
  void RegisterFullBlocks(Seq& s, int64_t tokens) {
    if (!cfg.enable_prefix_caching) return;
    tokens = std::min<int64_t>(tokens, s.Known());
    while (!s.caching_stopped && s.cached_blocks < s.num_hashes &&
           static_cast<int64_t>(s.cached_blocks + 1) * bs <= tokens) {
      const int32_t slot = pool.Register(s.hashes[static_cast<size_t>(s.cached_blocks)]);
      if (slot < 0) {
        s.caching_stopped = true;
        break;
      }
      s.cached_slots.push_back(slot);
      ++s.cached_blocks;
      --s.private_blocks;
    }
  }

  void Preempt(int32_t slot, Nanos t, EngineSink& sink) {
    Seq& s = S(slot);
    FreeKv(s);
    s.preloaded = 0;  // the transferred KV is gone: recompute the prompt here
    s.state = SeqState::kWaiting;
    waiting.push_front(SlotRef{slot, s.gen, 0});
    ++live_waiting;
    waiting_tokens += s.prompt;
    ++st.preemptions;
    sink.OnPreempted(s.id, s.tag, t);
  }

  void ExpireTimeouts(Nanos t, EngineSink& sink) {
    while (!deadlines.empty() && deadlines.front().deadline <= t) {
      SlotRef ref = deadlines.front();
      deadlines.pop_front();
      Seq& s = S(ref.slot);
      if (s.gen != ref.gen || s.state == SeqState::kFree) continue;
      if (s.state == SeqState::kWaiting) RemoveWaiting(s);
      else RemoveRunning(ref.slot);
      const uint64_t id = s.id, tag = s.tag;
      ReleaseSlot(ref.slot);
      ++st.requests_timed_out;
      sink.OnFinished(id, tag, t, FinishReason::kTimeout);
    }
    DropDeadWaitingFront();
  }

  // Which running sequences a ScheduleRunning pass takes.
  enum class RunningPass { kAll, kPartialPrefillsOnly };

  // Schedules running sequences (decode-first order). Returns true if any was preempted.
  bool ScheduleRunning(Nanos t, int64_t& budget, EngineSink& sink, RunningPass pass = RunningPass::kAll) {
    bool preempted = false;
    const int32_t spec = cfg.spec_tokens;
    for (size_t i = 0; i < running.size(); ++i) {
      const int32_t slot = running[i];
      Seq& s = S(slot);
      const bool decode = s.Decoding();
      if (decode && pass == RunningPass::kPartialPrefillsOnly) continue;
      int64_t tokens;
      if (decode) {
        tokens = 1 + spec;
      } else {
        tokens = s.Known() - s.computed;
        if (cfg.max_chunk_tokens > 0) tokens = std::min<int64_t>(tokens, cfg.max_chunk_tokens);
        tokens = std::min(tokens, budget);
      }
      if (tokens <= 0 || tokens > budget) break;
      // vLLM V1: free blocks by preempting the lowest-priority (last) running request.
      bool self_preempted = false;
      while (!Grow(s, s.computed + tokens)) {
        const int32_t victim = running.back();
        running.pop_back();
        Preempt(victim, t, sink);
        preempted = true;
        if (victim == slot) {
          self_preempted = true;
          break;
        }
      }
      if (self_preempted) break;
      batch.push_back(BatchEntry{slot, s.gen, static_cast<int32_t>(tokens), decode});
      RegisterFullBlocks(s, s.computed + tokens);
      budget -= tokens;
    }
    return preempted;
  }

  // Blocks a sequence still needs to hold its whole prompt and output.
  int64_t RemainingNeed(const Seq& s) const {
    return std::max<int64_t>(0, CeilDiv(static_cast<int64_t>(s.prompt) + s.output, bs) - s.Blocks());
  }

  // Guaranteed-no-evict: blocks the running requests will still take before they finish.
  int64_t OutstandingNeed() {
    int64_t need = 0;
    for (int32_t slot : running) need += RemainingNeed(S(slot));
    return need;
  }

  // Admits waiting requests while budget, sequence slots and KV allow. Returns count.
  int AdmitWaiting(Nanos t, int64_t& budget, EngineSink& sink) {
    int admitted = 0;
    const bool no_evict = cfg.capacity == CapacityPolicy::kGuaranteedNoEvict;
    int64_t outstanding = no_evict && !waiting.empty() ? OutstandingNeed() : 0;
    while (budget > 0 && static_cast<int32_t>(running.size()) < cfg.max_num_seqs) {
      DropDeadWaitingFront();
      if (waiting.empty()) break;
      const int32_t slot = waiting.front().slot;
      Seq& s = S(slot);
      if (s.t_arrival > t) break;
      // Prefix-cache lookup (at least one prompt token is always computed).
      int32_t hit_blocks = 0;
      if (cfg.enable_prefix_caching && !s.hashes.empty()) {
        const int32_t max_blocks = static_cast<int32_t>(std::min<int64_t>(
            static_cast<int64_t>(s.hashes.size()), (s.Known() - 1) / bs));
        hit_blocks = pool.Match(s.hashes, max_blocks, s.cached_slots);
        s.cached_blocks = hit_blocks;
      }
      s.computed = std::max(hit_blocks * bs, s.preloaded);
      int64_t tokens = s.Known() - s.computed;
      if (cfg.max_chunk_tokens > 0 && cfg.enable_chunked_prefill) {
        tokens = std::min<int64_t>(tokens, cfg.max_chunk_tokens);
      }
      const bool alone = running.empty() && batch.empty();
      if (tokens > budget) {
        // Without chunking a prompt must fit whole, except a recompute that is alone.
        if (cfg.enable_chunked_prefill || alone) tokens = budget;
        else {
          FreeKv(s);
          break;
        }
      }
      const int64_t need = CeilDiv(s.computed + tokens, bs) - s.Blocks();
      const int64_t reserve = alone ? 0 : watermark_blocks;
      // No-evict: the whole lifetime's blocks must fit beside what running requests still need.
      const int64_t lifetime = no_evict ? RemainingNeed(s) : 0;
      if (no_evict && pool.Available() - outstanding < lifetime) {
        FreeKv(s);
        break;
      }
      if (pool.Available() - need < reserve || !Grow(s, s.computed + tokens)) {
        FreeKv(s);
        break;
      }
      outstanding += lifetime - need;  // need is taken now; the rest stays owed
      waiting.pop_front();
      RemoveWaiting(s);
      s.state = SeqState::kRunning;
      s.hit_tokens = hit_blocks * bs;
      running.push_back(slot);
      if (s.preloaded == 0) {  // a transferred prompt is not a prefix-cache lookup
        st.prefix_queries_tokens += s.prompt;
        st.prefix_hits_tokens += s.hit_tokens;
      }
      if (!s.scheduled_once) {
        s.scheduled_once = true;
        st.prompt_tokens += s.prompt;
        sink.OnScheduled(s.id, s.tag, t);
      }
      batch.push_back(BatchEntry{slot, s.gen, static_cast<int32_t>(tokens), false});
      RegisterFullBlocks(s, s.computed + tokens);
      budget -= tokens;
      ++admitted;
    }
    return admitted;
  }

  // Forms a batch at t and fixes its end time. False if there is nothing to run.
  bool StartStep(Nanos t, EngineSink& sink) {
    Touch(t);
    ExpireTimeouts(t, sink);
    batch.clear();
    int64_t budget = cfg.max_num_batched_tokens;
    if (cfg.policy == SchedulingPolicy::kPrefillFirst) {
      // Continue partial prefills (a prompt longer than the step budget, cut because it
      // ran alone), then admit; a step with any prefill runs prefills only, and decodes
      // run only when no prefill is possible.
      ScheduleRunning(t, budget, sink, RunningPass::kPartialPrefillsOnly);
      AdmitWaiting(t, budget, sink);
      if (batch.empty()) ScheduleRunning(t, budget, sink);
    } else {
      const bool preempted = ScheduleRunning(t, budget, sink);
      if (!preempted || running.empty()) AdmitWaiting(t, budget, sink);
    }
    if (batch.empty()) return false;

    StepShape shape{.prefill_attn_pairs = 0};
    for (const BatchEntry& b : batch) {
      Seq& s = S(b.slot);
      AddToStep(shape, b.decode, b.tokens, s.computed);
      if (!b.decode && s.image_end > 0 && !s.encoded && s.computed + b.tokens > s.image_begin) {
        s.encoded = true;  // cached images (computed past them) need no encoder
        if (s.computed < s.image_end) shape.encoder_flops += s.encoder_flops;
      }
    }
    shape.decode_tokens_per_seq = 1 + cfg.spec_tokens;
    double seconds = cost->StepSeconds(shape) + cfg.HostSeconds(int64_t{shape.decode_seqs} + shape.prefill_seqs);
    if (cfg.spec_tokens > 0 && shape.decode_seqs > 0) {
      double draft = cfg.spec_draft_cost > 0
                         ? cfg.spec_draft_cost * cost->StepSeconds(StepShape{
                                                     .decode_seqs = shape.decode_seqs,
                                                     .decode_context = shape.decode_context})
                         : cost->DraftStepSeconds(shape.decode_seqs, shape.decode_context);
      seconds += cfg.spec_tokens * draft;
    }
    const Nanos dur = StepNanos(seconds);
    step_end = t + dur;
    in_flight = true;
    ++st.steps;
    st.busy_s += NanosToSeconds(dur);
    return true;
  }

  void FinishStep(EngineSink& sink) {
    const Nanos t = step_end;
    in_flight = false;
    idle_since = t;
    Touch(t);
    int64_t finished = 0;
    for (const BatchEntry& b : batch) {
      Seq& s = S(b.slot);
      if (s.gen != b.gen || s.state != SeqState::kRunning) continue;  // cancelled/preempted
      int32_t emit = 0;
      if (b.decode) {
        emit = 1;
        if (cfg.spec_tokens > 0) {
          s.spec_acc += spec_expected;
          emit = static_cast<int32_t>(s.spec_acc);
          s.spec_acc -= emit;
          st.spec_draft_tokens += cfg.spec_tokens;
        }
        emit = std::min(emit, s.output - s.generated);
        if (cfg.spec_tokens > 0) st.spec_accepted_tokens += emit - 1;
        s.computed += emit;
      } else {
        s.computed += b.tokens;
        st.prefill_tokens_computed += b.tokens;
        if (s.computed == s.Known()) emit = 1;
      }
      if (emit == 0) continue;
      s.generated += emit;
      st.generation_tokens += emit;
      const int32_t cached = s.emitted_any ? 0 : s.hit_tokens;
      s.emitted_any = true;
      sink.OnTokens(s.id, s.tag, t, emit, cached);
      if (s.generated >= s.output) {
        const uint64_t id = s.id, tag = s.tag;
        s.state = SeqState::kFree;  // removed from running below
        ++finished;
        ++st.requests_finished;
        sink.OnFinished(id, tag, t, FinishReason::kLength);
      }
    }
    if (finished > 0) {
      idle_since = t + cfg.AfterFinishes(finished);  // engine_config.h: host work after a finish
      scratch.clear();
      for (int32_t slot : running) {
        if (S(slot).state == SeqState::kRunning) scratch.push_back(slot);
        else ReleaseSlot(slot);
      }
      running.swap(scratch);
    }
  }

  bool HasWork() const { return !running.empty() || live_waiting > 0; }

  Admission Submit(const EngineRequest& req, Nanos now) override;
  RejectReason Precheck(const EngineRequest& req) const override;
  bool Cancel(uint64_t id, Nanos now) override;
  std::optional<Nanos> NextEventTime() const override;
  void AdvanceTo(Nanos t, EngineSink& sink) override;
  EngineStats Stats() const override;
  int64_t Outstanding() const override { return static_cast<int64_t>(running.size()) + live_waiting; }
  int64_t WaitingCount() const override { return live_waiting; }
  double KvUsage() const override { return pool.Usage(); }
  const EngineConfig& config() const override { return cfg; }
};

// The public type holds whichever scheduler engine.scheduler chose.
struct Engine::Impl {
  std::unique_ptr<EngineCore> core;
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

Result<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config,
                                               std::shared_ptr<const CostModel> cost) {
  INFERENG_RETURN_IF_ERROR(ValidateEngineConfig(config));
  if (cost == nullptr) return Status::InvalidArgument("engine needs a cost model");
  if (config.max_num_batched_tokens < 1 + config.spec_tokens) {
    return Status::InvalidArgument("engine.max_num_batched_tokens must be >= 1 + engine.spec_tokens");
  }
  auto impl = std::make_unique<Impl>();
  if (config.scheduler == EngineScheduler::kLlamaCpp) impl->core = MakeSlotEngine(config, std::move(cost));
  else impl->core = std::make_unique<PagedEngine>(config, std::move(cost));
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Admission Engine::Submit(const EngineRequest& req, Nanos now) { return impl_->core->Submit(req, now); }
RejectReason Engine::Precheck(const EngineRequest& req) const { return impl_->core->Precheck(req); }
bool Engine::Cancel(uint64_t id, Nanos now) { return impl_->core->Cancel(id, now); }
std::optional<Nanos> Engine::NextEventTime() const { return impl_->core->NextEventTime(); }
void Engine::AdvanceTo(Nanos t, EngineSink& sink) { impl_->core->AdvanceTo(t, sink); }
EngineStats Engine::Stats() const { return impl_->core->Stats(); }
int64_t Engine::Outstanding() const { return impl_->core->Outstanding(); }
int64_t Engine::WaitingCount() const { return impl_->core->WaitingCount(); }
double Engine::KvUsage() const { return impl_->core->KvUsage(); }
const EngineConfig& Engine::config() const { return impl_->core->config(); }

RejectReason PagedEngine::Precheck(const EngineRequest& req) const {
  const PagedEngine& m = *this;
  if (req.prompt_tokens < 1 || req.output_tokens < 1) return RejectReason::kInvalid;
  const int64_t total = int64_t{req.prompt_tokens} + req.output_tokens;
  if (total > m.st.max_model_len || CeilDiv(total + m.cfg.spec_tokens, m.bs) > m.pool.total()) {
    return RejectReason::kTooLong;
  }
  if (!m.cfg.enable_chunked_prefill && req.prompt_tokens > m.cfg.max_num_batched_tokens) {
    return RejectReason::kPromptOverBudget;
  }
  return RejectReason::kNone;
}

Admission PagedEngine::Submit(const EngineRequest& req, Nanos now) {
  PagedEngine& m = *this;
  m.Touch(now);
  ++m.st.requests_submitted;
  auto reject = [&](RejectReason r) {
    ++m.st.requests_rejected;
    return Admission{r};
  };
  if (m.by_id.count(req.id)) return reject(RejectReason::kInvalid);
  if (const RejectReason r = Precheck(req); r != RejectReason::kNone) return reject(r);
  if (m.cfg.max_waiting_requests > 0 && m.live_waiting >= m.cfg.max_waiting_requests) {
    return reject(RejectReason::kWaitingRequestsFull);
  }
  if (m.cfg.max_waiting_tokens > 0 && m.waiting_tokens + req.prompt_tokens > m.cfg.max_waiting_tokens) {
    return reject(RejectReason::kWaitingTokensFull);
  }
  int32_t slot;
  if (!m.free_slots.empty()) {
    slot = m.free_slots.back();
    m.free_slots.pop_back();
  } else {
    slot = static_cast<int32_t>(m.seqs.size());
    m.seqs.emplace_back();
  }
  Seq& s = m.S(slot);
  s.id = req.id;
  s.tag = req.tag;
  s.prompt = req.prompt_tokens;
  s.output = req.output_tokens;
  s.t_arrival = now;
  s.state = SeqState::kWaiting;
  s.scheduled_once = s.emitted_any = s.caching_stopped = false;
  s.computed = s.generated = s.private_blocks = s.hit_tokens = 0;
  s.preloaded = std::clamp(req.preloaded_tokens, 0, s.prompt - 1);
  s.spec_acc = 0;
  s.image_begin = std::clamp(req.image_begin, 0, s.prompt);
  s.image_end = std::clamp(req.image_end, s.image_begin, s.prompt);
  s.encoder_flops = std::max(0.0, req.encoder_flops);
  s.encoded = false;
  s.hashes.assign(req.block_hashes.begin(), req.block_hashes.end());
  s.cached_slots.clear();
  s.cached_blocks = 0;
  s.num_hashes = static_cast<int32_t>(s.hashes.size());
  m.by_id.emplace(req.id, slot);
  m.stalled = false;
  m.waiting.push_back(SlotRef{slot, s.gen, 0});
  ++m.live_waiting;
  m.waiting_tokens += s.prompt;
  if (m.cfg.request_timeout_s > 0) {
    m.deadlines.push_back(SlotRef{slot, s.gen, now + SecondsToNanos(m.cfg.request_timeout_s)});
  }
  return Admission{};
}

bool PagedEngine::Cancel(uint64_t id, Nanos now) {
  PagedEngine& m = *this;
  auto it = m.by_id.find(id);
  if (it == m.by_id.end()) return false;
  m.Touch(now);
  const int32_t slot = it->second;
  Seq& s = m.S(slot);
  if (s.state == SeqState::kWaiting) m.RemoveWaiting(s);
  else m.RemoveRunning(slot);
  m.ReleaseSlot(slot);
  m.DropDeadWaitingFront();
  m.stalled = false;
  ++m.st.requests_cancelled;
  return true;
}

std::optional<Nanos> PagedEngine::NextEventTime() const {
  const PagedEngine& m = *this;
  if (m.in_flight) return m.step_end;
  if (m.stalled) return std::nullopt;
  if (!m.running.empty()) return m.idle_since;
  if (m.live_waiting > 0 && !m.waiting.empty()) {
    return m.cfg.BatchAt(m.idle_since, m.seqs[static_cast<size_t>(m.waiting.front().slot)].t_arrival);
  }
  return std::nullopt;
}

void PagedEngine::AdvanceTo(Nanos t, EngineSink& sink) {
  PagedEngine& m = *this;
  for (;;) {
    if (m.in_flight) {
      if (m.step_end > t) break;
      m.FinishStep(sink);
      continue;
    }
    if (!m.HasWork()) break;
    const std::optional<Nanos> next = NextEventTime();
    if (!next || *next > t) break;
    if (!m.StartStep(*next, sink)) {
      // Only when the head of the queue arrives after *next (or a bug): never spin.
      m.stalled = !NextEventTime() || *NextEventTime() <= *next;
      break;
    }
  }
  m.Touch(t);
}

EngineStats PagedEngine::Stats() const {
  const PagedEngine& m = *this;
  EngineStats s = m.st;
  s.running = static_cast<int64_t>(m.running.size());
  s.waiting = m.live_waiting;
  s.kv_usage = m.pool.Usage();
  s.kv_blocks_used = m.pool.Used();
  s.kv_blocks_cached = m.pool.evictable();
  return s;
}

}  // namespace infereng::twin
