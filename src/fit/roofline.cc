#include "fit/roofline.h"

#include <algorithm>

namespace infereng::fit {

RooflineSummary Summarise(const RooflineStepCost& cost, int batch, int64_t context, int64_t max_batch) {
  RooflineSummary r;
  batch = std::max(1, batch);
  const Deployment& d = cost.deployment();
  r.decode = cost.Decode(batch, context);
  r.decode_batch1 = cost.Decode(1, context);
  r.prefill = cost.Prefill(std::max<int64_t>(1, context));
  r.ridge_flop_per_byte = d.accel.PeakFlops(d.weights) / d.accel.bandwidth_bytes_per_s;
  r.output_tokens_per_s = r.decode.total_s > 0 ? batch / r.decode.total_s : 0;

  // Smallest batch at which decode is compute-bound: doubling, then bisection.
  constexpr int64_t kLimit = 1 << 20;
  int64_t hi = 1;
  while (hi <= kLimit && cost.Decode(static_cast<int32_t>(hi), context).memory_bound()) hi *= 2;
  if (hi <= kLimit) {
    int64_t lo = hi / 2;  // memory-bound (or 0)
    while (hi - lo > 1) {
      const int64_t mid = (lo + hi) / 2;
      if (cost.Decode(static_cast<int32_t>(mid), context).memory_bound()) lo = mid; else hi = mid;
    }
    r.compute_bound_batch = hi;
  }

  // Peak decode throughput over batches 1..max_batch (each Cost is a few ns).
  const int64_t top = std::clamp<int64_t>(max_batch, 1, 1 << 16);
  for (int64_t b = 1; b <= top; ++b) {
    const StepCost c = cost.Decode(static_cast<int32_t>(b), context);
    const double tps = b / c.total_s;
    if (tps > r.peak_output_tokens_per_s) {
      r.peak_output_tokens_per_s = tps;
      r.peak_batch = b;
    }
  }
  return r;
}

}  // namespace infereng::fit
