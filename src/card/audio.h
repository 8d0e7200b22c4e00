// Audio transcription (product.modality: transcription, issue 14 §4): how a speech model
// turns seconds of audio into the tokens it computes over, and what the card's traffic says
// about the clips requests carry.
//
// The rule lives here once: the card validates with it, the workload generator draws each
// request's audio and its transcript length with it, `serve` counts the clips it receives
// with it, and the twin prices the audio encoder and the audio tokens' prefill from it.
//
// A speech model's encoder turns audio into positions at a fixed rate, and the decoder (or
// the LLM) attends to one token per `tokens_per_second` of audio:
//  - Whisper (openai/whisper, whisper/audio.py: 16 kHz, hop 160 -> 100 mel frames/s, a
//    stride-2 convolution -> 50 encoder positions/s; every input is padded or cut to 30 s =
//    1,500 positions (N_SAMPLES, N_FRAMES)). vLLM serves longer audio as 30 s chunks
//    (SpeechToTextConfig.max_audio_clip_s), so a clip costs ceil(s / 30) windows.
//    model.audio: {tokens_per_second: 50, window_s: 30}.
//  - Audio LLMs put the encoder's output into the prompt after pooling: Qwen2-Audio 25
//    tokens/s (its Whisper encoder's 50/s pooled by 2), Voxtral 12.5 tokens/s (x4).
//    model.audio: {tokens_per_second: 25, encoder_positions_per_second: 50}.
// The twin counts the audio tokens as prompt tokens the LLM prefills and holds in its KV
// cache. For an encoder-decoder model such as Whisper they are the cross-attention's keys
// and values: the same memory and per-step attention, but a full decoder layer over them
// costs more than the cross-attention's K/V projections, so the prefill is overcharged
// (docs/workload-card.md says by how much).
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

namespace infereng::card {

// model.audio (docs/workload-card.md).
struct AudioModelSpec {
  double tokens_per_second = 50;  // audio tokens the decoder/LLM attends to per second of audio
  // Positions the audio encoder runs over per second (0 = tokens_per_second).
  double encoder_positions_per_second = 0;
  // Every clip is padded to whole windows of this many seconds (Whisper: 30); 0 = none.
  double window_s = 30;
  // Text tokens the decoder starts from (Whisper: <|startoftranscript|><|en|><|transcribe|>
  // <|notimestamps|>); part of the prompt, before the audio tokens.
  int64_t prompt_tokens = 4;
  // Parameters of the audio encoder (Whisper large-v3: ~635M of its 1.55B); 0 = unknown:
  // the twin then prices no encoder time, only the audio tokens' prefill.
  double encoder_params = 0;
};

// What one clip costs the model.
struct AudioCost {
  int64_t tokens = 0;             // audio tokens the decoder/LLM attends to (prompt positions)
  int64_t encoder_positions = 0;  // positions the encoder runs over
};

// The cost of a clip of `audio_ms` milliseconds (>= 1) under `m`.
AudioCost AudioCostFor(const AudioModelSpec& m, int64_t audio_ms);

// The transcript's tokens for a clip: round(audio_ms x tokens_per_s / 1000), at least 1.
// One rule for the generator (what the twin and the load expect) and `serve` (what the
// embedded engine generates for a clip it receives), so both count the same tokens.
int32_t TranscriptTokensFor(double tokens_per_s, int64_t audio_ms);

// FLOPs of the audio encoder over `positions`: 2 x parameters x positions (the forward-pass
// rule of thumb card/vision.h uses for the vision encoder).
inline double AudioEncoderFlops(const AudioModelSpec& m, int64_t positions) {
  return 2.0 * m.encoder_params * static_cast<double>(positions);
}

// Clips longer than this are refused (10 min: 19.2 MB as 16 kHz 16-bit mono WAV, under the
// 25 MB OpenAI's API accepts per file).
inline constexpr int64_t kMaxAudioMs = 600'000;
// What bench sends and what the embedded engine's body limit is sized for.
inline constexpr int32_t kAudioSampleRate = 16'000;

}  // namespace infereng::card
