// The overload probe: ramps concurrent bursts past the point where the target saturates
// and reads how it copes. Shedding (429/503, with Retry-After) keeps the accepted requests'
// latency bounded; a server that accepts everything lets the queue, and the time to first
// token, grow with the burst. Then the time to recover once the burst is gone, and the
// goodput (successful completions per second) during the overload.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "core/stats.h"
#include "job/probe.h"

namespace infereng::job {

namespace {

struct Step {
  int concurrency = 0;
  int ok = 0, refused = 0, refused_with_retry_after = 0, server_errors = 0, timeouts = 0, other = 0;
  double max_ttft_ms = 0, p50_ttft_ms = 0, goodput_rps = 0;
};

Step Tally(int c, const std::vector<CallResult>& calls) {
  Step s{.concurrency = c};
  std::vector<double> ttft;
  Nanos first_send = -1, last_end = -1;
  for (const CallResult& r : calls) {
    if (r.t_send >= 0 && (first_send < 0 || r.t_send < first_send)) first_send = r.t_send;
    if (r.t_end > last_end) last_end = r.t_end;
    if (r.ok()) {
      ++s.ok;
      if (r.ttft() >= 0) ttft.push_back(NanosToMillis(r.ttft()));
    } else if (r.status == 429 || r.status == 503) {
      ++s.refused;
      if (!r.retry_after.empty()) ++s.refused_with_retry_after;
    } else if (r.status >= 500) {
      ++s.server_errors;
    } else if (r.error == metrics::ErrorClass::kTimeout) {
      ++s.timeouts;
    } else {
      ++s.other;
    }
  }
  std::sort(ttft.begin(), ttft.end());
  if (!ttft.empty()) {
    s.max_ttft_ms = ttft.back();
    s.p50_ttft_ms = stats::PercentileSorted(ttft, 50);
  }
  if (last_end > first_send && first_send >= 0) s.goodput_rps = s.ok / (NanosToMillis(last_end - first_send) / 1000);
  return s;
}

}  // namespace

ProbeResult RunOverloadProbe(ProbeContext& ctx) {
  ProbeResult res;
  const int32_t out_tokens = ctx.settings.output_tokens;
  auto spec = [&](int i) {
    return CallSpec{.body = ctx.ChatBody(ProbeContext::Words(16, ctx.settings.seed + static_cast<uint64_t>(i)), out_tokens, true),
                    .timeout = 30 * kNanosPerSecond};
  };
  auto base_call = ctx.client.Call(spec(0));
  if (!base_call.ok() || !base_call->ok() || base_call->ttft() < 0) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "a single request did not succeed, so there is no baseline to overload from";
    return res;
  }
  const double base_ttft = NanosToMillis(base_call->ttft());
  res.Add("baseline_ttft_ms", base_ttft, "ms");
  res.timeline.push_back({ctx.MsSinceStart(base_call->t_end), fmt::format("baseline: TTFT {:.1f} ms", base_ttft)});
  // Latency counts as "growing without bound" at this many times the baseline (plus a
  // floor, so a 2 ms baseline is not judged on scheduling noise).
  const double unbounded_ms = 8 * base_ttft + 100;

  std::vector<Step> steps;
  int saturation = 0;
  Nanos overload_end = 0;
  for (int c = 2;; c *= 2) {
    if (ctx.client.used() + c + 12 > ctx.client.budget().max_requests || ctx.client.time_left() < 8 * kNanosPerSecond) break;
    std::vector<CallSpec> burst;
    for (int i = 0; i < c; ++i) burst.push_back(spec(c * 1000 + i));
    auto calls = ctx.client.Batch(std::move(burst));
    if (!calls.ok()) break;
    Step s = Tally(c, *calls);
    overload_end = ProbeClient::SteadyNowNs();
    steps.push_back(s);
    res.timeline.push_back({ctx.MsSinceStart(overload_end),
                            fmt::format("burst of {}: {} ok, {} refused ({} with Retry-After), {} 5xx, {} timeouts; TTFT "
                                        "p50 {:.1f} ms, max {:.1f} ms",
                                        c, s.ok, s.refused, s.refused_with_retry_after, s.server_errors, s.timeouts,
                                        s.p50_ttft_ms, s.max_ttft_ms)});
    if (saturation == 0 && (s.refused > 0 || s.max_ttft_ms > 2 * base_ttft + 20)) saturation = c;
    // One burst past the saturation point is the overload we judge; more adds nothing.
    if (saturation != 0 && c >= 2 * saturation) break;
    if (s.server_errors + s.timeouts > 0 || s.max_ttft_ms > unbounded_ms) break;
  }
  if (steps.empty()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "the budget did not allow a single burst";
    return res;
  }
  const Step& peak = steps.back();
  int refused = 0, with_retry = 0, errors = 0, timeouts = 0;
  for (const Step& s : steps) {
    refused += s.refused;
    with_retry += s.refused_with_retry_after;
    errors += s.server_errors;
    timeouts += s.timeouts;
  }
  res.Add("saturation_concurrency", saturation, "requests");
  res.Add("peak_concurrency", peak.concurrency, "requests");
  res.Add("refused", refused, "requests");
  res.Add("refused_with_retry_after", with_retry, "requests");
  res.Add("server_errors", errors, "requests");
  res.Add("timeouts", timeouts, "requests");
  res.Add("peak_ttft_max_ms", peak.max_ttft_ms, "ms");
  res.Add("ttft_growth", base_ttft > 0 ? peak.max_ttft_ms / base_ttft : 0, "ratio");
  res.Add("goodput_rps_overload", peak.goodput_rps, "requests/s");

  // Recovery: single requests until one is back within twice the baseline.
  double recovery_ms = -1;
  for (int i = 0; i < 20 && recovery_ms < 0; ++i) {
    auto r = ctx.client.Call(spec(900000 + i));
    if (!r.ok()) break;
    if (r->ok() && NanosToMillis(r->ttft()) <= 2 * base_ttft + 20) {
      recovery_ms = NanosToMillis(r->t_end - overload_end);
      res.timeline.push_back({ctx.MsSinceStart(r->t_end), fmt::format("recovered: TTFT {:.1f} ms", NanosToMillis(r->ttft()))});
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  res.Add("recovery_ms", recovery_ms, "ms");

  if (saturation == 0) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = fmt::format("not saturated by bursts of up to {} requests within the budget", peak.concurrency);
  } else if (errors + timeouts > 0) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("under overload it failed requests ({} 5xx, {} timeouts) instead of shedding them", errors, timeouts);
  } else if (refused == 0) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("accepts everything: a burst of {} made TTFT {:.0f}x the baseline ({:.0f} ms) — the queue is "
                              "unbounded, nothing is shed",
                              peak.concurrency, peak.max_ttft_ms / base_ttft, peak.max_ttft_ms);
  } else if (with_retry < refused) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("sheds ({} refused with 429/503) but {} refusals carry no Retry-After, so clients retry blindly",
                              refused, refused - with_retry);
  } else if (recovery_ms < 0) {
    res.verdict = Verdict::kFail;
    res.finding = "sheds with Retry-After, but did not return to baseline latency after the burst";
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("sheds with 429/503 + Retry-After ({} refused), accepted TTFT stays bounded ({:.0f} ms max), "
                              "recovers in {:.0f} ms",
                              refused, peak.max_ttft_ms, recovery_ms);
  }
  return res;
}

}  // namespace infereng::job
