// Numeric precisions for weights, KV cache and compute, and what each costs in bits.
//
// Weight precisions describe the linear (matmul) weights. Embeddings, the LM head and
// norms stay BF16 under every quantised format (what vLLM does for FP8/INT8/AWQ/GPTQ
// checkpoints); fit/weights.h applies that split.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace infereng::catalog {

enum class Precision { kBf16, kFp8, kInt8, kInt4, kFp4 };

// "bf16" (also "fp16", "bfloat16", "half"), "fp8", "int8", "int4", "fp4".
Result<Precision> ParsePrecision(std::string_view text);
std::string_view PrecisionName(Precision p);

// Bits stored per linear weight, scales included:
//   bf16 16; fp8 8 (per-tensor/per-channel or 128x128 block scales: < 0.01 bit, ignored);
//   int8 8; int4 4.125 (group size 128 with one FP16 scale per group: 4 + 16/128);
//   fp4 4.5 (NVFP4: an FP8 scale per 16 values: 4 + 8/16).
double WeightBitsPerParam(Precision p);

// Bytes per KV-cache element: bf16 2, fp8 1 (int8 1, int4/fp4 0.5 for completeness).
double KvBytesPerElement(Precision p);

}  // namespace infereng::catalog
