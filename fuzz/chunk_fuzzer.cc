// libFuzzer harness for the dialect adapters and StreamTokenCounter.
// The first byte picks the dialect; the rest is split on '\n' into event payloads (every
// fourth one marked as a legacy `error:` field). Checks: no crash, errors carry a message,
// token counts are positive and, with final usage, sum to the reported total; a `timings`
// object gives either phases in [0, 1e9] ms or none (malformed), never both; whatever the
// fast chunk path (client/fast_chunk.h) accepts, the full parse accepts with the same meaning.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/dialect.h"
#include "client/fast_chunk.h"

using namespace infereng::client;

namespace {

bool Same(const ChunkInfo& a, const ChunkInfo& b) {
  return a.done == b.done && a.text == b.text && a.reasoning == b.reasoning &&
         a.usage.prompt_tokens == b.usage.prompt_tokens && a.usage.completion_tokens == b.usage.completion_tokens &&
         a.usage.cached_tokens == b.usage.cached_tokens && a.timings.present() == b.timings.present() &&
         a.timings.malformed == b.timings.malformed && a.finish_reason == b.finish_reason && a.error == b.error &&
         a.error_message == b.error_message;
}

// The fast path against the full parse, on the payload as InterpretData trims it.
void CheckFastPath(Dialect dialect, std::string_view payload) {
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!payload.empty() && ws(payload.front())) payload.remove_prefix(1);
  while (!payload.empty() && ws(payload.back())) payload.remove_suffix(1);
  ChunkInfo fast;
  if (!TryFastOpenAiChunk(dialect, payload, fast)) return;
  auto full = InterpretDataFull(dialect, payload);
  if (!full.ok() || !Same(fast, *full)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Dialect dialects[] = {Dialect::kOpenAiChat, Dialect::kOpenAiCompletions, Dialect::kTgiGenerate,
                              Dialect::kLlamaCppCompletion};
  const Dialect dialect = dialects[data[0] % 4];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  StreamTokenCounter counter;
  infereng::Nanos t = 0;
  int index = 0;
  while (!rest.empty()) {
    std::size_t nl = rest.find('\n');
    std::string_view payload = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    const bool error_field = index++ % 4 == 3;
    if (!error_field) CheckFastPath(dialect, payload);
    auto info = InterpretData(dialect, payload, error_field);
    if (!info.ok()) {
      if (info.status().message().empty()) __builtin_trap();
      continue;
    }
    if (info->error && info->error_message.size() > 4096) __builtin_trap();
    const ServerTimings& st = info->timings;
    if (st.malformed && st.present()) __builtin_trap();
    for (double ms : {st.queue_ms, st.prefill_ms, st.decode_ms}) {
      if (ms != -1 && !(ms >= 0 && ms <= 1e9)) __builtin_trap();
    }
    counter.On(++t, *info);
  }
  const auto source = counter.Finish();
  int64_t sum = 0;
  for (const auto& c : counter.chunks()) {
    if (c.tokens < 1) __builtin_trap();
    sum += c.tokens;
  }
  const int64_t total = counter.last_usage().completion_tokens;
  if (source == infereng::metrics::TokenSource::kUsageFinal && total >= static_cast<int64_t>(counter.chunks().size()) &&
      total < (int64_t{1} << 30) &&
      !counter.chunks().empty() && sum != total) {
    __builtin_trap();
  }
  return 0;
}
