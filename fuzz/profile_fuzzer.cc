// libFuzzer harness for measured profile files (`profile`/`calibrate` write them, `simulate`,
// `capacity`, `run` and `sweep --profile FILE` read them: a file from another machine or
// person is outside input). ProfileFromJson must never crash or hang; it returns a profile
// or an error naming the field. What it accepts must (a) write back out and read again to
// the same JSON, and (b) give a cost model whose step times are finite and >= 0 for any
// step shape, including shapes far outside the measured table (extrapolation).
// Seeds: fuzz/corpus/profile/ (profiles measured on llama.cpp b4748 and the schema's edge
// cases). Build: make fuzz; run: scripts/fuzz.sh 60 profile.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "twin/cost_model.h"
#include "twin/profile_file.h"

using namespace infereng::twin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto p = ProfileFromJson(j);
  if (!p.ok()) {
    if (p.status().message().empty()) __builtin_trap();
    return 0;
  }
  const nlohmann::json again = ProfileToJson(*p);
  auto back = ProfileFromJson(again);
  if (!back.ok() || ProfileToJson(*back) != again) __builtin_trap();

  const auto cost = MakeMeasuredCost(*p);
  if (!cost) __builtin_trap();
  const StepShape shapes[] = {
      {.prefill_seqs = 1, .prefill_tokens = 1},
      {.prefill_seqs = 4, .prefill_tokens = 4096, .prefill_context = 1 << 20},
      {.decode_seqs = 1, .decode_context = 0},
      {.decode_seqs = 256, .decode_context = int64_t{1} << 30},
      {.prefill_seqs = 2, .prefill_tokens = 300, .prefill_context = 50, .decode_seqs = 8, .decode_context = 9000},
  };
  for (const StepShape& s : shapes) {
    const double t = cost->StepSeconds(s);
    if (!std::isfinite(t) || t < 0) __builtin_trap();
  }
  return 0;
}
