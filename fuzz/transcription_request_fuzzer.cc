// libFuzzer harness: a /v1/audio/transcriptions request (serve/transcription_request.h),
// outside input the embedded engine reads from every transcription: the multipart/form-data
// framing, the form fields and the audio file's header (WAV chunks, FLAC STREAMINFO). The
// first byte picks what the rest is, so the fuzzer reaches the binary headers without having
// to discover the framing: 'A' reads the rest as an audio file, 'M' sends it as a multipart
// body with boundary "B", anything else splits it at the first newline into the Content-Type
// and the body. It must never crash or hang; a clip it accepts lasts 1 ms to the limit, and a
// refusal is a 400 or 404 with a message.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target transcription_request_fuzzer
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serve/transcription_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace infereng::serve;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] == 'A') {
    auto info = ReadAudioInfo(rest);
    if (!info.ok()) {
      if (info.status().message().empty()) __builtin_trap();
      return 0;
    }
    if (info->sample_rate < 1 || info->channels < 1 || info->frames < 0 || info->duration_ms < 0) __builtin_trap();
    return 0;
  }
  std::string_view content_type = "multipart/form-data; boundary=B";
  if (data[0] != 'M') {
    const std::size_t nl = rest.find('\n');
    content_type = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  constexpr int64_t kMaxMs = 600'000;
  const TranscriptionOutcome r = ParseTranscriptionRequest(content_type, rest, ParseLimits{.model_name = "m"}, kMaxMs);
  if (r.error) {
    if (r.error->message.empty() || (r.error->http_status != 400 && r.error->http_status != 404)) __builtin_trap();
    return 0;
  }
  if (r.params.audio.duration_ms < 1 || r.params.audio.duration_ms > kMaxMs) __builtin_trap();
  return 0;
}
