// AudioSummary: what transcription requests add to a summary (docs/metrics.md,
// "Transcription"). A request's clip length and audio tokens are the client's plan
// (RequestRecord::audio_ms, ::audio_tokens: the drawn clip and the model's rule,
// card/audio.h); the client sent exactly that clip.
//
// Real-time factor (RTF) of a request = its E2E latency / its audio's duration: below 1 the
// transcript is back faster than the audio would play. Audio throughput = seconds of audio
// transcribed per second of wall time ("x real time").
//
// Populations, as for the rest of the summary (metrics/summary.h): counts and the RTF
// distribution over successful in-window requests; audio_s_per_s counts the audio of
// successful requests whose last byte (last chunk, else t_end) falls in the window, divided
// by the summary's rate basis, as requests/s does.
//
// JSON under the summary's "audio" key; absent when no record carried audio, so other
// runs' summary.json is unchanged.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "core/status.h"

namespace infereng::metrics {

struct AudioSummary {
  int64_t requests = 0;      // successful in-window transcription requests
  double audio_s = 0;        // their audio, seconds
  int64_t audio_tokens = 0;  // their audio tokens
  double window_audio_s = 0; // audio of successful requests that ended in the window
  double audio_s_per_s = 0;  // window_audio_s / rate basis
  stats::SampleStats rtf;    // per request: E2E / audio duration

  friend bool operator==(const AudioSummary&, const AudioSummary&) = default;
};

nlohmann::json AudioToJson(const AudioSummary& a);
Result<AudioSummary> AudioFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace infereng::metrics
