// The audio-token rule (see audio.h for the sources).
#include "card/audio.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace infereng::card {

AudioCost AudioCostFor(const AudioModelSpec& m, int64_t audio_ms) {
  double seconds = static_cast<double>(std::max<int64_t>(audio_ms, 1)) / 1000.0;
  if (m.window_s > 0) seconds = std::ceil(seconds / m.window_s - 1e-9) * m.window_s;
  const double encoder_rate = m.encoder_positions_per_second > 0 ? m.encoder_positions_per_second : m.tokens_per_second;
  AudioCost c;
  c.tokens = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds * m.tokens_per_second - 1e-9)));
  c.encoder_positions = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(seconds * encoder_rate - 1e-9)));
  return c;
}

int32_t TranscriptTokensFor(double tokens_per_s, int64_t audio_ms) {
  const double t = std::nearbyint(static_cast<double>(audio_ms) * tokens_per_s / 1000.0);
  return static_cast<int32_t>(std::clamp(t, 1.0, 1e9));
}

}  // namespace infereng::card
