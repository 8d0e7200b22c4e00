// Synthetic WAV clips (see wav_audio.h).
#include "bench/wav_audio.h"

#include <algorithm>

#include "card/audio.h"
#include "core/mix64.h"

namespace infereng::bench {
namespace {

void PutLe(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

std::string SyntheticWav(int32_t audio_ms, uint64_t seed) {
  const uint32_t rate = card::kAudioSampleRate;
  const uint32_t samples = static_cast<uint32_t>(std::max(audio_ms, 1)) * (rate / 1000);
  const uint32_t data_bytes = samples * 2;
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  PutLe(out, 36 + data_bytes, 4);
  out += "WAVEfmt ";
  PutLe(out, 16, 4);        // fmt chunk size
  PutLe(out, 1, 2);         // PCM
  PutLe(out, 1, 2);         // mono
  PutLe(out, rate, 4);
  PutLe(out, rate * 2, 4);  // byte rate
  PutLe(out, 2, 2);         // block align
  PutLe(out, 16, 2);        // bits per sample
  out += "data";
  PutLe(out, data_bytes, 4);
  // Quiet noise (about -50 dBFS): 4 samples per 64-bit draw, written in place rather than
  // appended byte by byte (a 2-minute clip is 3.8 MB, built in the slack before its send time).
  out.resize(44 + static_cast<std::size_t>(data_bytes));
  auto* p = reinterpret_cast<unsigned char*>(out.data()) + 44;
  uint64_t state = seed ^ 0x5eed0a0d10ULL;
  for (uint32_t i = 0; i < samples; i += 4) {
    const uint64_t r = Mix64(state++);
    for (uint32_t k = 0; k < 4 && i + k < samples; ++k) {
      const auto s = static_cast<uint16_t>(static_cast<int16_t>(static_cast<int16_t>((r >> (16 * k)) & 0xFFFF) >> 6));
      *p++ = static_cast<unsigned char>(s & 0xFF);
      *p++ = static_cast<unsigned char>(s >> 8);
    }
  }
  return out;
}

}  // namespace infereng::bench
