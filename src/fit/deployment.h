// Deployment: one model replica on `count` accelerators, with precisions, parallelism and
// the efficiency factors that turn datasheet peaks into achievable rates.
//
// Parallelism: `tp` ranks shard every layer (attention heads, MLP columns, vocab);
// `count / tp` pipeline stages split the layers; MoE experts are sharded over `ep` ranks
// when ep > 1 (vLLM's expert parallelism), otherwise TP-sliced. Invariants (Validate):
// tp >= 1, count % tp == 0, 1 <= ep <= count.
#pragma once

#include "catalog/accelerator_spec.h"
#include "catalog/model_spec.h"
#include "catalog/precision.h"
#include "core/status.h"

namespace infereng::fit {

using catalog::Precision;

// Achieved fraction of datasheet peaks, plus the fixed costs the roofline ignores.
// Defaults: flops, bandwidth and layer_overhead fitted to NVIDIA's 30 published TensorRT-LLM
// offline-throughput rows on H100/H200 (median |error| 18.7% -> 9.3%) and checked on held-out
// latency rows (NIM 1.8.0, Llama-3.3-70B FP8 TP2: ITL median |error| 13.1% -> 2.2%);
// docs/FIDELITY.md has both tables and the commands. All are user-overridable (`fit
// --eff-flops ...`, `--set cost.*`, card engine knobs) and `calibrate` fits them per engine.
struct Efficiency {
  double flops = 0.5;          // matmul FLOP/s achieved / dense peak
  double bandwidth = 0.8;      // HBM bytes/s achieved / peak
  double interconnect = 0.8;   // collective bus bandwidth achieved / link peak
  double step_overhead_s = 1e-3;  // per engine step: scheduling, sampling, detokenising,
                                  // launch (CPU work not hidden by CUDA graphs)
  double layer_overhead_s = 10e-6;  // per layer per step: kernel tails/launch gaps the roofline
                                    // misses (one simulator adds ~3 us per memory op); calibrate
  double collective_launch_s = 20e-6;  // per collective call (fit/collective.h): NCCL's LL base
                                       // latency is 6.6 us; engines pay ~20 us per decode all-reduce
};

struct Deployment {
  catalog::ModelSpec model;
  catalog::AcceleratorSpec accel;
  Precision weights = Precision::kBf16;
  Precision kv = Precision::kBf16;
  int count = 1;  // accelerators per replica
  int tp = 1;
  int ep = 1;
  Efficiency eff;

  int pp() const { return tp > 0 ? count / tp : 1; }
  // Ranks an expert layer is split over: ep when expert-parallel, else tp.
  int expert_shards() const { return ep > 1 ? ep : tp; }
};

// InvalidArgument naming the offending field ("--tp 3 does not divide --count 4").
Status Validate(const Deployment& d);

}  // namespace infereng::fit
