// AcceleratorSpec: the datasheet figures of one accelerator that fit and roofline use.
//
// Every figure is in base SI units (bytes, bytes/s, FLOP/s, seconds, USD) and dense
// (without 2:4 sparsity). `sources` maps each figure's key ("memory", "bandwidth",
// "flops.bf16", ...) to where it came from, so `infereng accelerators` and `fit` can
// show it. Memory is the capacity the driver reports (nvidia-smi "MiB" total) where known,
// not the marketing "80GB": GiB vs GB is explicit in the catalog files.
#pragma once

#include <map>
#include <string>

#include "catalog/precision.h"

namespace infereng::catalog {

struct AcceleratorSpec {
  std::string name;          // catalog name, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // nvidia | amd | google

  double memory_bytes = 0;          // device memory visible to the runtime
  double bandwidth_bytes_per_s = 0; // peak memory bandwidth
  // Dense peak matmul throughput by operand precision; 0 = not supported.
  double flops_bf16 = 0;
  double flops_fp8 = 0;
  double flops_int8 = 0;            // TOPS counted as FLOP/s
  double flops_fp4 = 0;
  // Scale-up link per accelerator, one direction (datasheets often quote both
  // directions summed: NVLink4 "900 GB/s" = 450 GB/s each way).
  std::string interconnect_name;    // e.g. "NVLink4"
  double interconnect_bytes_per_s = 0;
  double interconnect_latency_s = 0;  // per hop of a ring collective
  double price_per_hour_usd = 0;      // default; users override (--price-per-hour, card)

  std::map<std::string, std::string> sources;  // figure key -> source text

  // Peak dense FLOP/s for matmuls whose weights are stored in `weights`:
  // bf16 -> bf16; fp8 -> fp8 (bf16 if unsupported: weight-only FP8 as on A100);
  // int8 -> int8 (W8A8); int4 -> bf16 (weight-only kernels dequantise to BF16);
  // fp4 -> fp4 when supported, else bf16.
  double PeakFlops(Precision weights) const;
};

}  // namespace infereng::catalog
