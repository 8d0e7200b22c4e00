#include "twin/engine.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace infereng::twin {
namespace {

struct Event {
  char kind;  // 'S' scheduled, 'T' tokens, 'F' finished, 'P' preempted
  uint64_t id;
  Nanos t;
  int32_t count = 0;
  int32_t cached = 0;
  FinishReason reason = FinishReason::kLength;
};

class RecordingSink : public EngineSink {
 public:
  void OnScheduled(uint64_t id, uint64_t, Nanos t) override { events.push_back({'S', id, t}); }
  void OnTokens(uint64_t id, uint64_t, Nanos t, int32_t count, int32_t cached) override {
    events.push_back({'T', id, t, count, cached});
    tokens[id] += count;
  }
  void OnFinished(uint64_t id, uint64_t, Nanos t, FinishReason reason) override {
    events.push_back({'F', id, t, 0, 0, reason});
    finished[id] = t;
    reasons[id] = reason;
  }
  void OnPreempted(uint64_t id, uint64_t, Nanos t) override { events.push_back({'P', id, t}); }

  std::vector<Event> events;
  std::map<uint64_t, int64_t> tokens;
  std::map<uint64_t, Nanos> finished;
  std::map<uint64_t, FinishReason> reasons;
};

std::shared_ptr<const CostModel> Linear(double fixed_s = 0.005, double per_prefill_token_s = 50e-6) {
  return std::make_shared<LinearCostModel>(
      LinearCostOptions{.fixed_s = fixed_s, .per_prefill_token_s = per_prefill_token_s});
}

EngineConfig Cfg(int64_t kv_tokens = 1 << 20) {
  EngineConfig c;
  c.kv_cache_tokens = kv_tokens;
  return c;
}

std::unique_ptr<Engine> Make(const EngineConfig& c, std::shared_ptr<const CostModel> cost = Linear()) {
  auto e = Engine::Create(c, std::move(cost));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

void RunToIdle(Engine& e, EngineSink& sink) {
  while (auto t = e.NextEventTime()) e.AdvanceTo(*t, sink);
}

EngineRequest Req(uint64_t id, int32_t prompt, int32_t output) {
  return EngineRequest{.id = id, .tag = id, .prompt_tokens = prompt, .output_tokens = output};
}

// A disaggregated decode replica: the prompt's KV arrived with the request, so its first
// step computes only the last prompt token (5 ms + 1 x 50 us) and samples the first output
// token; the blocks for the whole prompt are held all the same. Preempted, the transferred
// KV is gone and the prompt is recomputed here.
TEST(EngineTest, PreloadedPromptComputesOnlyTheLastTokenAndIsRecomputedAfterPreemption) {
  auto e = Make(Cfg());
  RecordingSink sink;
  EngineRequest r = Req(1, 100, 3);
  r.preloaded_tokens = 100;  // capped at prompt - 1
  ASSERT_TRUE(e->Submit(r, 0).ok());
  e->AdvanceTo(0, sink);
  EXPECT_EQ(e->Stats().kv_blocks_used, 7);  // ceil(100 / 16): the whole prompt is held
  RunToIdle(*e, sink);
  std::vector<Nanos> token_times;
  for (const Event& ev : sink.events) if (ev.kind == 'T') token_times.push_back(ev.t);
  EXPECT_EQ(token_times, (std::vector<Nanos>{5'050'000, 10'050'000, 15'050'000}));
  EXPECT_EQ(e->Stats().prefill_tokens_computed, 1);
  EXPECT_EQ(e->Stats().prefix_queries_tokens, 0);  // not a prefix-cache lookup

  // 4 blocks of KV: two requests of 32 preloaded tokens + 31 output tokens each cannot both
  // finish, so the newer one is preempted and recomputes its whole prompt (32 tokens).
  auto small = Make(Cfg(64));
  RecordingSink s2;
  EngineRequest a = Req(10, 32, 31), b = Req(11, 32, 31);
  a.preloaded_tokens = b.preloaded_tokens = 32;
  ASSERT_TRUE(small->Submit(a, 0).ok());
  ASSERT_TRUE(small->Submit(b, 0).ok());
  RunToIdle(*small, s2);
  ASSERT_EQ(s2.tokens[10], 31);
  ASSERT_EQ(s2.tokens[11], 31);
  EXPECT_GE(small->Stats().preemptions, 1);
  EXPECT_GE(small->Stats().prefill_tokens_computed, 2 + 32);  // two last tokens + one recompute
}

TEST(EngineTest, SingleRequestTimingFollowsCostModel) {
  auto e = Make(Cfg());
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 3), 0).ok());
  ASSERT_EQ(e->NextEventTime(), Nanos{0});
  RunToIdle(*e, sink);
  // Prefill: 5 ms + 100 * 50 us = 10 ms; then two 5 ms decode steps.
  std::vector<Nanos> token_times;
  for (const Event& ev : sink.events) if (ev.kind == 'T') token_times.push_back(ev.t);
  EXPECT_EQ(token_times, (std::vector<Nanos>{10 * kNanosPerMilli, 15 * kNanosPerMilli, 20 * kNanosPerMilli}));
  EXPECT_EQ(sink.finished[1], 20 * kNanosPerMilli);
  EXPECT_EQ(e->Stats().generation_tokens, 3);
  EXPECT_EQ(e->Stats().kv_blocks_used, 0);
  EXPECT_FALSE(e->NextEventTime().has_value());
}

// Engine host costs (engine.step_overhead, engine.seq_overhead): every step pays the fixed
// part plus the per-sequence part for each sequence it runs, prefilling or decoding.
TEST(EngineTest, HostCostsArePerStepPlusPerSequence) {
  EngineConfig c = Cfg();
  c.step_overhead_s = 1e-3;
  c.seq_overhead_s = 200e-6;
  auto e = Make(c);
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 3), 0).ok());
  ASSERT_TRUE(e->Submit(Req(2, 100, 2), 0).ok());
  RunToIdle(*e, sink);
  // Step 1: both prompts (5 ms + 200 x 50 us = 15 ms) + 1 ms + 2 x 0.2 ms = 16.4 ms.
  // Step 2: two decodes, 5 + 1 + 0.4 = 6.4 ms (22.8). Step 3: one decode, 5 + 1 + 0.2 (29).
  std::map<uint64_t, std::vector<Nanos>> times;
  for (const Event& ev : sink.events) if (ev.kind == 'T') times[ev.id].push_back(ev.t);
  EXPECT_EQ(times[1], (std::vector<Nanos>{16'400'000, 22'800'000, 29'000'000}));
  EXPECT_EQ(times[2], (std::vector<Nanos>{16'400'000, 22'800'000}));
}

TEST(EngineTest, RequestArrivingMidStepJoinsNextStep) {
  auto e = Make(Cfg());
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 5), 0).ok());
  e->AdvanceTo(1 * kNanosPerMilli, sink);  // step 0..10 ms in flight
  ASSERT_TRUE(e->Submit(Req(2, 100, 1), 1 * kNanosPerMilli).ok());
  RunToIdle(*e, sink);
  // Request 2 is scheduled at 10 ms (mixed step: 1 decode + 100 prefill tokens).
  for (const Event& ev : sink.events) {
    if (ev.kind == 'S' && ev.id == 2) {
      EXPECT_EQ(ev.t, 10 * kNanosPerMilli);
    }
  }
  EXPECT_EQ(sink.finished[2], 20 * kNanosPerMilli);
}

// engine.admission_window: after a step that finished a request, and when work wakes an idle
// engine, the batch is formed 1 ms later and takes what arrived meanwhile; a step after one
// in which nothing finished is formed at once, as without the window.
TEST(EngineTest, AdmissionWindowDelaysTheBatchAfterAFinishOrAnIdleWakeOnly) {
  constexpr Nanos kMs = kNanosPerMilli;
  auto run = [](double window_s) {
    EngineConfig c = Cfg();
    c.admission_window_s = window_s;
    auto e = Make(c);
    RecordingSink sink;
    EXPECT_TRUE(e->Submit(Req(1, 100, 2), 2 * kMs).ok());   // wakes the idle engine
    e->AdvanceTo(2'500'000, sink);
    EXPECT_TRUE(e->Submit(Req(2, 100, 3), 2'500'000).ok());  // 0.5 ms later
    e->AdvanceTo(18'500'000, sink);
    EXPECT_TRUE(e->Submit(Req(3, 100, 1), 18'500'000).ok());  // just after a step nobody ended in
    e->AdvanceTo(23'500'000, sink);
    EXPECT_TRUE(e->Submit(Req(4, 100, 1), 23'500'000).ok());  // just after request 1 finished
    RunToIdle(*e, sink);
    std::map<uint64_t, Nanos> sched;
    std::map<uint64_t, std::vector<Nanos>> times;
    for (const Event& ev : sink.events) {
      if (ev.kind == 'S') sched[ev.id] = ev.t;
      if (ev.kind == 'T') times[ev.id].push_back(ev.t);
    }
    return std::make_pair(sched, times);
  };
  // Window 1 ms. Requests 1 and 2 share the first batch at 3 ms (2 ms + 1 ms): 5 ms + 200 x
  // 50 us = 15 ms, tokens at 18. Nobody finished, so the next step (two decodes) is formed at
  // once, 18..23, and request 3 (18.5 ms) waits for it. Request 1 ends at 23, so the step
  // after is formed at 24, with request 4 (23.5 ms) as well: 5 ms + 200 x 50 us, tokens at 39.
  auto [sched, times] = run(1e-3);
  EXPECT_EQ(sched[1], 3 * kMs);
  EXPECT_EQ(sched[2], 3 * kMs);
  EXPECT_EQ(times[1], (std::vector<Nanos>{18 * kMs, 23 * kMs}));
  EXPECT_EQ(sched[3], 24 * kMs);
  EXPECT_EQ(sched[4], 24 * kMs);
  EXPECT_EQ(times[2], (std::vector<Nanos>{18 * kMs, 23 * kMs, 39 * kMs}));
  EXPECT_EQ(times[3], (std::vector<Nanos>{39 * kMs}));
  EXPECT_EQ(times[4], (std::vector<Nanos>{39 * kMs}));

  // Without it: request 1 runs alone from 2 ms (12); request 2 joins at 12 (22); request 3
  // (18.5 ms) at 22; request 4 (23.5 ms) waits for that step (32).
  auto [sched0, times0] = run(0);
  EXPECT_EQ(sched0[1], 2 * kMs);
  EXPECT_EQ(sched0[2], 12 * kMs);
  EXPECT_EQ(sched0[3], 22 * kMs);
  EXPECT_EQ(sched0[4], 32 * kMs);
}

TEST(EngineTest, ChunkedPrefillSplitsLongPrompts) {
  EngineConfig c = Cfg();
  c.max_num_batched_tokens = 512;
  auto e = Make(c);
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 1200, 1), 0).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(e->Stats().steps, 3);  // 512 + 512 + 176
  EXPECT_EQ(e->Stats().prefill_tokens_computed, 1200);

  c.enable_chunked_prefill = false;
  auto e2 = Make(c);
  EXPECT_EQ(e2->Submit(Req(1, 1200, 1), 0).reason, RejectReason::kPromptOverBudget);
}

// prefill_first continues a prefill already in progress before it admits a new one (the
// scheduler used to admit first, leaving the earlier request's prompt half-computed while
// later arrivals overtook it).
TEST(EngineTest, PrefillFirstFinishesAPartialPrefillBeforeAdmitting) {
  EngineConfig c = Cfg();
  c.max_num_batched_tokens = 512;
  c.policy = SchedulingPolicy::kPrefillFirst;
  auto e = Make(c);
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 1200, 2), 0).ok());
  e->AdvanceTo(1 * kNanosPerMilli, sink);  // step 1: 512 of request 1's 1200 prompt tokens
  ASSERT_TRUE(e->Submit(Req(2, 400, 1), 1 * kNanosPerMilli).ok());
  RunToIdle(*e, sink);
  std::map<uint64_t, Nanos> first_token;
  for (const Event& ev : sink.events) {
    if (ev.kind == 'T' && !first_token.count(ev.id)) first_token[ev.id] = ev.t;
  }
  ASSERT_EQ(first_token.size(), 2u);
  EXPECT_LT(first_token[1], first_token[2]) << "request 2 was admitted ahead of request 1's remaining prefill";
  EXPECT_EQ(e->Stats().prefill_tokens_computed, 1600);
}

// Two requests whose lifetimes (prompt + output) do not fit the cache together: vLLM-style
// max_utilization admits both and preempts one when decode runs out of blocks;
// guaranteed_no_evict (TensorRT-LLM's default) holds the second back until the first
// finishes, and never preempts.
TEST(EngineTest, GuaranteedNoEvictNeverPreempts) {
  EngineConfig c = Cfg(1024);  // 64 blocks of 16
  c.block_size = 16;
  c.watermark = 0;
  auto run = [&](CapacityPolicy policy, RecordingSink& sink) {
    c.capacity = policy;
    auto e = Make(c);
    EXPECT_TRUE(e->Submit(Req(1, 100, 500), 0).ok());  // 600 tokens: 38 blocks
    EXPECT_TRUE(e->Submit(Req(2, 100, 500), 0).ok());
    RunToIdle(*e, sink);
    EXPECT_EQ(sink.tokens[1], 500);
    EXPECT_EQ(sink.tokens[2], 500);
    return e->Stats().preemptions;
  };
  RecordingSink greedy, safe;
  EXPECT_GT(run(CapacityPolicy::kMaxUtilization, greedy), 0);
  EXPECT_EQ(run(CapacityPolicy::kGuaranteedNoEvict, safe), 0);
  Nanos scheduled2 = -1;
  for (const Event& ev : safe.events) {
    if (ev.kind == 'S' && ev.id == 2) scheduled2 = ev.t;
  }
  EXPECT_GE(scheduled2, safe.finished[1]) << "request 2 started before request 1 released its blocks";

  TwinSettings t;
  EXPECT_TRUE(ApplyTwinSetting(t, "engine.capacity_policy", "guaranteed_no_evict").ok());
  EXPECT_EQ(t.engine.capacity, CapacityPolicy::kGuaranteedNoEvict);
  EXPECT_FALSE(ApplyTwinSetting(t, "engine.capacity_policy", "evict_sometimes").ok());
}

TEST(EngineTest, CancelFreesKvAndSlotAtOnce) {
  auto e = Make(Cfg());
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 1000, 100), 0).ok());
  ASSERT_TRUE(e->Submit(Req(2, 1000, 100), 0).ok());
  e->AdvanceTo(200 * kNanosPerMilli, sink);
  ASSERT_GT(e->Stats().kv_blocks_used, 0);
  ASSERT_EQ(e->Stats().running, 2);
  EXPECT_TRUE(e->Cancel(1, 200 * kNanosPerMilli));
  EXPECT_EQ(e->Stats().running, 1);
  EXPECT_TRUE(e->Cancel(2, 200 * kNanosPerMilli));
  EXPECT_EQ(e->Stats().kv_blocks_used, 0);
  EXPECT_EQ(e->Stats().running, 0);
  EXPECT_EQ(e->Stats().requests_cancelled, 2);
  EXPECT_FALSE(e->Cancel(2, 200 * kNanosPerMilli));
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.finished.count(1), 0u);  // no token or finish after the cancel
  for (const Event& ev : sink.events) EXPECT_LE(ev.t, 200 * kNanosPerMilli + 10 * kNanosPerMilli);
}

TEST(EngineTest, AdmissionControlRejectsWithReason) {
  EngineConfig c = Cfg();
  c.max_waiting_requests = 2;
  c.max_model_len = 4096;
  auto e = Make(c);
  EXPECT_TRUE(e->Submit(Req(1, 100, 10), 0).ok());
  EXPECT_TRUE(e->Submit(Req(2, 100, 10), 0).ok());
  Admission a = e->Submit(Req(3, 100, 10), 0);
  EXPECT_EQ(a.reason, RejectReason::kWaitingRequestsFull);
  EXPECT_EQ(a.ToStatus().code(), Status::Code::kResourceExhausted);
  EXPECT_EQ(e->Submit(Req(4, 4000, 100), 0).reason, RejectReason::kTooLong);
  EXPECT_EQ(e->Submit(Req(1, 10, 10), 0).reason, RejectReason::kInvalid);  // duplicate id
  EXPECT_EQ(e->Stats().requests_rejected, 3);

  EngineConfig t = Cfg();
  t.max_waiting_tokens = 150;
  auto e2 = Make(t);
  EXPECT_TRUE(e2->Submit(Req(1, 100, 10), 0).ok());
  EXPECT_EQ(e2->Submit(Req(2, 100, 10), 0).reason, RejectReason::kWaitingTokensFull);
}

// Two requests of 16 prompt tokens; each needs ceil((16 + out - 1) / 16) blocks at its
// last decode step. With 4 blocks, out = 17 fits exactly (2 + 2), out = 18 does not.
TEST(EngineTest, PreemptionHappensExactlyWhenKvIsExhausted) {
  for (int32_t out : {17, 18}) {
    EngineConfig c = Cfg(4 * 16);
    c.watermark = 0;
    auto e = Make(c);
    RecordingSink sink;
    ASSERT_TRUE(e->Submit(Req(1, 16, out), 0).ok());
    ASSERT_TRUE(e->Submit(Req(2, 16, out), 0).ok());
    RunToIdle(*e, sink);
    EXPECT_EQ(sink.tokens[1], out);
    EXPECT_EQ(sink.tokens[2], out);
    if (out == 17) {
      EXPECT_EQ(e->Stats().preemptions, 0);
    } else {
      EXPECT_GE(e->Stats().preemptions, 1);
      // The victim is the later request; its prefill is recomputed.
      bool saw = false;
      for (const Event& ev : sink.events) if (ev.kind == 'P') { EXPECT_EQ(ev.id, 2u); saw = true; }
      EXPECT_TRUE(saw);
      EXPECT_GT(e->Stats().prefill_tokens_computed, 32);
    }
    EXPECT_EQ(e->Stats().kv_blocks_used, 0);
  }
}

TEST(EngineTest, PrefixCacheReusesBlocksAndCutsPrefillWork) {
  auto e = Make(Cfg());
  RecordingSink sink;
  std::vector<uint64_t> h;
  PrefixBlockHashes(/*tenant=*/0, /*prefix_id=*/7, /*prefix_tokens=*/128, 16, false, h);
  ASSERT_EQ(h.size(), 8u);
  Nanos t = 0;
  for (uint64_t id = 1; id <= 5; ++id) {
    EngineRequest r = Req(id, 256, 2);
    r.block_hashes = h;
    ASSERT_TRUE(e->Submit(r, t).ok());
    RunToIdle(*e, sink);
    t = sink.finished[id] + 1;
  }
  EngineStats s = e->Stats();
  EXPECT_EQ(s.prefill_tokens_computed, 256 + 4 * 128);
  EXPECT_EQ(s.prefix_hits_tokens, 4 * 128);
  EXPECT_EQ(s.prefix_queries_tokens, 5 * 256);
  int first_cached = -1;
  for (const Event& ev : sink.events) if (ev.kind == 'T' && ev.id == 3 && first_cached < 0) first_cached = ev.cached;
  EXPECT_EQ(first_cached, 128);
}

// vLLM V1 caches a request's full blocks when it is scheduled (allocate_slots), before the
// step computes them: a request admitted later in the same step with the same prefix hits
// them (an agent's parallel calls, a burst sharing a system prompt). Three arrive together:
// the first computes the prefix, the other two hit it in the same step.
TEST(EngineTest, RequestsAdmittedInTheSameStepHitBlocksScheduledBeforeThem) {
  auto e = Make(Cfg());
  RecordingSink sink;
  std::vector<uint64_t> h;
  PrefixBlockHashes(/*tenant=*/0, /*prefix_id=*/7, /*prefix_tokens=*/128, 16, false, h);
  for (uint64_t id = 1; id <= 3; ++id) {
    EngineRequest r = Req(id, 256, 2);
    r.block_hashes = h;
    ASSERT_TRUE(e->Submit(r, 0).ok());
  }
  RunToIdle(*e, sink);
  const EngineStats s = e->Stats();
  EXPECT_EQ(s.prefix_hits_tokens, 2 * 128);
  EXPECT_EQ(s.prefill_tokens_computed, 256 + 2 * 128);
}

TEST(EngineTest, NoCrossTenantReuseUnlessShared) {
  for (bool shared : {false, true}) {
    EngineConfig c = Cfg();
    c.prefix_cache_shared = shared;
    auto e = Make(c);
    RecordingSink sink;
    std::vector<uint64_t> ha, hb;
    PrefixBlockHashes(1, 7, 128, 16, shared, ha);
    PrefixBlockHashes(2, 7, 128, 16, shared, hb);
    EngineRequest a = Req(1, 200, 1);
    a.tenant = 1;
    a.block_hashes = ha;
    ASSERT_TRUE(e->Submit(a, 0).ok());
    RunToIdle(*e, sink);
    EngineRequest b = Req(2, 200, 1);
    b.tenant = 2;
    b.block_hashes = hb;
    ASSERT_TRUE(e->Submit(b, sink.finished[1] + 1).ok());
    RunToIdle(*e, sink);
    EXPECT_EQ(e->Stats().prefix_hits_tokens, shared ? 128 : 0) << "shared=" << shared;
  }
}

// Trace replay: engine blocks inside the trace blocks two prompts share get equal hashes,
// the first engine block past the shared ones differs, a partial trace block is a prefix
// of the whole one, and the engine then serves exactly the shared tokens from cache.
TEST(EngineTest, TraceBlockHashesShareExactlyTheSharedTraceBlocks) {
  std::vector<uint64_t> a, b, cut, other;
  const std::vector<uint64_t> ids_a = {5, 6, 7}, ids_b = {5, 6, 8}, ids_other = {9, 6, 7};
  TraceBlockHashes(0, ids_a, 64, 192, 16, false, a);          // 3 x 64 tokens: 12 engine blocks
  TraceBlockHashes(0, ids_b, 64, 192, 16, false, b);
  TraceBlockHashes(0, ids_a, 64, 150, 16, false, cut);        // last block cut: 9 full engine blocks
  TraceBlockHashes(0, ids_other, 64, 192, 16, false, other);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(cut.size(), 9u);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(a[i], b[i]) << i;  // 2 trace blocks = 8 engine blocks
  for (std::size_t i = 8; i < 12; ++i) EXPECT_NE(a[i], b[i]) << i;
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(a[i], cut[i]) << i;
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NE(a[i], other[i]) << i;  // the chain starts at the head

  auto e = Make(Cfg());
  RecordingSink sink;
  EngineRequest ra = Req(1, 192, 1);
  ra.block_hashes = a;
  ASSERT_TRUE(e->Submit(ra, 0).ok());
  RunToIdle(*e, sink);
  EngineRequest rb = Req(2, 192, 1);
  rb.block_hashes = b;
  ASSERT_TRUE(e->Submit(rb, sink.finished[1] + 1).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(e->Stats().prefix_hits_tokens, 128);
}

TEST(EngineTest, CachedBlocksAreEvictedLruWhenSpaceIsNeeded) {
  EngineConfig c = Cfg(10 * 16);
  c.watermark = 0;
  auto e = Make(c);
  RecordingSink sink;
  std::vector<uint64_t> h;
  PrefixBlockHashes(0, 1, 128, 16, false, h);
  EngineRequest a = Req(1, 130, 1);
  a.block_hashes = h;
  ASSERT_TRUE(e->Submit(a, 0).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(e->Stats().kv_blocks_cached, 8);
  EXPECT_EQ(e->Stats().kv_usage, 0);  // cached-but-unused counts as free
  // A 150-token unrelated request needs 10 blocks: the cache must give way.
  ASSERT_TRUE(e->Submit(Req(2, 150, 1), sink.finished[1] + 1).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.tokens[2], 1);
  EXPECT_EQ(e->Stats().preemptions, 0);
}

Nanos LastFinish(const EngineConfig& c, int n, int32_t out) {
  auto e = Make(c, std::make_shared<LinearCostModel>(LinearCostOptions{
                       .fixed_s = 0.01, .per_token_s = 0.0005, .per_prefill_token_s = 0}));
  RecordingSink sink;
  for (int i = 0; i < n; ++i) EXPECT_TRUE(e->Submit(Req(static_cast<uint64_t>(i), 64, out), 0).ok());
  RunToIdle(*e, sink);
  Nanos last = 0;
  for (auto& [id, t] : sink.finished) last = std::max(last, t);
  for (int i = 0; i < n; ++i) EXPECT_EQ(sink.tokens[static_cast<uint64_t>(i)], out);
  return last;
}

TEST(EngineTest, SpeculativeDecodingWithZeroAcceptanceIsNeverFaster) {
  for (int batch : {1, 8, 64}) {
    EngineConfig base = Cfg();
    EngineConfig spec = base;
    spec.spec_tokens = 4;
    spec.spec_acceptance = 0;
    EXPECT_GE(LastFinish(spec, batch, 50), LastFinish(base, batch, 50)) << "batch " << batch;
  }
  // And with high acceptance it helps at batch 1.
  EngineConfig base = Cfg();
  EngineConfig good = base;
  good.spec_tokens = 4;
  good.spec_acceptance = 0.8;
  EXPECT_LT(LastFinish(good, 1, 100), LastFinish(base, 1, 100));
}

TEST(EngineTest, SpecTokensPerRoundFormula) {
  EngineConfig c;
  c.spec_tokens = 3;
  c.spec_acceptance = 0.5;
  EXPECT_DOUBLE_EQ(c.SpecTokensPerRound(), (1 - 0.0625) / 0.5);
  c.spec_acceptance = 0;
  EXPECT_DOUBLE_EQ(c.SpecTokensPerRound(), 1.0);
}

TEST(EngineTest, RequestTimeoutAbortsAndFreesKv) {
  EngineConfig c = Cfg();
  c.request_timeout_s = 0.1;
  auto e = Make(c);
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 1000), 0).ok());
  RunToIdle(*e, sink);
  ASSERT_EQ(sink.reasons.count(1), 1u);
  EXPECT_EQ(sink.reasons[1], FinishReason::kTimeout);
  EXPECT_GE(sink.finished[1], 100 * kNanosPerMilli);
  EXPECT_LT(sink.finished[1], 110 * kNanosPerMilli);
  EXPECT_EQ(e->Stats().kv_blocks_used, 0);
  EXPECT_EQ(e->Stats().requests_timed_out, 1);
}

TEST(EngineTest, MaxNumSeqsCapsTheBatch) {
  EngineConfig c = Cfg();
  c.max_num_seqs = 2;
  auto e = Make(c);
  RecordingSink sink;
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(e->Submit(Req(i, 10, 10), 0).ok());
  e->AdvanceTo(0, sink);
  EXPECT_EQ(e->Stats().running, 2);
  EXPECT_EQ(e->Stats().waiting, 3);
  RunToIdle(*e, sink);
  EXPECT_EQ(e->Stats().requests_finished, 5);
}

TEST(EngineTest, LateSubmitNeverTravelsBackInTime) {
  auto e = Make(Cfg());
  RecordingSink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 3), 0).ok());
  e->AdvanceTo(0, sink);  // step ends at 10 ms
  // The caller submits at 50 ms before advancing past 10 ms.
  ASSERT_TRUE(e->Submit(Req(2, 100, 1), 50 * kNanosPerMilli).ok());
  RunToIdle(*e, sink);
  for (const Event& ev : sink.events) {
    if (ev.id == 2) {
      EXPECT_GE(ev.t, 50 * kNanosPerMilli);
    }
  }
  EXPECT_EQ(sink.tokens[2], 1);
}

TEST(EngineConfigTest, UnknownKeyNamesItAndListsValidKeys) {
  TwinSettings t;
  EngineConfig& e = t.engine;
  ClusterConfig& c = t.cluster;
  Status s = ApplyTwinSetting(t, "engine.max_num_seq", "4");
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("engine.max_num_seq: unknown setting (did you mean \"engine.max_num_seqs\"?)"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("valid keys: engine.max_num_batched_tokens"), std::string::npos);
  Status v = ApplyTwinSetting(t, "engine.max_num_seqs", "lots");
  EXPECT_NE(v.message().find("engine.max_num_seqs"), std::string::npos);
  EXPECT_NE(v.message().find("lots"), std::string::npos);
  EXPECT_TRUE(ApplyTwinSetting(t, "max_num_seqs", "4").ok());
  EXPECT_EQ(e.max_num_seqs, 4);
  EXPECT_TRUE(ApplyTwinSetting(t, "engine.request_timeout", "30s").ok());
  EXPECT_DOUBLE_EQ(e.request_timeout_s, 30);
  EXPECT_TRUE(ApplyTwinSetting(t, "cluster.router", "prefix_affinity").ok());
  EXPECT_EQ(c.router, RouterPolicy::kPrefixAffinity);
  EXPECT_FALSE(ApplyTwinSetting(t, "engine.spec_acceptance", "1.5").ok());
  Status m = ApplyEngineMap(t, {{"bogus", "1"}});
  EXPECT_NE(m.message().find("bogus"), std::string::npos);
  // A card's knob is named as the card writes it, at the card's line, never as --set.
  Status located = ApplyEngineMap(t, {{"max_num_seqs", "lots"}}, [](const std::string& path) {
    return "chat.yaml:7 (" + path + ")";
  });
  EXPECT_EQ(located.message(),
            "chat.yaml:7 (engine.max_num_seqs): engine.max_num_seqs: expected an integer >= 1, got \"lots\"");
  // An integer past the field's range is refused, not wrapped.
  Status big = ApplyTwinSetting(t, "engine.max_num_seqs", "99999999999");
  EXPECT_FALSE(big.ok());
  EXPECT_NE(big.message().find("at most 2147483647"), std::string::npos) << big.message();
  Status set = ApplyTwinAssignment(t, "max_num_seqs=lots");
  EXPECT_EQ(set.message(), "--set engine.max_num_seqs: expected an integer >= 1, got \"lots\"");
  EXPECT_TRUE(ApplyTwinAssignment(t, "cost.eff_flops=0.5").ok());
  EXPECT_DOUBLE_EQ(t.cost.eff_flops, 0.5);
  EXPECT_FALSE(ApplyTwinAssignment(t, "engine.max_num_seqs").ok());
}

// An integer knob beyond its field's type was cast from double (3e9 into int32_t:
// undefined behaviour, in practice INT32_MIN sequences); it is refused and named now.
TEST(EngineConfigTest, IntegerKnobsBeyondTheirTypeAreRefused) {
  TwinSettings t;
  for (const char* v : {"3e9", "2147483648", "1e300", "2.5", "0"}) {
    Status s = ApplyTwinSetting(t, "engine.max_num_seqs", v);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << v;
    EXPECT_NE(s.message().find("engine.max_num_seqs"), std::string::npos) << s.message();
  }
  EXPECT_EQ(t.engine.max_num_seqs, EngineConfig{}.max_num_seqs);
  EXPECT_TRUE(ApplyTwinSetting(t, "engine.max_num_seqs", "2147483647").ok());
  EXPECT_EQ(t.engine.max_num_seqs, INT32_MAX);
  EXPECT_TRUE(ApplyTwinSetting(t, "engine.kv_cache_tokens", "5e9").ok());  // an int64_t field
  EXPECT_EQ(t.engine.kv_cache_tokens, 5'000'000'000);
  EXPECT_FALSE(ApplyTwinSetting(t, "engine.kv_cache_tokens", "1e19").ok());
}

}  // namespace
}  // namespace infereng::twin
