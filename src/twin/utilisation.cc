// Mean-field saturation estimate of a simulated run (see saturation.h).
#include "twin/utilisation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/units.h"

namespace infereng::twin {

namespace {

// The decode step at the largest batch the KV cache and max_num_seqs allow.
struct DecodeBatch {
  int32_t b = 1;
  StepShape shape;
  double step_s = 0;
};
DecodeBatch LargestDecodeBatch(const EngineConfig& ec, const CostModel& cost, double m_in, double m_out) {
  DecodeBatch db;
  const double ctx = m_in + m_out / 2;
  const double kv_seqs = static_cast<double>(ec.kv_cache_tokens) / (ctx + ec.block_size);
  db.b = static_cast<int32_t>(std::max(1.0, std::min<double>(ec.max_num_seqs, std::floor(kv_seqs))));
  db.shape.decode_seqs = db.b;
  db.shape.decode_tokens_per_seq = 1 + ec.spec_tokens;
  db.shape.decode_context = static_cast<int64_t>(db.b * ctx);
  db.step_s = cost.StepSeconds(db.shape) + ec.HostSeconds(db.b);
  if (ec.spec_tokens > 0) db.step_s += ec.spec_tokens * cost.DraftStepSeconds(db.b, db.shape.decode_context);
  return db;
}

}  // namespace

PoolSeconds PoolSecondsPerRequest(const EngineConfig& ec, const CostModel& cost, double m_in, double m_out,
                                  double hit) {
  m_out = std::max(1.0, m_out);
  const DecodeBatch db = LargestDecodeBatch(ec, cost, m_in, m_out);
  PoolSeconds ps;
  const int64_t prompt = static_cast<int64_t>(std::max(1.0, m_in * (1 - hit)));
  const int64_t per_step = std::max<int64_t>(1, ec.max_num_batched_tokens / prompt);
  StepShape full;
  full.prefill_seqs = static_cast<int32_t>(per_step);
  full.prefill_tokens = prompt * per_step;
  full.prefill_context = static_cast<int64_t>(m_in * hit) * per_step;
  ps.prefill_s = (cost.StepSeconds(full) + ec.HostSeconds(per_step)) / static_cast<double>(per_step);
  StepShape last = db.shape;
  last.prefill_seqs = 1;
  last.prefill_tokens = 1;
  last.prefill_context = static_cast<int64_t>(m_in);
  ps.decode_s = std::max(0.0, cost.StepSeconds(last) + ec.HostSeconds(db.b + 1) - db.step_s) +
                (m_out - 1) * db.step_s / (db.b * ec.SpecTokensPerRound());
  return ps;
}

void EstimateUtilisation(const EngineConfig& ec, const CostModel& cost, const UtilisationInputs& in,
                        TwinReport& t) {
  const double arrival_s = in.arrival_s, offered_rps = in.offered_rps;
  const double m_in = in.mean_input_tokens, m_out = std::max(1.0, in.mean_output_tokens);
  const double hit = t.prefix_hit_rate;
  const DecodeBatch db = LargestDecodeBatch(ec, cost, m_in, m_out);
  const int32_t b = db.b;
  const StepShape& d = db.shape;
  const double t_d = db.step_s;
  StepShape mix = d;
  mix.prefill_seqs = 1;
  mix.prefill_tokens = static_cast<int64_t>(std::max(1.0, m_in * (1 - hit)));
  mix.prefill_context = static_cast<int64_t>(m_in * hit);
  StepShape alone;
  alone.prefill_seqs = 1;
  alone.prefill_tokens = mix.prefill_tokens;
  alone.prefill_context = mix.prefill_context;
  const double c_p = std::max(cost.StepSeconds(mix) + ec.HostSeconds(b + 1) - t_d,
                              (cost.StepSeconds(alone) + ec.HostSeconds(1)) / b);
  const double per_req = c_p + (m_out - 1) * t_d / (b * ec.SpecTokensPerRound());
  const double serving_mean = std::max(1e-9, in.serving_replicas_mean);
  t.capacity_rps_estimate = per_req > 0 ? serving_mean / per_req : 0;
  if (in.prefill_replicas > 0 && in.decode_replicas > 0) {
    const PoolSeconds ps = PoolSecondsPerRequest(ec, cost, m_in, m_out, hit);
    const double p_cap = ps.prefill_s > 0 ? in.prefill_replicas / ps.prefill_s : 0;
    const double d_cap = ps.decode_s > 0 ? in.decode_replicas / ps.decode_s : p_cap;
    t.capacity_rps_estimate = std::min(p_cap, d_cap);
  }
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
