// Transcription in the run report (see audio_section.h).
#include "report/audio_section.h"

#include <fmt/format.h>

#include "metrics/caveats.h"

namespace infereng::report {
namespace {

std::string Rtf(const stats::SampleStats& rtf) {
  return rtf.empty() ? "n/a" : fmt::format("p50 {:.3f} · p90 {:.3f} · p99 {:.3f}", rtf.p50, rtf.p90, rtf.p99);
}

}  // namespace

void AddAudioSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                     const std::string& heading_prefix) {
  if (!run.summary || !run.summary->audio) return;
  const metrics::Summary& s = *run.summary;
  const metrics::AudioSummary& a = *s.audio;
  page.BeginSection(id_prefix + "-audio", heading_prefix + "Transcription",
                    "Audio clips sent to /v1/audio/transcriptions, over the successful requests of the window. "
                    "Real-time factor = E2E latency / the clip's duration (below 1: the transcript is back before the "
                    "audio would have played); audio throughput = seconds of audio transcribed per second "
                    "(docs/metrics.md, \"Transcription\"). Audio tokens (the model's rule for the clip) are prompt "
                    "tokens the engine prefills.");
  std::vector<Kpi> k;
  k.push_back({"audio throughput", metrics::RateOrNa(s, a.audio_s_per_s, "audio s/s"),
               fmt::format("{:.1f} s of audio in the window", a.window_audio_s)});
  k.push_back({"real-time factor", a.rtf.empty() ? "n/a" : fmt::format("{:.3f}", a.rtf.p50), "p50; " + Rtf(a.rtf)});
  k.push_back({"clips", std::to_string(a.requests),
               fmt::format("{:.1f} s of audio, {} audio tokens", a.audio_s, a.audio_tokens)});
  page.Kpis(k);
  page.EndSection();
}

std::string AudioMarkdownRows(const metrics::Summary& s) {
  if (!s.audio) return {};
  const metrics::AudioSummary& a = *s.audio;
  return fmt::format("| transcription: clips · audio s · audio tokens | {} · {:.1f} · {} |\n"
                     "| audio throughput | {} |\n"
                     "| real-time factor (E2E / audio) | {} |\n",
                     a.requests, a.audio_s, a.audio_tokens, metrics::RateOrNa(s, a.audio_s_per_s, "audio s/s"), Rtf(a.rtf));
}

}  // namespace infereng::report
