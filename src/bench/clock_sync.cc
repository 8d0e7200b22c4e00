#include "bench/clock_sync.h"

#include <fmt/format.h>

#include <algorithm>

#include "bench/target.h"
#include "client/http_client.h"

namespace infereng::bench {

Result<ClockOffset> OffsetFromSamples(const std::vector<ClockSample>& samples) {
  if (samples.empty()) return Status::Unavailable("clock reference: no exchange answered");
  const ClockSample* best = nullptr;
  int64_t best_rtt = 0;
  for (const ClockSample& s : samples) {
    if (s.t3 < s.t0 || s.t2 < s.t1) {
      return Status::InvalidArgument(fmt::format("clock reference: a sample runs backwards (t0 {} t1 {} t2 {} t3 {})",
                                                 s.t0, s.t1, s.t2, s.t3));
    }
    const int64_t rtt = (s.t3 - s.t0) - (s.t2 - s.t1);
    if (!best || rtt < best_rtt) best = &s, best_rtt = std::max<int64_t>(rtt, 0);
  }
  ClockOffset c;
  // Halves first: the sum of two Unix-ns differences fits, but keep to doubles for the ms.
  c.offset_ms = (static_cast<double>(best->t1 - best->t0) + static_cast<double>(best->t2 - best->t3)) / 2 / 1e6;
  c.rtt_ms = static_cast<double>(best_rtt) / 1e6;
  c.uncertainty_ms = c.rtt_ms / 2;
  c.samples = static_cast<int>(samples.size());
  return c;
}

Result<ClockOffset> MeasureClockOffset(const ClockExchange& exchange, int rounds) {
  std::vector<ClockSample> samples;
  Status last = Status::Unavailable("clock reference: no exchange made");
  for (int i = 0; i < std::max(rounds, 1); ++i) {
    Result<ClockSample> s = exchange();
    if (s.ok()) {
      samples.push_back(*s);
    } else {
      last = s.status();
    }
  }
  if (samples.empty()) return last;
  return OffsetFromSamples(samples);
}

ClockExchange HttpClockExchange(const std::string& url, std::function<int64_t()> local_now) {
  std::string root = url, path = "/clock";
  if (root.ends_with("/clock")) root.resize(root.size() - 6);
  return [root, path, local_now = std::move(local_now)]() -> Result<ClockSample> {
    INFERENG_ASSIGN_OR_RETURN(Target t, ParseTarget(root));
    client::ClientOptions co;
    co.base_url = t.root;
    co.connect_timeout = 2 * kNanosPerSecond;
    ClockSample s;
    s.t0 = local_now();
    Result<client::FetchResponse> r = client::Fetch(co, "GET", path, {}, 2 * kNanosPerSecond);
    s.t3 = local_now();
    if (!r.ok()) return r.status().WithContext("clock reference " + t.display);
    if (r->status != 200) {
      return Status::Unavailable(fmt::format("clock reference {}: GET {} answered HTTP {}", t.display, path, r->status));
    }
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j.contains("realtime_ns") || !j["realtime_ns"].is_number_integer()) {
      return Status::ProtocolError("clock reference " + t.display + ": expected {\"realtime_ns\": N} from GET " + path);
    }
    s.t1 = s.t2 = j["realtime_ns"].get<int64_t>();
    return s;
  };
}

nlohmann::json ClockOffsetToJson(const ClockOffset& c) {
  return {{"reference", c.reference}, {"offset_ms", c.offset_ms}, {"uncertainty_ms", c.uncertainty_ms},
          {"rtt_ms", c.rtt_ms}, {"samples", c.samples}};
}

}  // namespace infereng::bench
