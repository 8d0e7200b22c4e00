// libFuzzer harness: the records.jsonl line reader and the summary.json reader must never
// crash, hang or wrap numbers on any input; they return a value or a non-empty error, and
// whatever they accept must write back out and read again identically.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target metrics_json_fuzzer
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "metrics/records_io.h"
#include "metrics/summary_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;

  auto rec = infereng::metrics::RecordFromJson(j);
  if (rec.ok()) {
    nlohmann::json again = infereng::metrics::RecordToJson(*rec, 0);
    auto back = infereng::metrics::RecordFromJson(again);
    if (!back.ok() || infereng::metrics::RecordToJson(*back, 0) != again) __builtin_trap();
  } else if (rec.status().message().empty()) {
    __builtin_trap();
  }

  auto sum = infereng::metrics::SummaryFromJson(j);
  if (sum.ok()) {
    nlohmann::json again = infereng::metrics::SummaryToJson(*sum);
    if (!infereng::metrics::SummaryFromJson(again).ok()) __builtin_trap();
  } else if (sum.status().message().empty()) {
    __builtin_trap();
  }
  return 0;
}
