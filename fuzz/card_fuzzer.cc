// libFuzzer harness: ParseCard must never crash, hang or leak on any input; it returns a
// card or a located error. Build: make fuzz; run: scripts/fuzz.sh 60 card (seeds:
// fuzz/corpus/card/, the example cards among them).
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
