// engine.scheduler presets: what each sets, that a key the user set wins whatever the order
// (--set flags in any order; a card's engine: map, applied in key order), and the errors.
#include "twin/engine_config.h"

#include <gtest/gtest.h>

namespace infereng::twin {
namespace {

TEST(SchedulerPreset, EachPresetSetsItsEngineDefaults) {
  TwinSettings t;
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=llamacpp").ok());
  EXPECT_EQ(t.engine.scheduler, EngineScheduler::kLlamaCpp);
  EXPECT_EQ(t.engine.max_num_batched_tokens, 2048);  // llama-server n_batch
  EXPECT_EQ(t.engine.max_num_seqs, 1);               // -np 1 in b4748
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=trtllm").ok());
  EXPECT_EQ(t.engine.scheduler, EngineScheduler::kTrtLlm);
  EXPECT_EQ(t.engine.capacity, CapacityPolicy::kGuaranteedNoEvict);
  EXPECT_EQ(t.engine.max_num_batched_tokens, 8192);  // nothing of llamacpp's left behind
  EXPECT_EQ(t.engine.max_num_seqs, 256);
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=vllm").ok());
  EXPECT_EQ(t.engine.capacity, CapacityPolicy::kMaxUtilization);
  EXPECT_EQ(t.engine.policy, SchedulingPolicy::kDecodeFirst);
  EXPECT_EQ(EngineSchedulerName(EngineScheduler::kLlamaCpp), "llamacpp");
}

// The 2024-engine presets: prefill-only steps first and their host costs (FIDELITY.md (d3));
// switching back to a current engine's preset clears the host costs.
TEST(SchedulerPreset, TheOlderEnginePresetsCarryHostCosts) {
  TwinSettings t;
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=vllm-v0").ok());
  EXPECT_EQ(t.engine.scheduler, EngineScheduler::kVllmV0);
  EXPECT_EQ(t.engine.policy, SchedulingPolicy::kPrefillFirst);
  EXPECT_DOUBLE_EQ(t.engine.step_overhead_s, 2e-3);
  EXPECT_DOUBLE_EQ(t.engine.seq_overhead_s, 25e-6);
  EXPECT_DOUBLE_EQ(t.engine.HostSeconds(10), 2.25e-3);
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=sglang-0.3").ok());
  EXPECT_EQ(t.engine.scheduler, EngineScheduler::kSglang);
  EXPECT_EQ(t.engine.policy, SchedulingPolicy::kPrefillFirst);
  EXPECT_DOUBLE_EQ(t.engine.step_overhead_s, 1.5e-3);
  EXPECT_DOUBLE_EQ(t.engine.seq_overhead_s, 25e-6);
  EXPECT_EQ(EngineSchedulerName(EngineScheduler::kSglang), "sglang-0.3");
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.scheduler=trtllm").ok());
  EXPECT_EQ(t.engine.policy, SchedulingPolicy::kDecodeFirst);
  EXPECT_DOUBLE_EQ(t.engine.HostSeconds(10), 0);
  // A host cost the user set survives the preset, in either order.
  TwinSettings u;
  ASSERT_TRUE(ApplyTwinAssignment(u, "engine.seq_overhead=80us").ok());
  ASSERT_TRUE(ApplyTwinAssignment(u, "engine.scheduler=sglang-0.3").ok());
  EXPECT_DOUBLE_EQ(u.engine.seq_overhead_s, 80e-6);
  EXPECT_FALSE(ApplyTwinAssignment(u, "engine.seq_overhead=-1us").ok());
}

TEST(SchedulerPreset, AKeyTheUserSetWinsInEitherOrder) {
  TwinSettings before, after;
  ASSERT_TRUE(ApplyTwinAssignment(before, "engine.slots=4").ok());
  ASSERT_TRUE(ApplyTwinAssignment(before, "engine.max_num_batched_tokens=512").ok());
  ASSERT_TRUE(ApplyTwinAssignment(before, "engine.scheduler=llamacpp").ok());
  ASSERT_TRUE(ApplyTwinAssignment(after, "engine.scheduler=llamacpp").ok());
  ASSERT_TRUE(ApplyTwinAssignment(after, "engine.slots=4").ok());
  ASSERT_TRUE(ApplyTwinAssignment(after, "engine.max_num_batched_tokens=512").ok());
  for (const TwinSettings* t : {&before, &after}) {
    EXPECT_EQ(t->engine.max_num_seqs, 4);
    EXPECT_EQ(t->engine.max_num_batched_tokens, 512);
    EXPECT_EQ(t->engine.scheduler, EngineScheduler::kLlamaCpp);
  }
  // A card's map is applied in key order ("capacity_policy" before "scheduler").
  TwinSettings card;
  ASSERT_TRUE(ApplyEngineMap(card, {{"capacity_policy", "guaranteed_no_evict"}, {"scheduler", "vllm"}}).ok());
  EXPECT_EQ(card.engine.capacity, CapacityPolicy::kGuaranteedNoEvict);
}

TEST(SchedulerPreset, BadValuesNameTheKeyAndTheChoices) {
  TwinSettings t;
  const Status s = ApplyTwinAssignment(t, "engine.scheduler=tgi");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("engine.scheduler"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("vllm, trtllm, llamacpp, vllm-v0 or sglang-0.3"), std::string::npos) << s.ToString();
  EXPECT_FALSE(ApplyTwinAssignment(t, "engine.slot_prompt_similarity=1.5").ok());
  EXPECT_FALSE(ApplyTwinAssignment(t, "engine.context_shift=maybe").ok());
  EXPECT_TRUE(ApplyTwinAssignment(t, "engine.context_shift=false").ok());
  EXPECT_FALSE(t.engine.context_shift);
}

// engine.admission_window: a duration, never negative (a batch formed before the step ended
// would send the engine back in time), and the error says what it is.
TEST(EngineKnobs, AdmissionWindowIsANonNegativeDuration) {
  TwinSettings t;
  ASSERT_TRUE(ApplyTwinAssignment(t, "engine.admission_window=500us").ok());
  EXPECT_DOUBLE_EQ(t.engine.admission_window_s, 500e-6);
  EXPECT_EQ(t.engine.AfterFinishes(0), 0);
  EXPECT_EQ(t.engine.AfterFinishes(3), 1'500'000);
  EXPECT_EQ(t.engine.BatchAt(10'000'000, 9'000'000), 10'000'000);  // arrived while busy: at the end
  EXPECT_EQ(t.engine.BatchAt(10'000'000, 12'000'000), 12'500'000);  // woke an idle engine
  for (const char* bad : {"engine.admission_window=-1ms", "engine.admission_window=soon"}) {
    const Status s = ApplyTwinAssignment(t, bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("engine.admission_window"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("host time per finished request"), std::string::npos) << s.ToString();
  }
  EXPECT_DOUBLE_EQ(t.engine.admission_window_s, 500e-6);  // a refused value changes nothing
}

}  // namespace
}  // namespace infereng::twin
