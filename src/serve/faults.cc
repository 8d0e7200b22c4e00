#include "serve/faults.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "core/numeric.h"
#include "core/strings.h"
#include "serve/text_model.h"

namespace infereng::serve {

namespace {

Result<double> ParseNumber(std::string_view s) {
  s = TrimBlanks(s);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty() || !std::isfinite(v)) {
    return Status::InvalidArgument("expected a number, got \"" + std::string(s) + "\"");
  }
  return v;
}

Result<double> ParseShare(std::string_view key, std::string_view s) {
  auto v = ParseNumber(s);
  if (!v.ok() || *v < 0 || *v > 1) {
    return Status::InvalidArgument("--faults: " + std::string(key) + ": expected a share between 0 and 1, got \"" +
                                   std::string(s) + "\"");
  }
  return *v;
}

double Uniform(uint64_t seed, uint64_t seq, uint64_t salt) {
  return static_cast<double>(Mix64(Mix64(seed ^ (salt * 0x9e3779b97f4a7c15ULL)) + seq) >> 11) * 0x1.0p-53;
}

int32_t Position(uint64_t seed, uint64_t seq, uint64_t salt, int32_t tokens) {
  // 1-based token index in [1, tokens], biased to the middle third so it is "mid-stream".
  if (tokens <= 1) return 1;
  double u = Uniform(seed, seq, salt);
  auto lo = std::max<int32_t>(1, tokens / 3), hi = std::max<int32_t>(lo, (2 * tokens) / 3);
  int32_t span = hi - lo + 1;
  return lo + std::min(span - 1, static_cast<int32_t>(u * span));
}

}  // namespace

Result<Nanos> ParseDuration(std::string_view text) {
  std::string_view s = TrimBlanks(text);
  struct Unit { std::string_view suffix; double nanos; };
  static constexpr Unit kUnits[] = {{"ms", 1e6}, {"us", 1e3}, {"ns", 1}, {"s", 1e9}, {"m", 60e9}};
  double scale = 1e9;
  for (const Unit& u : kUnits) {
    if (s.size() > u.suffix.size() && s.ends_with(u.suffix)) {
      s.remove_suffix(u.suffix.size());
      scale = u.nanos;
      break;
    }
  }
  auto v = ParseNumber(s);
  const std::optional<int64_t> ns = v.ok() && *v >= 0 ? RoundToInt64(*v * scale) : std::nullopt;
  if (!ns) {
    return Status::InvalidArgument("expected a duration like 500ms or 2s (below ~292 years), got \"" +
                                   std::string(TrimBlanks(text)) + "\"");
  }
  return Nanos{*ns};
}

Result<FaultSpec> ParseFaultSpec(std::string_view spec) {
  FaultSpec f;
  spec = TrimBlanks(spec);
  while (!spec.empty()) {
    std::size_t comma = spec.find(',');
    std::string_view item = TrimBlanks(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("--faults: \"" + std::string(item) + "\": expected key=value");
    }
    std::string_view key = TrimBlanks(item.substr(0, eq)), value = TrimBlanks(item.substr(eq + 1));
    std::string k(key);
    if (key == "error5xx") {
      INFERENG_ASSIGN_OR_RETURN(f.error5xx, ParseShare(key, value));
    } else if (key == "stream_error") {
      INFERENG_ASSIGN_OR_RETURN(f.stream_error, ParseShare(key, value));
    } else if (key == "drop") {
      INFERENG_ASSIGN_OR_RETURN(f.drop, ParseShare(key, value));
    } else if (key == "stall") {
      std::size_t colon = value.find(':');
      if (colon == std::string_view::npos) {
        return Status::InvalidArgument("--faults: stall: expected SHARE:DURATION like 0.01:500ms, got \"" +
                                       std::string(value) + "\"");
      }
      INFERENG_ASSIGN_OR_RETURN(f.stall, ParseShare(key, value.substr(0, colon)));
      auto d = ParseDuration(value.substr(colon + 1));
      if (!d.ok()) return d.status().WithContext("--faults: stall");
      f.stall_duration = *d;
    } else if (key == "interval") {
      auto v = ParseNumber(value);
      if (!v.ok() || *v < 1 || *v > 1024 || *v != std::floor(*v)) {
        return Status::InvalidArgument("--faults: interval: expected an integer from 1 to 1024, got \"" +
                                       std::string(value) + "\"");
      }
      f.stream_interval = static_cast<int>(*v);
    } else if (key == "cold_start") {
      auto d = ParseDuration(value);
      if (!d.ok()) return d.status().WithContext("--faults: cold_start");
      f.cold_start = *d;
    } else {
      return Status::InvalidArgument("--faults: unknown fault \"" + k +
                                     "\" (known: error5xx, stream_error, stall, drop, interval, cold_start)");
    }
  }
  return f;
}

FaultPlan DrawFaults(const FaultSpec& spec, uint64_t seed, uint64_t seq, int32_t output_tokens) {
  FaultPlan p;
  if (!spec.any_request_fault()) return p;
  p.error5xx = Uniform(seed, seq, 1) < spec.error5xx;
  if (p.error5xx) return p;
  if (Uniform(seed, seq, 2) < spec.stream_error) p.stream_error_at = Position(seed, seq, 12, output_tokens);
  if (Uniform(seed, seq, 3) < spec.stall) p.stall_at = Position(seed, seq, 13, output_tokens);
  if (Uniform(seed, seq, 4) < spec.drop) p.drop_at = Position(seed, seq, 14, output_tokens);
  return p;
}

}  // namespace infereng::serve
