// Caveats of a Summary: the reasons behind "n/a" and the too-few-samples notes
// (metrics/caveats.h states the rules).
#include "metrics/caveats.h"

#include <fmt/format.h>

#include <cmath>

namespace infereng::metrics {

std::string RatesUnavailable(const Summary& s) {
  if (s.counts.in_window == 0) return "no requests in the measurement window";
  if (!(s.rate_basis_s > 0)) return "the window has zero length and no in-window request completed";
  return "";
}

std::string OfferedUnavailable(const Summary& s) {
  if (std::string why = RatesUnavailable(s); !why.empty()) return why;
  if (s.rate_basis != "window") return "every in-window request was scheduled at the same instant";
  return "";
}

std::string EmptyDistributionReason(const Summary& s, const std::string& key) {
  if (s.counts.in_window == 0) return "no requests in the measurement window";
  if (s.counts.succeeded == 0) return "no request in the window succeeded";
  if (key == "tpot_ms" || key == "decode_rate_per_user_tok_s") return "no request had 2+ output tokens over 2+ events";
  if (key == "itl_ms" || key == "inter_chunk_ms" || key == "itl_p99_per_request_ms") return "no request had 2+ output events";
  if (key.starts_with("ttft_visible") && s.counts.with_reasoning > 0) {
    return "no successful request got past its reasoning to a visible token";
  }
  if (key == "reasoning_tokens") return "no successful request reasoned";
  if (key.starts_with("ttft") || key.starts_with("e2e")) return "no successful request produced a token";
  return "no samples";
}

int64_t MinSamplesFor(double percentile) {
  if (!(percentile < 100)) return INT64_MAX;
  return static_cast<int64_t>(std::ceil(100.0 / (100.0 - percentile) - 1e-9));
}

std::string FewSamplesNote(int64_t samples, double percentile) {
  if (samples <= 0 || samples >= MinSamplesFor(percentile)) return "";
  return fmt::format("P{:g} from {} sample{}", percentile, samples, samples == 1 ? "" : "s");
}

std::string RateOrNa(const Summary& s, double value, const char* unit, bool offered) {
  const std::string why = offered ? OfferedUnavailable(s) : RatesUnavailable(s);
  if (!why.empty()) return "n/a (" + why + ")";
  const double a = std::abs(value);
  if (a >= 10000) return fmt::format("{:.0f} {}", value, unit);
  if (a >= 100) return fmt::format("{:.1f} {}", value, unit);
  return fmt::format("{:.2f} {}", value, unit);
}

}  // namespace infereng::metrics
