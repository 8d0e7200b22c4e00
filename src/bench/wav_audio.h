// Synthetic audio clips for transcription requests: 16 kHz mono 16-bit PCM WAV files of an
// exact length, each its own samples.
//
// Low-level noise from a seeded generator: a clip the engine has never seen (no cache can
// answer it) whose length in the header is exact to the sample, so `serve` reads back the
// same milliseconds the workload drew and the transcript length the twin expects. A real
// speech model hears no words in it: what it transcribes from noise is its own (often
// nothing, or a hallucinated phrase), so against a real engine the output length is the
// engine's, counted from its usage or stream (docs/workload-card.md, "Transcription").
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace infereng::bench {

// A WAV file of `audio_ms` milliseconds (>= 1) at card::kAudioSampleRate: a 44-byte RIFF
// header and audio_ms x 16 samples.
std::string SyntheticWav(int32_t audio_ms, uint64_t seed);

}  // namespace infereng::bench
