// PacedEngine on its own (no server): the schedule it promises, FIFO slots, cancellation
// (including a freed slot reused by a later request while the cancelled one's events are
// still queued), and prefix-cache hits.
#include "serve/paced_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace infereng::serve {
namespace {

struct Recorder : EngineSink {
  std::vector<std::string> log;
  void OnScheduled(uint64_t id, Nanos t) override { log.push_back("sched " + std::to_string(id) + " @" + std::to_string(t)); }
  void OnTokens(uint64_t id, Nanos t, int32_t count, int32_t cached) override {
    log.push_back("tok " + std::to_string(id) + " @" + std::to_string(t) + " x" + std::to_string(count) + " c" +
                  std::to_string(cached));
  }
  void OnFinished(uint64_t id, Nanos t, EngineFinish reason) override {
    log.push_back("fin " + std::to_string(id) + " @" + std::to_string(t) + (reason == EngineFinish::kLength ? "" : " ?"));
  }
};

EngineRequest Req(uint64_t id, int32_t out, int32_t prompt = 4) {
  EngineRequest r;
  r.id = id;
  r.prompt_tokens = prompt;
  r.output_tokens = out;
  return r;
}

constexpr PacedEngineOptions kOpt{.ttft_base = 100, .prefill_per_token = 10, .itl = 50, .max_running = 1};

TEST(PacedEngine, ScheduleIsTtftThenOneTokenPerItl) {
  PacedEngine e(kOpt);
  Recorder r;
  ASSERT_TRUE(e.Submit(Req(1, 3), 0).ok());
  e.AdvanceTo(1000, r);
  // TTFT = 100 + 4 prompt tokens x 10.
  EXPECT_EQ(r.log, (std::vector<std::string>{"sched 1 @0", "tok 1 @140 x1 c0", "tok 1 @190 x1 c0", "tok 1 @240 x1 c0",
                                             "fin 1 @240"}));
  EXPECT_FALSE(e.NextEventTime().has_value());
}

TEST(PacedEngine, WaitsForASlotInArrivalOrder) {
  PacedEngine e(kOpt);
  Recorder r;
  ASSERT_TRUE(e.Submit(Req(1, 1), 0).ok());
  ASSERT_TRUE(e.Submit(Req(2, 1), 0).ok());
  EXPECT_EQ(e.Stats().running, 1);
  EXPECT_EQ(e.Stats().waiting, 1);
  e.AdvanceTo(1000, r);
  EXPECT_EQ(r.log, (std::vector<std::string>{"sched 1 @0", "tok 1 @140 x1 c0", "fin 1 @140", "sched 2 @140",
                                             "tok 2 @280 x1 c0", "fin 2 @280"}));
  EXPECT_TRUE(e.Submit(Req(2, 1), 1000).ok());         // an id is free again once finished
  EXPECT_FALSE(e.Submit(Req(0, 1), 0).ok());           // 0 is not an id
  EXPECT_FALSE(e.Submit(Req(9, 0), 0).ok());           // nothing to generate
}

TEST(PacedEngine, CancelFreesTheSlotAndItsQueuedEventsNeverFire) {
  PacedEngine e(kOpt);
  Recorder r;
  ASSERT_TRUE(e.Submit(Req(1, 5), 0).ok());
  ASSERT_TRUE(e.Submit(Req(2, 5), 0).ok());
  EXPECT_FALSE(e.Submit(Req(2, 5), 0).ok());  // duplicate id
  e.AdvanceTo(150, r);                        // 1 has emitted its first token
  e.Cancel(1, 150);                           // 2 takes the slot at once
  ASSERT_TRUE(e.Submit(Req(3, 1), 150).ok()); // reuses 1's freed storage; 1's events are still queued
  e.AdvanceTo(10000, r);
  for (const std::string& line : r.log) {
    if (line.rfind("tok 1 ", 0) == 0) {
      EXPECT_EQ(line, "tok 1 @140 x1 c0") << "a cancelled request emitted again";
    }
    EXPECT_NE(line.rfind("fin 1 ", 0), 0u) << line;
  }
  EXPECT_NE(std::find(r.log.begin(), r.log.end(), "sched 2 @150"), r.log.end());
  EXPECT_NE(std::find(r.log.begin(), r.log.end(), "fin 2 @490"), r.log.end());  // 150 + 140 + 4 x 50
  EXPECT_NE(std::find(r.log.begin(), r.log.end(), "fin 3 @630"), r.log.end());  // after 2: 490 + 140
  EXPECT_EQ(e.Stats().running, 0);
  EXPECT_EQ(e.Stats().waiting, 0);
}

TEST(PacedEngine, RepeatedPrefixBlocksAreCached) {
  PacedEngine e(kOpt);
  Recorder r;
  EngineRequest a = Req(1, 1, 40);
  a.block_hashes = {11, 22};
  a.block_tokens = 16;
  EngineRequest b = a;
  b.id = 2;
  ASSERT_TRUE(e.Submit(a, 0).ok());
  ASSERT_TRUE(e.Submit(b, 0).ok());
  e.AdvanceTo(10000, r);
  EXPECT_NE(std::find(r.log.begin(), r.log.end(), "tok 1 @500 x1 c0"), r.log.end());           // 100 + 40 x 10
  EXPECT_NE(std::find(r.log.begin(), r.log.end(), "tok 2 @680 x1 c32"), r.log.end());          // 500 + 100 + 8 x 10
  EXPECT_EQ(e.Stats().prefix_hits_tokens, 32);
  EXPECT_EQ(e.Stats().prefix_queries_tokens, 80);
}

}  // namespace
}  // namespace infereng::serve
