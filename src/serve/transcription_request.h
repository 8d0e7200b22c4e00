// POST /v1/audio/transcriptions: the multipart/form-data request (RFC 7578) turned into the
// parameters the server acts on, or into an OpenAI-shaped error naming the field.
//
// Accepted form fields, as vLLM's TranscriptionRequest and OpenAI's API name them: file
// (required: the audio), model, language, prompt, response_format (json | text |
// verbose_json), temperature, stream, stream_include_usage, stream_continuous_usage_stats,
// max_completion_tokens, timestamp_granularities[] (accepted, not acted on). Other fields are
// ignored, as vLLM ignores them.
//
// The audio's length is read from its header, never decoded: WAV (RIFF/WAVE with a fmt and
// a data chunk: PCM, IEEE float or WAVE_FORMAT_EXTENSIBLE) and FLAC (STREAMINFO's total
// samples). Other containers (MP3, OGG, WebM, MP4) get 400 saying which was recognised: the
// embedded engine cannot tell their length without decoding them.
//
// Pure functions of their inputs; fuzz/transcription_request_fuzzer.cc drives them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "serve/request_parser.h"

namespace infereng::serve {

// One part of a multipart/form-data body.
struct FormPart {
  std::string name;          // Content-Disposition name
  std::string filename;      // Content-Disposition filename ("" when none)
  std::string content_type;  // the part's Content-Type ("" when none)
  std::string_view data;     // the part's bytes (a view into the body)
};

// The boundary of a `multipart/form-data; boundary=...` Content-Type (quoted or not);
// InvalidArgument saying what is wrong otherwise.
Result<std::string> MultipartBoundary(std::string_view content_type);
// The parts of `body` (views into it), in order; InvalidArgument naming the byte offset and
// what was expected when the body is not well-formed (missing delimiter, a part without
// Content-Disposition or its name, no closing delimiter, more than 64 parts).
Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary);

struct AudioInfo {
  std::string format;        // "wav" | "flac"
  int64_t sample_rate = 0;   // Hz
  int32_t channels = 0;
  int64_t frames = 0;        // samples per channel
  int64_t duration_ms = 0;   // frames / sample_rate, rounded to the nearest ms
};

// The length of an audio file from its header. InvalidArgument saying what is wrong (too
// short, a zero sample rate, a truncated data chunk, an unsupported container by name).
Result<AudioInfo> ReadAudioInfo(std::string_view bytes);

struct TranscriptionParams {
  AudioInfo audio;
  std::vector<uint32_t> prompt_ids;       // the `prompt` field tokenized (text_model.h rule)
  std::string language;
  std::string response_format = "json";   // json | text | verbose_json
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage = false;
  std::optional<int32_t> max_completion_tokens;
};

struct TranscriptionOutcome {
  TranscriptionParams params;
  std::optional<ApiError> error;  // set: answer with it, params meaningless
};

// Audio longer than `max_audio_ms` is refused with 400 (the card's kMaxAudioMs by default).
TranscriptionOutcome ParseTranscriptionRequest(std::string_view content_type, std::string_view body,
                                               const ParseLimits& limits, int64_t max_audio_ms);

}  // namespace infereng::serve
