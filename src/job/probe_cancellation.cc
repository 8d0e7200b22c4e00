// The cancellation probe: starts streams, walks away from them mid-generation (closes the
// connections), then watches the engine's own counters: does its running count drop back,
// do generated tokens stop growing, and does a new request get the capacity back?
#include <thread>

#include <fmt/format.h>

#include "job/probe.h"

namespace infereng::job {

namespace {

constexpr int kStreams = 4;

}  // namespace

ProbeResult RunCancellationProbe(ProbeContext& ctx) {
  ProbeResult res;
  auto body = [&](int i, int64_t tokens) {
    return ctx.ChatBody(ProbeContext::Words(16, ctx.settings.seed * 7 + static_cast<uint64_t>(i)), tokens, true);
  };
  auto base = ctx.client.Call(CallSpec{.body = body(0, 4)});
  if (!base.ok() || !base->ok()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "a single request did not succeed";
    return res;
  }
  const double base_ttft = NanosToMillis(base->ttft());
  auto running0 = ctx.client.Gauge();
  const bool has_gauge = running0.ok() && running0->has_value();
  const double before = has_gauge ? **running0 : 0;
  res.Add("baseline_ttft_ms", base_ttft, "ms");
  if (has_gauge) res.Add("running_before", before, "requests");

  // Long generations, each abandoned after 3 chunks.
  const int64_t long_tokens = std::max<int64_t>(64, std::min<int64_t>(4096, ctx.max_model_len / 2));
  std::vector<CallSpec> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(CallSpec{.body = body(i + 1, long_tokens), .cancel_after_chunks = 3});
  auto calls = ctx.client.Batch(std::move(streams));
  if (!calls.ok()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "budget spent before the streams could start";
    return res;
  }
  int cancelled = 0;
  for (const CallResult& c : *calls) cancelled += c.cancelled ? 1 : 0;
  const Nanos t_cancel = ProbeClient::SteadyNowNs();
  res.Add("streams_cancelled", cancelled, "requests");
  res.timeline.push_back({ctx.MsSinceStart(t_cancel), fmt::format("{} streams abandoned after 3 chunks", cancelled)});
  if (cancelled == 0) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "no stream produced 3 chunks to cancel";
    return res;
  }

  // Watch the running count for up to 2 s, and the tokens generated in the first 300 ms
  // after the cancel (orphaned streams that keep generating finish within the watch).
  double freed_ms = -1, running_after = -1;
  if (has_gauge) {
    auto g1 = ctx.client.Gauge(ProbeClient::GeneratedTokenCounters());
    std::optional<Result<std::optional<double>>> g2;
    const Nanos tokens_at = t_cancel + 300 * kNanosPerMilli;
    auto sample_tokens = [&] {
      if (!g2 && ProbeClient::SteadyNowNs() >= tokens_at) g2 = ctx.client.Gauge(ProbeClient::GeneratedTokenCounters());
    };
    for (int i = 0; i < 40; ++i) {
      sample_tokens();
      auto g = ctx.client.Gauge();
      if (!g.ok() || !g->has_value()) break;
      running_after = **g;
      if (running_after <= before) {
        freed_ms = NanosToMillis(ProbeClient::SteadyNowNs() - t_cancel);
        res.timeline.push_back({ctx.MsSinceStart(ProbeClient::SteadyNowNs()),
                                fmt::format("running back to {:.0f}", running_after)});
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    res.Add("running_after", running_after, "requests");
    res.Add("slots_freed_ms", freed_ms, "ms");
    if (!g2) {
      const Nanos wait = tokens_at - ProbeClient::SteadyNowNs();
      if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
      sample_tokens();
    }
    if (g1.ok() && g2 && g2->ok() && g1->has_value() && (*g2)->has_value()) {
      res.Add("tokens_generated_after_cancel_300ms", ***g2 - **g1, "tokens");
    }
  }
  auto fresh = ctx.client.Call(CallSpec{.body = body(99, 4)});
  const double fresh_ttft = fresh.ok() && fresh->ok() ? NanosToMillis(fresh->ttft()) : -1;
  res.Add("ttft_after_cancel_ms", fresh_ttft, "ms");
  const bool capacity_back = fresh_ttft >= 0 && fresh_ttft <= 3 * base_ttft + 50;

  if (has_gauge && freed_ms < 0) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("the engine keeps generating for abandoned streams: {:.0f} still running 2 s after {} "
                              "clients left (was {:.0f})",
                              running_after, cancelled, before);
  } else if (!capacity_back) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("capacity did not come back: a new request's TTFT was {:.0f} ms (baseline {:.0f} ms)",
                              fresh_ttft, base_ttft);
  } else if (!has_gauge) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "no running count in /metrics; a new request's latency was back to baseline, but whether the "
                  "engine stopped generating cannot be seen";
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("abandoned streams stop: running count back to {:.0f} within {:.0f} ms, new request TTFT "
                              "{:.0f} ms",
                              running_after, freed_ms, fresh_ttft);
  }
  return res;
}

}  // namespace infereng::job
