#include "job/client_saturation.h"

#include <fmt/format.h>

#include <algorithm>

namespace infereng::job {

void SteadyLagCollector::Add(Nanos t_sched, Nanos t_send, Nanos t_end) {
  if (t_end >= 0 && (first_end_ < 0 || t_end < first_end_)) first_end_ = t_end;
  if (t_sched < 0 || t_send < 0) return;  // never sent: no lag
  samples_.push_back({t_sched, t_send - t_sched});
}

std::vector<double> SteadyLagCollector::SteadyLagMs(Nanos steady_from, Nanos window_end) const {
  const Nanos from = std::max(steady_from, first_end_);
  std::vector<double> out;
  for (const Sample& s : samples_) {
    if (s.t_sched >= from && (window_end < 0 || s.t_sched <= window_end)) out.push_back(NanosToMillis(s.lag));
  }
  return out;
}

std::optional<double> BusiestIoCpuShare(const std::vector<Nanos>& before, const std::vector<Nanos>& after, Nanos wall) {
  if (wall <= 0 || before.size() != after.size()) return std::nullopt;
  Nanos busiest = 0;
  for (size_t i = 0; i < after.size(); ++i) busiest = std::max(busiest, after[i] - before[i]);
  return static_cast<double>(busiest) / static_cast<double>(wall);
}

ClientSaturation JudgeSaturation(const client::RxStampStats& stamps, std::optional<double> io_cpu_share,
                                 std::vector<double> steady_lag_ms, const SaturationLimits& limits,
                                 std::optional<double> itl_p50_ms) {
  ClientSaturation s;
  s.limits = limits;
  s.stamp_source = stamps.Source();
  if (stamps.delay_ms.count() > 0) s.stamp_delay_ms = stamps.delay_ms.Stats();
  s.io_cpu_share = io_cpu_share;
  s.steady_lag_ms = stats::SummarizeInPlace(steady_lag_ms);
  const bool by_itl = itl_p50_ms && *itl_p50_ms * limits.stamp_delay_itl_share > limits.stamp_delay_p99_ms;
  s.stamp_delay_limit_ms = by_itl ? *itl_p50_ms * limits.stamp_delay_itl_share : limits.stamp_delay_p99_ms;
  if (!s.stamp_delay_ms.empty() && s.stamp_delay_ms.p99 > s.stamp_delay_limit_ms) {
    s.reasons.push_back(fmt::format("events waited {:.2f} ms at P99 in the socket before the client read them "
                                    "(limit {:.1f} ms{})",
                                    s.stamp_delay_ms.p99, s.stamp_delay_limit_ms,
                                    by_itl ? fmt::format(": {:.0f}% of the median ITL {:.1f} ms, when a stream's next "
                                                         "event would share the read",
                                                         limits.stamp_delay_itl_share * 100, *itl_p50_ms)
                                           : std::string()));
  }
  if (io_cpu_share && *io_cpu_share > limits.io_cpu_share) {
    s.reasons.push_back(fmt::format("the io thread was busy {:.0f}% of the measured phase (limit {:.0f}%)",
                                    *io_cpu_share * 100, limits.io_cpu_share * 100));
  }
  if (!s.steady_lag_ms.empty() && s.steady_lag_ms.p99 > limits.steady_lag_p99_ms) {
    s.reasons.push_back(fmt::format("requests left {:.2f} ms late at P99 in the steady phase (limit {:.1f} ms)",
                                    s.steady_lag_ms.p99, limits.steady_lag_p99_ms));
  }
  s.client_shaped = !s.reasons.empty();
  return s;
}

nlohmann::json SaturationToJson(const ClientSaturation& s) {
  auto brief = [](const stats::SampleStats& st) {
    return nlohmann::json{{"count", st.count}, {"p50", st.p50}, {"p99", st.p99}, {"max", st.max}};
  };
  return {{"stamp_source", s.stamp_source},
          {"stamp_delay_ms", brief(s.stamp_delay_ms)},
          {"io_cpu_share", s.io_cpu_share ? nlohmann::json(*s.io_cpu_share) : nlohmann::json(nullptr)},
          {"steady_schedule_lag_ms", brief(s.steady_lag_ms)},
          {"client_shaped", s.client_shaped},
          {"reasons", s.reasons},
          {"stamp_delay_limit_ms", s.stamp_delay_limit_ms},
          {"limits",
           {{"stamp_delay_p99_ms", s.limits.stamp_delay_p99_ms},
            {"stamp_delay_itl_share", s.limits.stamp_delay_itl_share},
            {"io_cpu_share", s.limits.io_cpu_share},
            {"steady_schedule_lag_p99_ms", s.limits.steady_lag_p99_ms}}}};
}

std::string SaturationNote(const ClientSaturation& s) {
  if (!s.client_shaped) return {};
  std::string note = "the client shaped these results: ";
  for (size_t i = 0; i < s.reasons.size(); ++i) note += (i ? "; " : "") + s.reasons[i];
  return note + " (summary.json client.saturation; docs/metrics.md)";
}

}  // namespace infereng::job
