// libFuzzer harness: a generation answered whole (client/whole_answer.h), the JSON body bench
// reads once per non-streamed chat, completions or transcription request (outside input).
// The first byte picks the dialect (0 chat, 1 completions, 2 transcription); the rest is
// the body. The parser must never crash, hang or overflow: an answer it accepts has output
// text or a positive completion count, a finish reason and counts within bounds; a refusal
// has a message.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target whole_answer_fuzzer
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/whole_answer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using infereng::client::Dialect;
  if (size == 0) return 0;
  const Dialect dialects[] = {Dialect::kOpenAiChat, Dialect::kOpenAiCompletions, Dialect::kOpenAiTranscription};
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = infereng::client::ParseWholeAnswer(dialects[data[0] % 3], body);
  if (!r.ok()) {
    if (r.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (!r->has_output() && r->usage.completion_tokens <= 0) __builtin_trap();
  if (r->finish_reason.empty() || r->error) __builtin_trap();
  constexpr int64_t kMax = int64_t{1} << 40;
  if (r->usage.completion_tokens > kMax || r->usage.completion_tokens < -1 || r->usage.prompt_tokens > kMax) __builtin_trap();
  return 0;
}
