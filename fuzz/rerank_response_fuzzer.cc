// libFuzzer harness: the /v1/rerank answer (client/rerank_response.h), outside input read
// once per rerank request by bench. The first byte is the number of documents sent (0-255);
// the rest is the body. The parser must never crash, hang or overflow; it returns a count
// of results no larger than the documents (every index new and below it) or a non-empty
// error.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target rerank_response_fuzzer
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/rerank_response.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t documents = data[0];
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = infereng::client::ParseRerankResponse(body, documents);
  if (!r.ok()) {
    if (r.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (r->results < 0 || r->results > documents || r->prompt_tokens < -1) __builtin_trap();
  return 0;
}
