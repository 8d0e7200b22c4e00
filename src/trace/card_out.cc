// Characterization -> the card's traffic section (YAML text built by hand: the card's
// parser is the check; card_out_test parses what this writes).
#include "trace/card_out.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/units.h"
#include "trace/datetime.h"

namespace infereng::trace {
namespace {

std::string Num(double v) { return units::FormatSignificant(v, 6); }

std::string Period(const Characterization& c) {
  const ArrivalStats& a = c.arrivals;
  if (c.absolute_time) return FormatDateTime(a.first_t_s) + " .. " + FormatDateTime(a.last_t_s) + " UTC";
  return "t=" + Num(a.first_t_s) + "s .. " + Num(a.last_t_s) + "s";
}

std::string Lengths(const LengthStats& l, const std::string& file, std::vector<std::pair<std::string, std::string>>* files) {
  const double lo = std::max(1.0, l.stats.min), hi = std::max(lo, l.stats.max);
  std::string clamps = ", min: " + Num(lo) + ", max: " + Num(hi);
  if (l.card_form == "lognormal") {
    return "{lognormal: {p50: " + Num(l.stats.p50) + ", p99: " + Num(l.stats.p99) + "}" + clamps + "}";
  }
  std::string body;
  body.reserve(l.sorted.size() * 5);
  for (double v : l.sorted) body += std::to_string(static_cast<int64_t>(std::max(1.0, v))) + "\n";
  files->emplace_back(file, std::move(body));
  return "{empirical: " + file + clamps + "}";
}

}  // namespace

Result<CardOut> TrafficCard(const Characterization& c, const std::string& stem) {
  const ArrivalStats& a = c.arrivals;
  if (!(a.mean_rate > 0) || c.input.sorted.empty()) return Status::InvalidArgument("the trace has no rate or lengths to write");
  CardOut out;
  const std::string note = "\"measured: trace sha256:" + c.sha256.substr(0, 12) + " " + Period(c) + "\"";
  auto field = [&](const std::string& key, const std::string& value) {
    return "  " + key + ": {value: " + value + ", note: " + note + "}\n";
  };
  std::ostringstream y;
  y << "# Traffic measured by `infereng characterize` from " << c.path << "\n"
    << "#   sha256 " << c.sha256 << "\n"
    << "#   period " << Period(c) << " (" << Num(a.span_s) << " s, " << a.requests << " requests, format "
    << c.format << ")\n"
    << "# Copy this section into a card; `infereng card check` then lists none of it as assumed.\n"
    << "traffic:\n";
  std::string arrival = "{process: " + a.chosen + ", rate: " + Num(a.mean_rate) + "rps";
  if (a.chosen == "gamma") arrival += ", cv: " + Num(a.gap_cv);
  y << field("arrival", arrival + "}");
  const WindowFigure* peak = nullptr;
  for (const WindowFigure& w : a.peak_to_mean) {
    if (w.windows > 0 && (w.window_s == 60 || (peak == nullptr && w.window_s == 1))) peak = &w;
  }
  if (peak != nullptr) y << field("peak_rate", Num(std::max(peak->peak_rate, a.mean_rate)) + "rps");
  y << field("input_tokens", Lengths(c.input, stem + ".input_tokens.txt", &out.files));
  y << field("output_tokens", Lengths(c.output, stem + ".output_tokens.txt", &out.files));
  if (c.prefix.present) {
    const PrefixStats& p = c.prefix;
    const auto tokens = static_cast<int64_t>(std::floor(std::min(p.cached_tokens.p50, c.input.p10)));
    if (p.cached_prefix_requests > 0 && tokens > 0) {
      y << field("prefix", "{share: " + Num(p.cached_share) + ", tokens: " + std::to_string(tokens) +
                               ", distinct: " + std::to_string(std::clamp<int64_t>(p.distinct_prefixes, 1, 1'000'000)) +
                               ", tenants: " + std::to_string(std::clamp<int64_t>(p.tenant_count, 1, 100'000)) + "}");
    } else {
      y << field("prefix", "{share: 0}");
    }
  }
  out.yaml = y.str();
  return out;
}

}  // namespace infereng::trace
