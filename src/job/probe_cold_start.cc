// The cold-start probe: starts the target (the embedded engine or --start-cmd), polls
// /health from that moment, and as soon as /health says ready sends a one-token request:
// if it fails, /health said ready before the model could serve. Then the time to the first
// token, and the first request's latency against warm ones.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "job/probe.h"

namespace infereng::job {

ProbeResult RunColdStartProbe(ProbeContext& ctx) {
  ProbeResult res;
  if (!ctx.start) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "the target was already running (give --start-cmd to time a cold start)";
    return res;
  }
  const Nanos t0 = ProbeClient::SteadyNowNs();
  if (Status st = ctx.start(); !st.ok()) {
    res.verdict = Verdict::kFail;
    res.finding = "could not start the target: " + st.message();
    return res;
  }
  res.timeline.push_back({ctx.MsSinceStart(t0), "start"});
  auto tiny = [&](int i) {
    return CallSpec{.body = ctx.ChatBody(ProbeContext::Words(8, ctx.settings.seed + 31 * static_cast<uint64_t>(i)), 1, true),
                    .timeout = 10 * kNanosPerSecond};
  };
  double healthy_ms = -1, first_token_ms = -1, first_ttft_ms = -1;
  bool lied = false;
  int failed_after_healthy = 0;
  for (int i = 0; ctx.client.time_left() > kNanosPerSecond; ++i) {
    if (healthy_ms < 0) {
      auto h = ctx.client.Get("/health", 2 * kNanosPerSecond);
      if (!h.ok()) break;
      if (h->status == 200) {
        healthy_ms = NanosToMillis(h->t_end - t0);
        res.timeline.push_back({ctx.MsSinceStart(h->t_end), "/health 200"});
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
    }
    auto r = ctx.client.Call(tiny(i));
    if (!r.ok()) break;
    if (r->ok() && r->t_first_token >= 0) {
      first_token_ms = NanosToMillis(r->t_first_token - t0);
      first_ttft_ms = NanosToMillis(r->ttft());
      res.timeline.push_back({ctx.MsSinceStart(r->t_first_token), "first token"});
      break;
    }
    if (failed_after_healthy++ == 0) {
      lied = true;
      res.timeline.push_back({ctx.MsSinceStart(r->t_end), fmt::format("request failed after /health 200: HTTP {} {}",
                                                                       r->status, r->error_message.substr(0, 120))});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<double> warm;
  for (int i = 0; i < 3 && first_token_ms >= 0; ++i) {
    auto r = ctx.client.Call(tiny(1000 + i));
    if (r.ok() && r->ok()) warm.push_back(NanosToMillis(r->ttft()));
  }
  std::sort(warm.begin(), warm.end());
  const double warm_ttft = warm.empty() ? -1 : warm[warm.size() / 2];
  res.Add("time_to_healthy_ms", healthy_ms, "ms");
  res.Add("time_to_first_token_ms", first_token_ms, "ms");
  res.Add("first_request_ttft_ms", first_ttft_ms, "ms");
  res.Add("warm_ttft_ms", warm_ttft, "ms");
  res.Add("requests_failed_after_healthy", failed_after_healthy, "requests");
  ctx.startup = StartupObservation{.observed = true, .health_before_ready = lied, .health_ready_ms = healthy_ms,
                                   .first_token_ms = first_token_ms};
  if (first_token_ms < 0) {
    res.verdict = Verdict::kFail;
    res.finding = healthy_ms < 0 ? "never became healthy within the budget" : "healthy, but never served a token within the budget";
  } else if (lied) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("/health said ready at {:.0f} ms but requests failed until {:.0f} ms", healthy_ms, first_token_ms);
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("healthy after {:.0f} ms, first token at {:.0f} ms; first request TTFT {:.1f} ms vs warm {:.1f} ms",
                              healthy_ms, first_token_ms, first_ttft_ms, warm_ttft);
  }
  return res;
}

}  // namespace infereng::job
