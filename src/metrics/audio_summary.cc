// AudioSummary's JSON (see audio_summary.h).
#include "metrics/audio_summary.h"

#include "metrics/summary_json.h"

namespace infereng::metrics {

using nlohmann::json;

json AudioToJson(const AudioSummary& a) {
  return json{{"requests", a.requests},
              {"audio_s", a.audio_s},
              {"audio_tokens", a.audio_tokens},
              {"window_audio_s", a.window_audio_s},
              {"audio_s_per_s", a.audio_s_per_s},
              {"rtf", SampleStatsToJson(a.rtf)}};
}

Result<AudioSummary> AudioFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  AudioSummary a;
  for (auto [key, field] : {std::pair{"requests", &a.requests}, {"audio_tokens", &a.audio_tokens}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
      return Status::InvalidArgument(where + "." + key + ": expected an integer >= 0");
    }
    *field = it->get<int64_t>();
  }
  for (auto [key, field] : {std::pair{"audio_s", &a.audio_s}, {"window_audio_s", &a.window_audio_s},
                            {"audio_s_per_s", &a.audio_s_per_s}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number() || !(it->get<double>() >= 0)) {
      return Status::InvalidArgument(where + "." + key + ": expected a number >= 0");
    }
    *field = it->get<double>();
  }
  auto it = j.find("rtf");
  if (it == j.end()) return Status::InvalidArgument(where + ".rtf: missing");
  INFERENG_ASSIGN_OR_RETURN(a.rtf, SampleStatsFromJson(*it, where + ".rtf"));
  return a;
}

}  // namespace infereng::metrics
