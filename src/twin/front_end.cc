#include "twin/front_end.h"

#include <cmath>

#include "core/units.h"

namespace infereng::twin {
namespace {

// One figure: the knob, else the card's, else the fallback (measured or default); adds
// `field` to the list of where it came from.
double Pick(double knob, const std::optional<double>& card_ms, double fallback, const char* field, std::string* set,
            std::string* from_card, std::string* fell_back) {
  auto add = [field](std::string* list) { *list += std::string(list->empty() ? "" : ", ") + field; };
  if (knob >= 0) {
    add(set);
    return knob;
  }
  if (card_ms) {
    add(from_card);
    return *card_ms / 1e3;
  }
  add(fell_back);
  return fallback;
}

}  // namespace

Nanos FrontEnd::InboundFor(uint64_t seed, uint64_t index) const {
  if (jitter_s <= 0) return Inbound();
  // SplitMix64 of (seed, index): a uniform in (0, 1), then the exponential's inverse CDF.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + (index + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double u = (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  return Inbound() + SecondsToNanos(-std::log(u) * jitter_s);
}

FrontEndDefaults DefaultFrontEnd(EngineScheduler s) {
  switch (s) {
    case EngineScheduler::kTrtLlm:
      return {kTrtLlmPreprocessS, kTrtLlmPostprocessS, kDefaultNetworkS, "TensorRT-LLM-like"};
    case EngineScheduler::kSglang:
      return {kSglangPreprocessS, kSglangPostprocessS, kDefaultNetworkS, "SGLang-0.3-like"};
    case EngineScheduler::kVllm:
    case EngineScheduler::kVllmV0:
    case EngineScheduler::kLlamaCpp:
      break;
  }
  return {kDefaultPreprocessS, kDefaultPostprocessS, kDefaultNetworkS, "vLLM-like"};
}

FrontEnd ResolveFrontEnd(const card::ProductSpec& product, const CostKnobs& knobs, std::optional<double> measured_s,
                         EngineScheduler scheduler) {
  FrontEnd f;
  std::string set, from_card, fell_back;
  const FrontEndDefaults d = DefaultFrontEnd(scheduler);
  const double pre_default = measured_s.value_or(d.preprocess_s);
  const double post_default = measured_s ? 0.0 : d.postprocess_s;
  const double net_default = measured_s ? 0.0 : d.network_s;
  f.preprocess_s = Pick(knobs.preprocess_s, product.preprocess_ms, pre_default, "preprocess", &set, &from_card, &fell_back);
  f.network_s = Pick(knobs.network_s, product.network_ms, net_default, "network", &set, &from_card, &fell_back);
  f.postprocess_s = Pick(knobs.postprocess_s, product.postprocess_ms, post_default, "postprocess", &set, &from_card,
                         &fell_back);
  if (knobs.front_end_jitter_s > 0) f.jitter_s = knobs.front_end_jitter_s;
  std::string src;
  auto part = [&src](const std::string& what) { src += (src.empty() ? "" : "; ") + what; };
  if (!set.empty()) part("cost." + set + " set (--set, the card's engine: map or --profile)");
  if (!from_card.empty()) part("card product." + from_card);
  if (!fell_back.empty()) {
    part(measured_s ? "measured profile front_end_s for " + fell_back
                    : std::string(d.label) + " default for " + fell_back + " (the card sets none)");
  }
  f.source = src;
  return f;
}

std::string DescribeFrontEnd(const FrontEnd& f) {
  auto ms = [](double s) { return units::FormatSignificant(s * 1e3, 3) + " ms"; };
  return "preprocess " + ms(f.preprocess_s) + " + network " + ms(f.network_s) + " (round trip) + postprocess " +
         ms(f.postprocess_s) + (f.jitter_s > 0 ? " + jitter " + ms(f.jitter_s) + " mean on the way in (cost.front_end_jitter)" : "") +
         " (" + f.source + ")";
}

}  // namespace infereng::twin
