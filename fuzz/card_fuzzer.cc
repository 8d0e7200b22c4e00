// libFuzzer harness: ParseCard must never crash, hang or leak on any input; it returns a
// card or a located error. Build: cmake --preset fuzz && cmake --build --preset fuzz
// --target card_fuzzer; run: build/fuzz/card_fuzzer -max_total_time=60 examples/
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "card/card_parser.h"
#include "card/gaps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto card = infereng::card::ParseCard(text, "fuzz.yaml");
  if (card.ok()) {
    (void)infereng::card::FindGaps(*card);
  } else if (card.status().message().empty()) {
    __builtin_trap();  // every error must say what was wrong
  }
  return 0;
}
