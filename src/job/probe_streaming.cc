// The streaming-integrity probe: one stream, its chunks' arrival times. Tokens streamed as
// generated arrive at steady gaps (the engine's step); a buffering proxy delivers them in
// bursts — most gaps near zero, a few long ones — and the first byte late. Also checks the
// stream ends with [DONE] and reports usage.
#include <algorithm>

#include <fmt/format.h>

#include "core/stats.h"
#include "job/probe.h"

namespace infereng::job {

namespace {

constexpr double kBurstGapMs = 1.0;  // chunks closer than this arrived in one read/burst

}  // namespace

ProbeResult RunStreamingProbe(ProbeContext& ctx) {
  ProbeResult res;
  const int64_t tokens = std::max<int32_t>(48, ctx.settings.output_tokens);
  auto r = ctx.client.Call(CallSpec{.body = ctx.ChatBody(ProbeContext::Words(16, ctx.settings.seed + 5), tokens, true)});
  if (!r.ok() || !r->ok()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "the stream did not succeed" + (r.ok() ? ": " + r->error_message : std::string());
    return res;
  }
  const auto& t = r->chunk_times;
  res.Add("chunks", static_cast<double>(t.size()), "chunks");
  res.Add("usage_completion_tokens", static_cast<double>(r->usage_completion), "tokens");
  res.Add("first_byte_ms", NanosToMillis(r->t_first_byte - r->t_send), "ms");
  res.Add("first_token_ms", NanosToMillis(r->ttft()), "ms");
  res.Add("saw_done", r->saw_done ? 1 : 0);
  if (t.size() < 8) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = fmt::format("only {} chunks: too few to judge the pacing", t.size());
    return res;
  }
  std::vector<double> gaps;
  for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(NanosToMillis(t[i] - t[i - 1]));
  const double total = NanosToMillis(t.back() - t.front());
  const double mean = total / static_cast<double>(gaps.size());
  const auto burst = std::count_if(gaps.begin(), gaps.end(), [](double g) { return g < kBurstGapMs; });
  const double burst_share = static_cast<double>(burst) / static_cast<double>(gaps.size());
  std::sort(gaps.begin(), gaps.end());
  res.Add("gap_p50_ms", stats::PercentileSorted(gaps, 50), "ms");
  res.Add("gap_mean_ms", mean, "ms");
  res.Add("gap_max_ms", gaps.back(), "ms");
  res.Add("burst_share", burst_share, "ratio");
  int bursts = 1;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (NanosToMillis(t[i] - t[i - 1]) >= kBurstGapMs) {
      ++bursts;
      if (res.timeline.size() < 50) res.timeline.push_back({ctx.MsSinceStart(t[i]), "chunk after a gap"});
    }
  }
  res.Add("bursts", bursts, "bursts");
  // Buffered: most chunks arrive glued to the one before, with long silences between.
  const bool buffered = burst_share > 0.5 && gaps.back() > 5 * std::max(mean, 1.0);
  if (!r->saw_done || r->usage_completion <= 0) {
    res.verdict = Verdict::kFail;
    res.finding = std::string("the stream ended without ") + (!r->saw_done ? "[DONE]" : "a usage report") +
                  " (stream_options.include_usage was asked for)";
  } else if (buffered) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("buffered: {} chunks arrived in {} bursts ({:.0f}% glued to the previous one, longest silence "
                              "{:.0f} ms); first byte after {:.0f} ms",
                              t.size(), bursts, 100 * burst_share, gaps.back(), res.Get("first_byte_ms"));
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("tokens arrive as generated: {} chunks, median gap {:.1f} ms, [DONE] and usage present",
                              t.size(), res.Get("gap_p50_ms"));
  }
  return res;
}

}  // namespace infereng::job
