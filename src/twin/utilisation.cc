// Mean-field saturation estimate of a simulated run (see saturation.h).
#include "twin/utilisation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/units.h"

namespace infereng::twin {

void EstimateUtilisation(const EngineConfig& ec, const CostModel& cost, const UtilisationInputs& in,
                        TwinReport& t) {
  const double arrival_s = in.arrival_s, offered_rps = in.offered_rps;
  const double m_in = in.mean_input_tokens, m_out = std::max(1.0, in.mean_output_tokens);
  const double hit = t.prefix_hit_rate;
  const double ctx = m_in + m_out / 2;
  const double kv_seqs = static_cast<double>(ec.kv_cache_tokens) / (ctx + ec.block_size);
  const int32_t b = static_cast<int32_t>(std::max(1.0, std::min<double>(ec.max_num_seqs, std::floor(kv_seqs))));
  StepShape d;
  d.decode_seqs = b;
  d.decode_tokens_per_seq = 1 + ec.spec_tokens;
  d.decode_context = static_cast<int64_t>(b * ctx);
  double t_d = cost.StepSeconds(d) + ec.step_overhead_s;
  if (ec.spec_tokens > 0) t_d += ec.spec_tokens * cost.DraftStepSeconds(b, d.decode_context);
  StepShape mix = d;
  mix.prefill_seqs = 1;
  mix.prefill_tokens = static_cast<int64_t>(std::max(1.0, m_in * (1 - hit)));
  mix.prefill_context = static_cast<int64_t>(m_in * hit);
  StepShape alone;
  alone.prefill_seqs = 1;
  alone.prefill_tokens = mix.prefill_tokens;
  alone.prefill_context = mix.prefill_context;
  const double c_p = std::max(cost.StepSeconds(mix) + ec.step_overhead_s - t_d,
                              (cost.StepSeconds(alone) + ec.step_overhead_s) / b);
  const double per_req = c_p + (m_out - 1) * t_d / (b * ec.SpecTokensPerRound());
  const double serving_mean = std::max(1e-9, in.serving_replicas_mean);
  t.capacity_rps_estimate = per_req > 0 ? serving_mean / per_req : 0;
  t.utilisation_estimate = t.capacity_rps_estimate > 0 ? offered_rps / t.capacity_rps_estimate : 0;
  // Queue growth: mean waiting over the last quarter of the arrivals vs the first half.
  double first = 0, last = 0;
  int nf = 0, nl = 0;
  for (const ClusterSample& s : t.over_time) {
    if (s.t_s < arrival_s / 2) { first += s.waiting; ++nf; }
    else if (s.t_s >= arrival_s * 0.75 && s.t_s <= arrival_s) { last += s.waiting; ++nl; }
  }
  if (nf > 0 && nl > 0) {
    first /= nf;
    last /= nl;
    t.queue_growing = last > 2 * first + 2.0 * std::max(1.0, serving_mean);
  }
  t.near_saturation = t.utilisation_estimate >= 0.9 || t.queue_growing || t.incomplete > 0;
  if (t.near_saturation) {
    // Past 1 the system is not near saturation but over it: say by how much.
    const std::string load =
        t.utilisation_estimate > 1
            ? "overloaded: the offered " + units::FormatSignificant(offered_rps, 3) + " rps is " +
                  units::FormatSignificant(t.utilisation_estimate, 3) + "x the estimated capacity of ~" +
                  units::FormatSignificant(t.capacity_rps_estimate, 3) + " rps"
            : "near saturation: estimated utilisation " + units::FormatSignificant(t.utilisation_estimate, 2) +
                  " (offered " + units::FormatSignificant(offered_rps, 3) + " rps vs capacity ~" +
                  units::FormatSignificant(t.capacity_rps_estimate, 3) + " rps)";
    t.saturation_note = load + (t.queue_growing ? "; the queue was still growing when arrivals stopped" : "") +
                        (t.incomplete > 0 ? "; some requests never finished" : "") +
                        ". Close to saturation small step-cost errors explode queueing: treat TTFT and queue "
                        "percentiles as unreliable, and calibrate the cost model before trusting them.";
  }
}

}  // namespace infereng::twin
