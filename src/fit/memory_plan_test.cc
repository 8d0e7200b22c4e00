#include "fit/memory_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fit/fit_test_util.h"

namespace infereng::fit {
namespace {

using ::testing::HasSubstr;
using test::Make;

TEST(Weights, Llama8bBf16) {
  const WeightBytes w = ComputeWeightBytes(Make("llama-3.1-8b", "h100-sxm"));
  // 8,030,261,248 parameters x 2 B.
  EXPECT_NEAR(w.total, 16.06e9, 0.01 * 16.06e9);
  EXPECT_DOUBLE_EQ(w.total, 8'030'261'248.0 * 2);
  EXPECT_DOUBLE_EQ(w.per_gpu, w.total);
}

TEST(Weights, QuantisedKeepsEmbeddingsInBf16) {
  const WeightBytes bf16 = ComputeWeightBytes(Make("llama-3.1-8b", "h100-sxm"));
  const WeightBytes int4 = ComputeWeightBytes(Make("llama-3.1-8b", "h100-sxm", 1, 1, Precision::kInt4));
  const WeightBytes fp8 = ComputeWeightBytes(Make("llama-3.1-8b", "h100-sxm", 1, 1, Precision::kFp8));
  const double embed = 2.0 * 128256 * 4096 * 2;  // embedding + LM head, BF16
  EXPECT_DOUBLE_EQ(int4.embeddings, embed);
  // Linear weights: 6,979,321,856 params (total minus embeddings and norms) x 4.125 bit.
  const double linear_params = 8'030'261'248.0 - 2.0 * 128256 * 4096 - (2.0 * 4096 * 32 + 4096);
  EXPECT_NEAR(int4.linear, linear_params * 4.125 / 8, 1);
  EXPECT_NEAR(fp8.linear, linear_params, 1);
  EXPECT_LT(int4.total, fp8.total);
  EXPECT_LT(fp8.total, bf16.total);
}

TEST(Weights, MoeKeepsEveryExpertResident) {
  const Deployment d = Make("mixtral-8x7b", "h100-sxm", 2, 2);
  const WeightBytes w = ComputeWeightBytes(d);
  const auto p = catalog::CountParams(d.model);
  EXPECT_DOUBLE_EQ(w.total, 2.0 * static_cast<double>(p.total));  // all 8 experts, not 2
  EXPECT_GT(w.total, 3.0 * 2 * static_cast<double>(p.active));
  EXPECT_NEAR(w.per_gpu, w.total / 2, 1);
  // Expert parallelism moves experts, it does not drop them.
  Deployment ep = d;
  ep.ep = 2;
  EXPECT_NEAR(ComputeWeightBytes(ep).per_gpu, w.total / 2, 1);
}

TEST(Kv, GqaBytesPerToken) {
  EXPECT_DOUBLE_EQ(ComputeKv(Make("llama-3.1-8b", "h100-sxm")).bytes_per_token, 131'072);
  EXPECT_DOUBLE_EQ(ComputeKv(Make("llama-3.1-70b", "h100-sxm", 4, 4)).bytes_per_token, 327'680);
  Deployment fp8 = Make("llama-3.1-8b", "h100-sxm");
  fp8.kv = Precision::kFp8;
  EXPECT_DOUBLE_EQ(ComputeKv(fp8).bytes_per_token, 65'536);
}

TEST(Kv, MlaIsLatentPlusRopeAndReplicated) {
  const KvFootprint one = ComputeKv(Make("deepseek-v3", "h200", 1, 1, Precision::kFp8));
  EXPECT_DOUBLE_EQ(one.bytes_per_token, 61.0 * (512 + 64) * 2);  // 70,272 B = 68.6 KiB
  const KvFootprint tp8 = ComputeKv(Make("deepseek-v3", "h200", 8, 8, Precision::kFp8));
  EXPECT_DOUBLE_EQ(tp8.bytes_per_token_per_gpu, 61.0 * 576 * 2);  // not divided by TP
  EXPECT_TRUE(tp8.replicated);
}

TEST(Kv, GqaHeadsReplicateBeyondKvHeads) {
  // Llama-3.1-70B has 8 KV heads: TP4 -> 2 heads per rank; TP8 -> 1; TP16 -> still 1.
  const KvFootprint tp4 = ComputeKv(Make("llama-3.1-70b", "h100-sxm", 4, 4));
  const KvFootprint tp8 = ComputeKv(Make("llama-3.1-70b", "h100-sxm", 8, 8));
  const KvFootprint tp16 = ComputeKv(Make("llama-3.1-70b", "h100-sxm", 16, 16));
  EXPECT_EQ(tp4.heads_per_rank, 2);
  EXPECT_DOUBLE_EQ(tp4.bytes_per_token_per_gpu, 2.0 * 80 * 2 * 128 * 2);
  EXPECT_DOUBLE_EQ(tp8.bytes_per_token_per_gpu, 2.0 * 80 * 1 * 128 * 2);
  EXPECT_FALSE(tp8.replicated);
  EXPECT_DOUBLE_EQ(tp16.bytes_per_token_per_gpu, tp8.bytes_per_token_per_gpu);
  EXPECT_TRUE(tp16.replicated);
  // Pipeline stages split layers instead.
  Deployment pp = Make("llama-3.1-70b", "h100-sxm", 8, 4);
  EXPECT_DOUBLE_EQ(ComputeKv(pp).bytes_per_token_per_gpu, 2.0 * 40 * 2 * 128 * 2);
}

TEST(Plan, Llama70bOnOneH100DoesNotFit) {
  const MemoryPlan p = PlanMemory(Make("llama-3.1-70b", "h100-sxm"), {}, 8192, 1);
  EXPECT_EQ(p.verdict, Verdict::kDoesNotFit);
  EXPECT_THAT(p.reason, HasSubstr("weights alone"));
  EXPECT_LT(p.headroom_bytes, 0);
}

TEST(Plan, Llama70bOnFourH100Tp4Fits) {
  const MemoryPlan p = PlanMemory(Make("llama-3.1-70b", "h100-sxm", 4, 4), {}, 8192, 1);
  EXPECT_EQ(p.verdict, Verdict::kFits) << p.reason;
  EXPECT_GT(p.max_concurrent_sequences, 32);
  EXPECT_GT(p.headroom_bytes, 0);
  // Sum of the line items plus the KV pool is the budget: nothing is hidden.
  double sum = 0;
  for (const auto& it : p.items) sum += it.bytes;
  EXPECT_NEAR(sum + p.kv_pool_bytes, p.budget_bytes, 1);
  EXPECT_NEAR(p.budget_bytes, 0.9 * 81559.0 * 1024 * 1024, 1);
}

TEST(Plan, Llama70bOnTwoH100DependsOnContextAndOverheads) {
  const Deployment d = Make("llama-3.1-70b", "h100-sxm", 2, 2);
  const MemoryPlan short_ctx = PlanMemory(d, {}, 4096, 1);
  EXPECT_EQ(short_ctx.verdict, Verdict::kMarginal) << short_ctx.reason;
  EXPECT_GE(short_ctx.max_concurrent_sequences, 1);
  EXPECT_THAT(short_ctx.reason, HasSubstr("left for KV cache"));

  const MemoryPlan long_ctx = PlanMemory(d, {}, 32768, 1);
  EXPECT_EQ(long_ctx.verdict, Verdict::kDoesNotFit) << long_ctx.reason;
  EXPECT_EQ(long_ctx.max_concurrent_sequences, 0);
  EXPECT_THAT(long_ctx.reason, HasSubstr("one sequence of 32768 tokens needs"));

  // The same context fits once the overheads shrink: the overheads decide the verdict.
  MemoryOptions lean;
  lean.gpu_memory_utilization = 0.95;
  lean.cuda_graph_bytes = 0;
  lean.fragmentation = 0;
  const MemoryPlan lean_plan = PlanMemory(d, lean, 32768, 1);
  EXPECT_NE(lean_plan.verdict, Verdict::kDoesNotFit) << lean_plan.reason;
  EXPECT_GE(lean_plan.max_concurrent_sequences, 1);

  // A batch larger than the pool holds does not fit (issue 10 item 12), and says so.
  const MemoryPlan big_batch = PlanMemory(d, {}, 4096, 64);
  EXPECT_EQ(big_batch.verdict, Verdict::kDoesNotFit);
  EXPECT_THAT(big_batch.reason, HasSubstr("fewer than the 64 requested"));
  EXPECT_LT(big_batch.headroom_bytes, 0);
}

TEST(Plan, CapacityIsInWholeBlocks) {
  const Deployment d = Make("llama-3.1-8b", "h100-sxm");
  const KvCapacity c = ComputeKvCapacity(d, {});
  EXPECT_EQ(c.block_size, 16);
  EXPECT_EQ(c.tokens, c.blocks * 16);
  EXPECT_LE(static_cast<double>(c.tokens) * 131'072, c.pool_bytes_per_gpu);
  EXPECT_GT(static_cast<double>(c.tokens + 16) * 131'072, c.pool_bytes_per_gpu);
  // 8B on an H100: ~60 GB of KV pool, ~450k tokens.
  EXPECT_GT(c.tokens, 400'000);
  EXPECT_LT(c.tokens, 500'000);
  const MemoryPlan p = PlanMemory(d, {}, 1000, 1);
  EXPECT_EQ(p.blocks_per_seq, 63);  // ceil(1000 / 16)
  EXPECT_EQ(p.max_concurrent_sequences, c.blocks / 63);
}

TEST(Validate, RejectsBadParallelism) {
  Deployment d = Make("llama-3.1-8b", "h100-sxm");
  d.count = 4;
  d.tp = 3;
  EXPECT_THAT(Validate(d).message(), HasSubstr("--tp 3 does not divide --count 4"));
  d.tp = 4;
  d.ep = 2;
  EXPECT_THAT(Validate(d).message(), HasSubstr("mixture-of-experts"));
}

}  // namespace
}  // namespace infereng::fit
