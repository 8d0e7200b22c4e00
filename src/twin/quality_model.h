// The twin's quality what-if: how much of the full-precision answer accuracy a model keeps
// when its weights are quantised, so the embedded engine (serve, `run`) shows a
// quantisation experiment as "faster but worse" instead of free speed.
//
// ASSUMPTION (illustrative, not a measurement): bf16/fp16 keep 1.0; fp8 0.99; int8 0.98;
// int4 0.95; fp4 0.93. The order follows published quantisation studies (FP8 W8A8 close to
// lossless, 4-bit weight-only methods losing a few points on reasoning sets such as GSM8K,
// e.g. Kurtic et al. 2024, "Give Me BF16 or Give Me Death? Accuracy-Performance
// Trade-Offs in LLM Quantization", arXiv:2411.02355), but the loss depends on the model, the method and the
// task: measure your own model on your own eval set and set --quality-accuracy from it.
#pragma once

#include <string_view>

namespace infereng::twin {

// The accuracy multiplier for weights stored in `precision` (a card's model.precision);
// 1.0 for bf16, fp16, fp32 and unknown names.
double PrecisionAccuracyFactor(std::string_view precision);

}  // namespace infereng::twin
