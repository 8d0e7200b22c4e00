#include "fit/step_cost.h"

#include <cmath>

#include <gtest/gtest.h>

#include "fit/fit_test_util.h"
#include "fit/memory_plan.h"
#include "fit/roofline.h"

namespace infereng::fit {
namespace {

using test::Make;

TEST(StepCost, DecodeAtBatchOneIsMemoryBoundAtWeightsOverBandwidth) {
  const Deployment d = Make("llama-3.1-8b", "h100-sxm");
  const RooflineStepCost cost(d);
  const StepCost c = cost.Decode(1, 1);
  EXPECT_TRUE(c.memory_bound());
  // Every weight but the embedding table (only one row per token is read) per step.
  const double weights = ComputeWeightBytes(d).total;
  const double embedding = 128256.0 * 4096 * 2;
  EXPECT_NEAR(c.memory_s, (weights - embedding) / (0.8 * 3.35e12), 0.01 * c.memory_s);
  EXPECT_NEAR(c.memory_s, weights / (0.8 * 3.35e12), 0.08 * c.memory_s);  // ~ weights / BW
  EXPECT_DOUBLE_EQ(c.fixed_s, 1e-3 + 32 * 10e-6);  // step overhead + 32 layers x 10 us
  EXPECT_DOUBLE_EQ(c.comm_s, 0);  // one GPU
  EXPECT_DOUBLE_EQ(c.total_s, c.memory_s + c.fixed_s);
  // ~5.6 ms of HBM time for ~15 GB at 2.68 TB/s.
  EXPECT_GT(c.memory_s, 5.3e-3);
  EXPECT_LT(c.memory_s, 5.9e-3);
}

TEST(StepCost, RidgeBatchIsSane) {
  const RooflineStepCost cost(Make("llama-3.1-8b", "h100-sxm"));
  const RooflineSummary s = Summarise(cost, 1, 16, 1024);
  EXPECT_NEAR(s.ridge_flop_per_byte, 989.4e12 / 3.35e12, 0.5);  // ~295
  // BF16 decode: ~1 FLOP per weight byte per sequence, so the crossover sits near
  // ridge x eff.flops / eff.bandwidth ~ 210 sequences (a little lower: KV and activations).
  EXPECT_GT(s.compute_bound_batch, 150);
  EXPECT_LT(s.compute_bound_batch, 300);
  EXPECT_FALSE(cost.Decode(static_cast<int32_t>(s.compute_bound_batch), 16).memory_bound());
  EXPECT_TRUE(cost.Decode(static_cast<int32_t>(s.compute_bound_batch) - 1, 16).memory_bound());
  // Long contexts add KV reads (GQA: ~8 FLOP per KV byte), pushing the crossover out.
  const RooflineSummary long_ctx = Summarise(cost, 1, 32768, 1);
  EXPECT_TRUE(long_ctx.compute_bound_batch == 0 || long_ctx.compute_bound_batch > 1000);
  // Throughput rises with batch.
  EXPECT_GT(s.peak_output_tokens_per_s, 100 / cost.Decode(100, 16).total_s * 0.999);
}

TEST(StepCost, PrefillIsComputeBoundAndQuadraticInAttention) {
  const Deployment d = Make("llama-3.1-8b", "h100-sxm");
  const RooflineStepCost cost(d);
  const StepCost p = cost.Prefill(8192);
  EXPECT_FALSE(p.memory_bound());
  const auto params = catalog::CountParams(d.model);
  const double linear = 2.0 * static_cast<double>(params.total - 2 * 128256LL * 4096) * 8192;
  const double attn = 4.0 * 32 * 128 * 32 * 8192.0 * (8192 / 2.0);  // causal half
  const double lm_head = 2.0 * 128256 * 4096;
  EXPECT_NEAR(p.flops, linear + attn + lm_head, 0.001 * p.flops);
  EXPECT_NEAR(p.compute_s, p.flops / (0.5 * 989.4e12), 1e-9);
  // A chunk on top of cached tokens attends to them too.
  EXPECT_GT(cost.Prefill(512, 8000).flops, cost.Prefill(512, 0).flops);
}

TEST(StepCost, ChunkShapesEstimateAttentionWhenPairsNotGiven) {
  const RooflineStepCost cost(Make("llama-3.1-8b", "h100-sxm"));
  StepShape exact;
  exact.prefill_seqs = 1;
  exact.prefill_tokens = 1024;
  exact.prefill_context = 2048;
  exact.prefill_attn_pairs = 1024.0 * (2048 + 512);
  StepShape estimated = exact;
  estimated.prefill_attn_pairs = -1;
  EXPECT_DOUBLE_EQ(cost.Cost(exact).flops, cost.Cost(estimated).flops);
  EXPECT_DOUBLE_EQ(cost.Cost(StepShape{}).total_s, 0);  // empty step
}

TEST(StepCost, MoeTouchesMoreExpertsWithMoreTokens) {
  const Deployment d = Make("mixtral-8x7b", "h100-sxm", 2, 2);
  const RooflineStepCost cost(d);
  const StepCost b1 = cost.Decode(1, 128);
  const StepCost b64 = cost.Decode(64, 128);
  const auto p = catalog::CountParams(d.model);
  const double expert_bytes = static_cast<double>(p.per_expert) * 2 / 2;  // BF16, over TP2
  // Batch 1 reads k=2 of 8 experts per layer: E(1-(1-k/E)^1) = 2.
  const double non_expert = b1.bytes - 32 * 2 * expert_bytes;
  // Batch 64: all 8 experts (1 - 0.75^64 ~ 1).
  const double b64_experts = 32 * 8 * (1 - std::pow(0.75, 64)) * expert_bytes;
  EXPECT_GT(non_expert, 0);
  EXPECT_LT(non_expert, 0.25 * b1.bytes);
  // The rest grows by 63 tokens' KV (128 read + 1 written, 65,536 B each per GPU at TP2)
  // and activations (32 layers x (4 x 4096 + 3 x 14,336) x 2 B).
  const double per_token = 65'536.0 * 129 + 32.0 * (4 * 4096 + 3 * 14'336) * 2;
  EXPECT_NEAR(b64.bytes - b64_experts, non_expert + 63 * per_token, 1e-6 * b64.bytes);
  EXPECT_GT(b64.bytes, 3 * b1.bytes);
  // Active FLOPs only: 2 experts per token.
  EXPECT_NEAR(b1.flops, 2.0 * static_cast<double>(p.active - 2 * 32000LL * 4096) + 2.0 * 32000 * 4096 +
                            4.0 * 32 * 128 * 32 * 128, 0.001 * b1.flops);
}

TEST(StepCost, TensorParallelAddsAllReduceAndSplitsWork) {
  const RooflineStepCost tp1(Make("llama-3.1-70b", "h100-sxm", 1, 1));
  const RooflineStepCost tp4(Make("llama-3.1-70b", "h100-sxm", 4, 4));
  const StepCost a = tp1.Decode(8, 1024);
  const StepCost b = tp4.Decode(8, 1024);
  EXPECT_DOUBLE_EQ(a.comm_s, 0);
  // 2 all-reduces x 80 layers, each a 20 us launch (the engine-level default) + 2(TP-1) = 6
  // hops of 0.6 us (NCCL's NVLink LL figure), plus 8 tokens of 16 KiB each.
  const double calls = 2.0 * 80;
  const double bytes = 8.0 * 2 * 80 * 2 * 3.0 / 4 * 8192 * 2;
  EXPECT_NEAR(b.comm_s, calls * (20e-6 + 6 * 0.6e-6) + bytes / (0.8 * 450e9), 1e-9);
  EXPECT_NEAR(b.memory_s, a.memory_s / 4, 0.02 * a.memory_s / 4);
  EXPECT_LT(b.total_s, a.total_s);
}

// Issue 13: small-batch TP decode was charged 2-6 us per all-reduce (hops x 1 us, no
// launch), so the twin's TPOT error grew from TP1 to TP4. Each call now pays its launch, and
// the latency term is the same at any batch (it is what dominates small messages).
TEST(StepCost, EveryAllReduceCallPaysItsLaunch) {
  Deployment d = Make("llama-3.1-70b", "h100-sxm", 2, 2);
  const StepCost tp2 = RooflineStepCost(d).Decode(1, 1024);
  EXPECT_NEAR(tp2.comm_s - 1.0 * 2 * 80 * 2.0 / 2 * 8192 * 2 / (0.8 * 450e9), 160 * 21.2e-6, 1e-9);
  d.eff.collective_launch_s = 0;
  d.accel.interconnect_latency_s = 1e-6;  // the old model: hops only
  const StepCost old2 = RooflineStepCost(d).Decode(1, 1024);
  EXPECT_NEAR(tp2.comm_s - old2.comm_s, 160 * (21.2e-6 - 2e-6), 1e-9);
  d.eff.collective_launch_s = 35e-6;  // the knob moves it one for one per call
  EXPECT_NEAR(RooflineStepCost(d).Decode(1, 1024).comm_s - old2.comm_s, 160 * 35e-6, 1e-9);
}

TEST(StepCost, QuantisedWeightsReadFewerBytes) {
  const RooflineStepCost bf16(Make("llama-3.1-8b", "h100-sxm"));
  const RooflineStepCost int4(Make("llama-3.1-8b", "h100-sxm", 1, 1, Precision::kInt4));
  EXPECT_LT(int4.Decode(1, 1).memory_s, 0.45 * bf16.Decode(1, 1).memory_s);
  // FP8 weights use FP8 tensor cores where present.
  const RooflineStepCost fp8(Make("llama-3.1-8b", "h100-sxm", 1, 1, Precision::kFp8));
  EXPECT_NEAR(fp8.Prefill(4096).compute_s, bf16.Prefill(4096).compute_s / 2, 1e-3 * bf16.Prefill(4096).compute_s);
}

TEST(StepCost, SpeculativeVerificationChargesEveryToken) {
  const RooflineStepCost cost(Make("llama-3.1-8b", "h100-sxm"));
  StepShape s;
  s.decode_seqs = 4;
  s.decode_context = 4 * 1000;
  s.decode_tokens_per_seq = 5;
  const StepCost spec = cost.Cost(s);
  s.decode_tokens_per_seq = 1;
  const StepCost plain = cost.Cost(s);
  EXPECT_NEAR(spec.flops / plain.flops, 5.0, 0.01);
}

}  // namespace
}  // namespace infereng::fit
