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

Result<CardOut> TrafficCard(const Characterization& c, const std::string& stem, const TrafficCardOptions& options) {
  const ArrivalStats& a = c.arrivals;
  if (!(a.mean_rate > 0) || c.input.sorted.empty()) return Status::InvalidArgument("the trace has no rate or lengths to write");
  const SessionStats& ss = c.sessions;
  if (options.sessions && (!ss.present || ss.follow_ups == 0 || ss.first_input.sorted.empty())) {
    return Status::InvalidArgument(
        "--card-sessions: the trace has no sessions to write (no session ids, no hash_ids to infer conversations "
        "from, or no session with a second turn)");
  }
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
    << (options.sessions ? "#   sessions " + std::to_string(ss.sessions) + (ss.source == "inferred" ? " inferred from hash_ids" : "") +
                               " (" + std::to_string(ss.follow_ups) + " follow-up turns): the traffic below is conversations\n"
                         : std::string())
    << "# Copy this section into a card; `infereng card check` then lists none of it as assumed.\n"
    << "traffic:\n";
  // With sessions, the arrival process is the sessions' starts.
  const ArrivalStats& starts = options.sessions ? ss.starts : a;
  std::string arrival = "{process: " + starts.chosen + ", rate: " + Num(starts.mean_rate) + "rps";
  if (starts.chosen == "gamma") arrival += ", cv: " + Num(starts.gap_cv);
  if (options.sessions) {
    y << "  # sessions start at this rate; with " << Num(ss.turns.mean) << " turns each on average, "
      << Num(starts.mean_rate * ss.turns.mean) << " requests/s (the trace: " << Num(a.mean_rate) << ")\n";
  }
  y << field("arrival", arrival + "}");
  const WindowFigure* peak = nullptr;
  for (const WindowFigure& w : a.peak_to_mean) {
    if (w.windows > 0 && (w.window_s == 60 || (peak == nullptr && w.window_s == 1))) peak = &w;
  }
  if (peak != nullptr) y << field("peak_rate", Num(std::max(peak->peak_rate, a.mean_rate)) + "rps");
  const LengthStats& input = options.sessions ? ss.first_input : c.input;
  if (options.sessions) y << "  # the sessions' first turns; later turns re-send the conversation\n";
  y << field("input_tokens", Lengths(input, stem + ".input_tokens.txt", &out.files));
  y << field("output_tokens", Lengths(c.output, stem + ".output_tokens.txt", &out.files));
  if (c.prefix.present) {
    const PrefixStats& p = c.prefix;
    const double cached_p50 = options.sessions ? ss.first_cached_tokens.p50 : p.cached_tokens.p50;
    const int64_t cached = options.sessions ? ss.first_cached_requests : p.cached_prefix_requests;
    const double share = options.sessions ? static_cast<double>(cached) / static_cast<double>(ss.sessions) : p.cached_share;
    const auto tokens = static_cast<int64_t>(std::floor(std::min(cached_p50, input.p10)));
    if (cached > 0 && tokens > 0) {
      y << field("prefix", "{share: " + Num(share) + ", tokens: " + std::to_string(tokens) +
                               ", distinct: " +
                               std::to_string(std::clamp<int64_t>(
                                   options.sessions ? ss.first_distinct_prefixes : p.distinct_prefixes, 1, 1'000'000)) +
                               ", tenants: " + std::to_string(std::clamp<int64_t>(p.tenant_count, 1, 100'000)) + "}");
    } else {
      y << field("prefix", "{share: 0}");
    }
  }
  if (options.sessions) {
    y << "  # think_time: the time between a session's arrivals, which holds the earlier turn's own time in\n"
      << "  # the system: the card counts it from the turn's end, so a run's turns come that much later\n";
    y << field("sessions", "{turns: " + Lengths(ss.turns_fit, stem + ".turns.txt", &out.files) +
                               ", think_time: " + Lengths(ss.gap_ms, stem + ".think_time_ms.txt", &out.files) +
                               ", new_message_tokens: " +
                               Lengths(ss.new_message_fit, stem + ".new_message_tokens.txt", &out.files) + "}");
  }
  out.yaml = y.str();
  return out;
}

}  // namespace infereng::trace
