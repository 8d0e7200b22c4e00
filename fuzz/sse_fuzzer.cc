// libFuzzer harness for client::SseParser.
// Differential: the same bytes fed whole and split at fuzzer-chosen points must give the
// same events and the same error state (framing must not depend on TCP segmentation).
// Small limits make the protocol-error paths reachable.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "client/sse_parser.h"

using infereng::client::SseEvent;
using infereng::client::SseParser;
using infereng::client::SseParserOptions;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::size_t step = 1 + data[0] % 17;
  std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  const SseParserOptions options{.max_line_bytes = 512, .max_event_bytes = 1024};

  SseParser whole(options);
  std::vector<SseEvent> a;
  bool ok_a = whole.Feed(bytes, a).ok();
  if (ok_a) ok_a = whole.Finish(a).ok();

  SseParser split(options);
  std::vector<SseEvent> b;
  bool ok_b = true;
  for (std::size_t i = 0; i < bytes.size() && ok_b; i += step) ok_b = split.Feed(bytes.substr(i, step), b).ok();
  if (ok_b) ok_b = split.Finish(b).ok();

  if (ok_a != ok_b) __builtin_trap();
  if (ok_a) {
    if (a.size() != b.size()) __builtin_trap();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].data != b[i].data || a[i].event != b[i].event || a[i].id != b[i].id ||
          a[i].is_error_field != b[i].is_error_field) {
        __builtin_trap();
      }
      if (a[i].data.size() > options.max_event_bytes) __builtin_trap();
    }
  }
  return 0;
}
