// libFuzzer harness for `history import DIR...` (and every command's registration): the
// history entry built from a run directory's manifest.json and summary.json, which may come
// from another machine, an older infereng or a hand edit. EntryFromRun must never crash or
// hang on any pair of JSON documents; it returns an entry or an error with a message, and an
// entry's numbers are finite (SQLite would store NaN as NULL and trend charts would break).
// Input: one JSON object {"manifest": ..., "summary": ...}. Seeds: fuzz/corpus/history_entry/
// (a real llama.cpp run's pair and edge cases). Build: make fuzz; run: scripts/fuzz.sh 60 history_entry.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "job/history.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return 0;
  const nlohmann::json manifest = j.value("manifest", nlohmann::json());
  const nlohmann::json summary = j.value("summary", nlohmann::json());
  auto e = infereng::job::EntryFromRun("bench", manifest, summary, "/nonexistent/run");
  if (!e.ok()) {
    if (e.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (const auto& m : e->metrics) {
    if (!std::isfinite(m.value)) __builtin_trap();
  }
  return 0;
}
