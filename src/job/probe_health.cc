// The health-semantics probe: /health while the target is busy (it must keep answering,
// quickly, or an orchestrator kills a healthy replica), and what the cold-start probe saw
// at startup (it must not say ready before the model can serve).
#include <algorithm>

#include <fmt/format.h>

#include "job/probe.h"

namespace infereng::job {

ProbeResult RunHealthProbe(ProbeContext& ctx) {
  ProbeResult res;
  auto first = ctx.client.Get("/health");
  if (!first.ok() || first->status == 404) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "the target has no /health endpoint";
    return res;
  }
  // 8 streams of load with /health polled every 100 ms under them.
  std::vector<CallSpec> calls;
  constexpr int kLoad = 8, kPolls = 8;
  for (int i = 0; i < kLoad; ++i) {
    calls.push_back(CallSpec{.body = ctx.ChatBody(ProbeContext::Words(16, ctx.settings.seed * 13 + static_cast<uint64_t>(i)),
                                                  std::max<int32_t>(64, ctx.settings.output_tokens), true)});
  }
  for (int i = 0; i < kPolls; ++i) {
    calls.push_back(CallSpec{.method = "GET", .path = "/health", .sse = false, .timeout = 2 * kNanosPerSecond,
                             .start_delay = (i + 1) * 100 * kNanosPerMilli});
  }
  auto out = ctx.client.Batch(std::move(calls));
  int ok = 0;
  double worst = 0;
  if (out.ok()) {
    for (int i = kLoad; i < kLoad + kPolls; ++i) {
      const CallResult& h = (*out)[static_cast<std::size_t>(i)];
      if (h.status == 200) ++ok;
      worst = std::max(worst, h.latency() >= 0 ? NanosToMillis(h.latency()) : 2000.0);
      res.timeline.push_back({ctx.MsSinceStart(std::max<Nanos>(h.t_end, 0)),
                              fmt::format("/health under load: HTTP {} in {:.1f} ms", h.status, NanosToMillis(h.latency()))});
    }
  }
  res.Add("health_ok_under_load", ok, "polls");
  res.Add("health_polls_under_load", kPolls, "polls");
  res.Add("health_latency_max_ms", worst, "ms");
  if (ctx.startup.observed) res.Add("ready_before_serving", ctx.startup.health_before_ready ? 1 : 0);
  if (ctx.startup.observed && ctx.startup.health_before_ready) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("/health said ready at {:.0f} ms after start, before the model could serve (first token at "
                              "{:.0f} ms)",
                              ctx.startup.health_ready_ms, ctx.startup.first_token_ms);
  } else if (ok < kPolls || worst > 1000) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("/health under load: {} of {} polls answered 200, slowest {:.0f} ms", ok, kPolls, worst);
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("/health answers 200 under load (slowest {:.1f} ms){}", worst,
                              ctx.startup.observed ? " and said ready only once the model could serve"
                                                   : "; startup not observed (give --start-cmd)");
  }
  return res;
}

}  // namespace infereng::job
