// The llama.cpp-like slot engine (slot_engine.h) against hand-computed timelines: the
// first arrival is prefilled alone, idle slots' cached tokens slow every step through the
// occupancy table, a repeated prompt reuses its slot's cells, prompts over a slot's context
// follow llama.cpp's rule, and the unified batch stops at n_batch and is computed in
// ubatches, each over the cells it spans.
#include "twin/slot_engine.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "twin/measured_cost.h"
#include "twin/roofline_cost.h"
#include "fit/fit_test_util.h"

namespace infereng::twin {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

struct TokenEvent {
  uint64_t id;
  Nanos t;
  int32_t cached;
};

class Sink : public EngineSink {
 public:
  void OnScheduled(uint64_t id, uint64_t, Nanos t) override { scheduled[id] = t; }
  void OnTokens(uint64_t id, uint64_t, Nanos t, int32_t count, int32_t cached) override {
    for (int32_t i = 0; i < count; ++i) tokens.push_back({id, t, cached});
  }
  void OnFinished(uint64_t id, uint64_t, Nanos t, FinishReason) override { finished[id] = t; }

  std::vector<Nanos> TimesOf(uint64_t id) const {
    std::vector<Nanos> out;
    for (const TokenEvent& e : tokens) {
      if (e.id == id) out.push_back(e.t);
    }
    return out;
  }
  int32_t CachedOf(uint64_t id) const {
    for (const TokenEvent& e : tokens) {
      if (e.id == id) return e.cached;
    }
    return -1;
  }

  std::map<uint64_t, Nanos> scheduled, finished;
  std::vector<TokenEvent> tokens;
};

// Prices steps with a wrapped model and records every shape it was asked about.
class Recording final : public CostModel {
 public:
  explicit Recording(std::shared_ptr<const CostModel> inner) : inner_(std::move(inner)) {}
  double StepSeconds(const StepShape& s) const override {
    shapes.push_back(s);
    return inner_->StepSeconds(s);
  }
  mutable std::vector<StepShape> shapes;

 private:
  std::shared_ptr<const CostModel> inner_;
};

// 5 ms per step + 50 us per prompt token.
std::shared_ptr<Recording> Linear() {
  return std::make_shared<Recording>(
      std::make_shared<LinearCostModel>(LinearCostOptions{.fixed_s = 0.005, .per_prefill_token_s = 50e-6}));
}

EngineConfig Llama(int32_t slots, int64_t kv_tokens) {
  TwinSettings t;
  EXPECT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=llamacpp").ok());
  t.engine.max_num_seqs = slots;
  t.engine.kv_cache_tokens = kv_tokens;
  return t.engine;
}

std::unique_ptr<Engine> Make(const EngineConfig& c, std::shared_ptr<const CostModel> cost) {
  auto e = Engine::Create(c, std::move(cost));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(e).value();
}

void RunToIdle(Engine& e, EngineSink& sink) {
  while (auto t = e.NextEventTime()) e.AdvanceTo(*t, sink);
}

EngineRequest Req(uint64_t id, int32_t prompt, int32_t output, const std::vector<uint64_t>* hashes = nullptr) {
  EngineRequest r{.id = id, .tag = id, .prompt_tokens = prompt, .output_tokens = output};
  if (hashes) r.block_hashes = *hashes;
  return r;
}

TEST(SlotEngine, FirstArrivalIsPrefilledAloneAndALaterOneWaitsForTheStepsEnd) {
  auto cost = Linear();
  auto e = Make(Llama(4, 4096), cost);
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 3), 0).ok());
  e->AdvanceTo(1 * kMs, sink);  // the first step (0..10 ms: 5 ms + 100 x 50 us) is running
  ASSERT_TRUE(e->Submit(Req(2, 200, 1), 1 * kMs).ok());
  RunToIdle(*e, sink);
  // Request 2 gets a slot only when that step ends: its prompt joins request 1's decode
  // token in the step 10..25 ms (5 ms + 200 x 50 us); TTFT = 24 ms, 9 ms of it waiting.
  EXPECT_EQ(sink.scheduled[2], 10 * kMs);
  EXPECT_EQ(sink.TimesOf(2), (std::vector<Nanos>{25 * kMs}));
  EXPECT_EQ(sink.TimesOf(1), (std::vector<Nanos>{10 * kMs, 25 * kMs, 30 * kMs}));
  ASSERT_GE(cost->shapes.size(), 2u);
  EXPECT_EQ(cost->shapes[0].prefill_tokens, 100);  // alone
  EXPECT_EQ(cost->shapes[0].decode_seqs, 0);
  EXPECT_EQ(cost->shapes[1].prefill_tokens, 200);
  EXPECT_EQ(cost->shapes[1].decode_seqs, 1);
}

// engine.admission_window (FIDELITY.md (b6)): llama-server forms its next batch some host time
// after a slot finished, or after a task woke its idle loop, so a closed-loop user's next
// prompt sent the moment its answer ended rides in the next step beside the other slots'
// decodes, and prompts sent together reach one batch. After a step in which no slot finished,
// the next batch is formed at once.
TEST(SlotEngine, AdmissionWindowLetsAPromptSentAtAnEndIntoTheNextStep) {
  auto run = [](double window_s, std::vector<Nanos>* t2) {
    auto cost = Linear();
    EngineConfig c = Llama(4, 4096);
    c.admission_window_s = window_s;
    auto e = Make(c, cost);
    Sink sink;
    EXPECT_TRUE(e->Submit(Req(1, 100, 2), 1 * kMs).ok());
    e->AdvanceTo(1'300'000, sink);
    EXPECT_TRUE(e->Submit(Req(2, 100, 3), 1'300'000).ok());
    // Request 1's answer ends; its user sends the next prompt 0.2 ms later.
    while (sink.finished.count(1) == 0) e->AdvanceTo(*e->NextEventTime(), sink);
    const Nanos ended = sink.finished[1];
    e->AdvanceTo(ended + 200'000, sink);
    EXPECT_TRUE(e->Submit(Req(3, 200, 1), ended + 200'000).ok());
    RunToIdle(*e, sink);
    *t2 = sink.TimesOf(2);
    return std::make_pair(sink.scheduled, cost->shapes);
  };
  std::vector<Nanos> t2;
  // 1 ms: one batch at 2 ms for both prompts (5 ms + 200 x 50 us: tokens at 17), a decode step
  // 17..22 in which request 1 ends, then request 3 (22.2 ms) joins request 2's last decode in
  // the batch formed at 23: 5 ms + 200 x 50 us, so request 2's last token comes at 38.
  auto [sched, shapes] = run(1e-3, &t2);
  EXPECT_EQ(sched[1], 2 * kMs);
  EXPECT_EQ(sched[2], 2 * kMs);
  EXPECT_EQ(sched[3], 23 * kMs);
  EXPECT_EQ(t2, (std::vector<Nanos>{17 * kMs, 22 * kMs, 38 * kMs}));
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shapes[0].prefill_tokens, 200);
  EXPECT_EQ(shapes[2].prefill_tokens, 200);
  EXPECT_EQ(shapes[2].decode_seqs, 1);
  // Without it: request 1 prefills alone (1..11 ms), request 2 joins its decode (11..21),
  // request 1 ends there, request 2 decodes 21..26 and request 3 (21.2 ms) waits for that step;
  // request 2's last token rides with request 3's prompt (26..41).
  auto [sched0, shapes0] = run(0, &t2);
  EXPECT_EQ(sched0[1], 1 * kMs);
  EXPECT_EQ(sched0[2], 11 * kMs);
  EXPECT_EQ(sched0[3], 26 * kMs);
  EXPECT_EQ(t2, (std::vector<Nanos>{21 * kMs, 26 * kMs, 41 * kMs}));
}

// The window is per finished request: two answers that end in one step hold the next batch two
// windows (llama-server writes each one's final response and timings before it reads its
// queue), so closed-loop users whose answers ended together and who come back within that
// time are prefilled together.
TEST(SlotEngine, AdmissionWindowGrowsWithTheRequestsThatFinished) {
  auto cost = Linear();
  EngineConfig c = Llama(4, 4096);
  c.admission_window_s = 1e-3;
  auto e = Make(c, cost);
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 10, 1), 0).ok());
  ASSERT_TRUE(e->Submit(Req(2, 10, 1), 0).ok());
  e->AdvanceTo(7'900'000, sink);  // both end at 6 ms (5 ms + 20 x 50 us): batch at 6 + 2 x 1 ms
  EXPECT_EQ(sink.finished[1], 6 * kMs);
  EXPECT_EQ(sink.finished[2], 6 * kMs);
  ASSERT_TRUE(e->Submit(Req(3, 100, 1), 7'900'000).ok());
  e->AdvanceTo(7'950'000, sink);
  ASSERT_TRUE(e->Submit(Req(4, 100, 1), 7'950'000).ok());
  e->AdvanceTo(8'100'000, sink);
  ASSERT_TRUE(e->Submit(Req(5, 100, 1), 8'100'000).ok());  // the batch was formed at 8 ms
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.scheduled[3], 8 * kMs);
  EXPECT_EQ(sink.scheduled[4], 8 * kMs);
  EXPECT_EQ(sink.TimesOf(3), (std::vector<Nanos>{23 * kMs}));  // 5 ms + 200 x 50 us
  // Request 5 waits for that step; two requests finished in it: 23 + 2 ms.
  EXPECT_EQ(sink.scheduled[5], 25 * kMs);
}

// Step time over (batch tokens, occupancy): 10 / 100 ms at 1 / 100 tokens with nothing
// held, twice that with 1,000 cells held.
std::shared_ptr<const CostModel> OccupancyCost() {
  MeasuredTable t;
  t.tokens = {{1}, {0}};
  t.context = {{0}, {0}};
  t.occupancy = {.batch_tokens = {1, 100}, .kv_occupied = {0, 1000}, .seconds = {{0.010, 0.100}, {0.020, 0.200}}};
  return std::make_shared<MeasuredCostModel>(t);
}

TEST(SlotEngine, IdleSlotsCachedTokensSlowEveryStepThroughTheOccupancyTable) {
  auto cost = std::make_shared<Recording>(OccupancyCost());
  auto e = Make(Llama(2, 2000), cost);
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 1), 0).ok());
  RunToIdle(*e, sink);
  // Cells 0..99: attention spans pad32(100) = 128 cells: 0.100 + 0.128 x 0.100 = 112.8 ms.
  EXPECT_EQ(sink.finished[1], 112'800'000);
  // Slot 0 is idle and keeps its 100 cells: usage 100 / 2000.
  EXPECT_DOUBLE_EQ(e->KvUsage(), 0.05);
  EXPECT_EQ(e->Stats().kv_blocks_cached, 100 / 16 + 1);
  // A different prompt takes the never-used slot 1 (least recently used); slot 0's cells
  // stay in the cache and every step attends over them.
  ASSERT_TRUE(e->Submit(Req(2, 100, 2), 200 * kMs).ok());
  RunToIdle(*e, sink);
  // Prefill into cells 100..199, spanning pad32(200) = 224: 0.100 + 0.224 x 0.100 =
  // 122.4 ms; decode (1 token, cell 200) over the same 224: 0.010 + 0.224 x 0.010 = 12.24 ms.
  EXPECT_EQ(sink.TimesOf(2), (std::vector<Nanos>{322'400'000, 334'640'000}));
  EXPECT_EQ(cost->shapes[1].kv_occupied_tokens, 224);
  EXPECT_EQ(cost->shapes[2].kv_occupied_tokens, 224);
  EXPECT_DOUBLE_EQ(e->KvUsage(), (100 + 101) / 2000.0);
}

std::vector<uint64_t> Hashes(std::initializer_list<uint64_t> h) { return h; }

TEST(SlotEngine, ARepeatedPromptTakesItsSlotAndPrefillsOnlyTheNewPart) {
  auto cost = Linear();
  auto e = Make(Llama(2, 2048), cost);  // block_size 16
  Sink sink;
  const std::vector<uint64_t> first = Hashes({11, 12, 13, 14});          // 64 tokens
  const std::vector<uint64_t> longer = Hashes({11, 12, 13, 14, 15, 16});  // 96 tokens, same start
  ASSERT_TRUE(e->Submit(Req(1, 64, 2, &first), 0).ok());
  RunToIdle(*e, sink);
  // 5 + 64 x 0.05 = 8.2 ms prefill, 5 ms decode: slot 0 keeps 64 + 2 - 1 = 65 cells.
  EXPECT_EQ(sink.finished[1], 13'200'000);
  // Slot 1 is the least recently used, but slot 0 shares 64 of its 65 cells (> 0.5): the
  // new request takes slot 0 and computes only its last 32 prompt tokens.
  ASSERT_TRUE(e->Submit(Req(2, 96, 1, &longer), 20 * kMs).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.CachedOf(2), 64);
  EXPECT_EQ(sink.TimesOf(2), (std::vector<Nanos>{20 * kMs + 6'600'000}));  // 5 + 32 x 0.05 ms
  EXPECT_EQ(cost->shapes.back().prefill_tokens, 32);
  EXPECT_EQ(cost->shapes.back().prefill_context, 64);
  // The same prompt again: everything is cached but one token is always computed.
  ASSERT_TRUE(e->Submit(Req(3, 96, 1, &longer), 40 * kMs).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.CachedOf(3), 95);
  EXPECT_EQ(cost->shapes.back().prefill_tokens, 1);
  EXPECT_EQ(e->Stats().prefix_hits_tokens, 64 + 95);
}

TEST(SlotEngine, WithoutPromptSimilarityTheLeastRecentlyUsedSlotIsTakenAndNothingIsReused) {
  EngineConfig c = Llama(2, 2048);
  c.slot_prompt_similarity = 0;  // LRU only
  auto cost = Linear();
  auto e = Make(c, cost);
  Sink sink;
  const std::vector<uint64_t> h = Hashes({11, 12, 13, 14});
  ASSERT_TRUE(e->Submit(Req(1, 64, 1, &h), 0).ok());
  RunToIdle(*e, sink);
  ASSERT_TRUE(e->Submit(Req(2, 64, 1, &h), 20 * kMs).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.CachedOf(2), 0);
  EXPECT_EQ(cost->shapes.back().prefill_tokens, 64);
  // Both slots now hold 64 cells.
  EXPECT_DOUBLE_EQ(e->KvUsage(), 128 / 2048.0);
}

TEST(SlotEngine, PromptOverTheSlotContextIsCutAsLlamaCppCutsIt) {
  // The capture ctx_overflow_truncated_v1_completions (llama-server b4748, -np 8 -c 32768:
  // 4,096 cells per slot): a 5,001-token prompt (5,000 words + BOS) came back with
  // usage.prompt_tokens 2953.
  EXPECT_EQ(LlamaCppTruncatedPrompt(5001, 4096), 2953);
  EXPECT_EQ(LlamaCppTruncatedPrompt(4095, 4096), 4095);  // fits: unchanged
  EXPECT_EQ(LlamaCppTruncatedPrompt(4096, 4096), 2048);  // one block of 2,048 erased
  EXPECT_EQ(LlamaCppTruncatedPrompt(9000, 4096), 2048 + (9000 - 2048) % 2048);

  auto cost = Linear();
  auto e = Make(Llama(8, 32768), cost);
  Sink sink;
  const std::vector<uint64_t> h(312, 7);  // the prompt's hashes: dropped once it is cut
  ASSERT_TRUE(e->Submit(Req(1, 5001, 4, &h), 0).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(e->Stats().prefill_tokens_computed, 2953);
  EXPECT_EQ(sink.TimesOf(1).size(), 4u);
  EXPECT_EQ(e->Stats().max_model_len, 4096);  // one slot's context, as /props n_ctx
}

TEST(SlotEngine, WithoutContextShiftARequestThatWouldFillTheSlotIsRefused) {
  EngineConfig c = Llama(2, 2048);  // 1,024 cells per slot
  c.context_shift = false;
  auto e = Make(c, Linear());
  // err_ctx_exceeded_*: a prompt of >= n_ctx tokens is a 400.
  EXPECT_EQ(e->Submit(Req(1, 1500, 1), 0).reason, RejectReason::kTooLong);
  EXPECT_EQ(e->Submit(Req(2, 1024, 1), 0).reason, RejectReason::kTooLong);
  // ctx_full_during_generation_*: llama.cpp fails it when the slot fills; refused here.
  EXPECT_EQ(e->Submit(Req(3, 1000, 25), 0).reason, RejectReason::kTooLong);
  EXPECT_TRUE(e->Submit(Req(4, 1000, 24), 0).ok());
  EXPECT_EQ(e->Precheck(Req(5, 1000, 25)), RejectReason::kTooLong);
}

TEST(SlotEngine, GenerationPastTheSlotContextShiftsItAndGoesOn) {
  auto cost = Linear();
  auto e = Make(Llama(1, 16), cost);
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 10, 20), 0).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.TimesOf(1).size(), 20u);
  // Cells grow 10, 11, ... 15; then 15 + 1 >= 16 drops (15 - 1) / 2 = 7 cells: 8, then up again.
  int64_t max_context = 0;
  for (const StepShape& s : cost->shapes) {
    max_context = std::max(max_context, s.decode_context);
    EXPECT_EQ(s.kv_occupied_tokens, 16);  // the span: one pad of 32 cells, capped at the cache
  }
  EXPECT_EQ(max_context, 15);
  EXPECT_EQ(cost->shapes[6].decode_context, 9);  // the 7th step, right after the shift: 8 cells + its token
}

TEST(SlotEngine, TheUnifiedBatchTakesDecodesFirstThenPromptsInSlotOrderUpToNBatchInUbatches) {
  auto cost = Linear();
  auto e = Make(Llama(3, 3 * 2048), cost);  // n_batch 2048 (the preset's), ubatch 512
  Sink sink;
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(e->Submit(Req(id, 1000, 2), 0).ok());
  RunToIdle(*e, sink);
  ASSERT_GE(cost->shapes.size(), 6u);
  // Step 1: 1000 + 1000 + 48 prompt tokens in four ubatches of 512, each priced over the
  // cells it spans (they fill 0..2047 in order).
  const int64_t tokens[4] = {512, 488 + 24, 512, 464 + 48};
  const int32_t seqs[4] = {1, 2, 1, 2};
  for (int u = 0; u < 4; ++u) {
    EXPECT_EQ(cost->shapes[u].prefill_tokens, tokens[u]) << u;
    EXPECT_EQ(cost->shapes[u].prefill_seqs, seqs[u]) << u;
    EXPECT_EQ(cost->shapes[u].kv_occupied_tokens, 512 * (u + 1)) << u;
  }
  // Step 2: slots 0 and 1 generate (first), then slot 2's other 952 prompt tokens.
  EXPECT_EQ(cost->shapes[4].decode_seqs, 2);
  EXPECT_EQ(cost->shapes[4].prefill_tokens, 510);
  EXPECT_EQ(cost->shapes[4].kv_occupied_tokens, 2560);
  EXPECT_EQ(cost->shapes[5].decode_seqs, 0);
  EXPECT_EQ(cost->shapes[5].prefill_tokens, 442);
  EXPECT_EQ(cost->shapes[5].kv_occupied_tokens, 3008);  // cells up to 3001, padded to 32
  // Each ubatch is its own compute with its own fixed 5 ms: request 3's first token comes
  // after 4 x 5 + 2,048 x 0.05 = 122.4 ms, then 2 x 5 + 952 x 0.05 = 57.6 ms.
  EXPECT_EQ(sink.TimesOf(3).front(), 180 * kMs);
}

// The step's price follows where llama.cpp put the cells, not how many are held: a prompt
// that lands at the start of the cache still attends up to an idle slot's cells at its end.
TEST(SlotEngine, AStepAttendsUpToTheHighestUsedCellNotOverTheCellsHeld) {
  auto cost = Linear();
  auto e = Make(Llama(2, 256), cost);
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 40, 3), 0).ok());  // slot 0: cells 0..39, then 40, 41
  RunToIdle(*e, sink);
  ASSERT_TRUE(e->Submit(Req(2, 30, 1), 1000 * kMs).ok());  // never-used slot 1: 42..71
  RunToIdle(*e, sink);
  EXPECT_EQ(cost->shapes.back().kv_occupied_tokens, 96);  // pad32(72); 72 cells held
  // Slot 0 (least recently used) takes the next prompt: its 42 cells are freed, the head
  // drops to 0 and the prompt goes to 0..19, yet the span still reaches slot 1's cell 71.
  ASSERT_TRUE(e->Submit(Req(3, 20, 1), 2000 * kMs).ok());
  RunToIdle(*e, sink);
  EXPECT_EQ(cost->shapes.back().prefill_tokens, 20);
  EXPECT_EQ(cost->shapes.back().kv_occupied_tokens, 96);  // 50 cells held
  EXPECT_DOUBLE_EQ(e->KvUsage(), 50 / 256.0);
}

TEST(SlotEngine, RequestsBeyondTheSlotsWaitAndACancelledOneFreesItsSlot) {
  auto e = Make(Llama(1, 1024), Linear());
  Sink sink;
  ASSERT_TRUE(e->Submit(Req(1, 100, 50), 0).ok());
  ASSERT_TRUE(e->Submit(Req(2, 100, 1), 0).ok());
  e->AdvanceTo(20 * kMs, sink);
  EXPECT_EQ(e->WaitingCount(), 1);
  EXPECT_EQ(e->Stats().running, 1);
  EXPECT_TRUE(e->Cancel(1, 20 * kMs));
  RunToIdle(*e, sink);
  EXPECT_EQ(sink.finished.count(1), 0u);
  EXPECT_EQ(sink.TimesOf(2).size(), 1u);
  EXPECT_EQ(e->Outstanding(), 0);
  EXPECT_FALSE(e->Cancel(1, 30 * kMs));
}

TEST(SlotEngine, ARequestPastItsTimeoutLeavesTheQueueOrItsSlot) {
  EngineConfig c = Llama(1, 1024);
  c.request_timeout_s = 0.012;
  auto e = Make(c, Linear());
  std::map<uint64_t, FinishReason> reasons;
  struct Reasons : Sink {
    std::map<uint64_t, FinishReason>* out;
    void OnFinished(uint64_t id, uint64_t tag, Nanos t, FinishReason r) override {
      Sink::OnFinished(id, tag, t, r);
      (*out)[id] = r;
    }
  } rs;
  rs.out = &reasons;
  ASSERT_TRUE(e->Submit(Req(1, 100, 50), 0).ok());  // 10 ms prefill, then 5 ms decodes
  ASSERT_TRUE(e->Submit(Req(2, 100, 1), 0).ok());   // waits for the one slot
  RunToIdle(*e, rs);
  // Steps start at 0, 10, 15 ms: at 15 ms both are past 12 ms. Request 1 leaves its slot
  // after two tokens, request 2 the queue without one.
  EXPECT_EQ(reasons[1], FinishReason::kTimeout);
  EXPECT_EQ(reasons[2], FinishReason::kTimeout);
  EXPECT_EQ(rs.finished[1], 15 * kMs);
  EXPECT_EQ(rs.TimesOf(1).size(), 2u);
  EXPECT_TRUE(rs.TimesOf(2).empty());
  EXPECT_EQ(e->Stats().requests_timed_out, 2);
  EXPECT_EQ(e->Outstanding(), 0);
  EXPECT_DOUBLE_EQ(e->KvUsage(), 101 / 1024.0);  // the slot keeps its cells
  // An id may come back while its finished request's deadline (32 ms) is still queued: that
  // deadline must not end the new request, whose own is 38 ms.
  ASSERT_TRUE(e->Submit(Req(3, 10, 1), 20 * kMs).ok());  // 20..25.5 ms, done
  RunToIdle(*e, rs);
  EXPECT_EQ(reasons[3], FinishReason::kLength);
  ASSERT_TRUE(e->Submit(Req(3, 10, 10), 26 * kMs).ok());  // steps start 26, 31.5, 36.5, 41.5 ms
  RunToIdle(*e, rs);
  EXPECT_EQ(reasons[3], FinishReason::kTimeout);
  EXPECT_EQ(rs.finished[3], 41'500'000);
}

TEST(SlotEngine, RooflineChargesAttentionOverEveryOccupiedCell) {
  const RooflineCostModel roofline(fit::test::Make("llama-3.1-8b", "h100-sxm"));
  StepShape own{.decode_seqs = 1, .decode_context = 100};
  StepShape held = own;
  held.kv_occupied_tokens = 100;  // nothing but its own cells: the same step
  EXPECT_DOUBLE_EQ(roofline.StepSeconds(held), roofline.StepSeconds(own));
  held.kv_occupied_tokens = 50'000;  // idle slots' cells: priced as a 50,000-token context
  EXPECT_DOUBLE_EQ(roofline.StepSeconds(held),
                   roofline.StepSeconds(StepShape{.decode_seqs = 1, .decode_context = 50'000}));
  EXPECT_GT(roofline.StepSeconds(held), roofline.StepSeconds(own));
}

TEST(SlotEngine, ConfigErrorsNameTheKnob) {
  EngineConfig c = Llama(512, 2048);  // 4 cells per slot
  auto e = Engine::Create(c, Linear());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("engine.slots"), std::string::npos) << e.status().ToString();
  c = Llama(2, 2048);
  c.spec_tokens = 2;
  e = Engine::Create(c, Linear());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("engine.spec_tokens"), std::string::npos) << e.status().ToString();
}

}  // namespace
}  // namespace infereng::twin
