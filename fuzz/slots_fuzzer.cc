// libFuzzer harness: llama.cpp's GET /slots body (client/llamacpp_slots.h), outside input read
// on every scrape. The parser must never crash, hang or overflow; it returns a snapshot whose
// counts are consistent (busy + idle = total, sums >= 0) or a non-empty error.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target slots_fuzzer
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "client/llamacpp_slots.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto s = infereng::client::ParseLlamaCppSlots(body);
  if (!s.ok()) {
    if (s.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (s->busy + s->idle != s->total || s->decoded_busy < 0 || s->remaining_busy < 0) __builtin_trap();
  nlohmann::json signals = nlohmann::json::object();
  infereng::client::AddSlotSignals(*s, signals);
  return 0;
}
