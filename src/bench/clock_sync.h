// The offset of this host's wall clock to a reference clock, measured NTP-style, for
// sharded load (docs/scale-out.md): each shard records how far its clock sits from one
// reference so `infereng merge` can put the shards' records on one timeline.
//
// One exchange: t0 = local wall clock when the request leaves, t1 / t2 = the reference's
// clock when it received / answered (an `infereng serve` GET /clock gives one instant:
// t1 = t2), t3 = local wall clock when the answer arrived. offset = ((t1 - t0) + (t2 - t3)) / 2
// (reference minus local), round trip = (t3 - t0) - (t2 - t1). The true offset lies within
// offset ± (round trip / 2) whatever the asymmetry of the two legs, so the sample with the
// smallest round trip is kept and its half round trip is the uncertainty.
//
// The exchange is a seam (ClockExchange): tests inject a fake reference with a known offset;
// HttpClockExchange talks to a URL. Library code: never prints.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace infereng::bench {

struct ClockSample {
  int64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;  // Unix ns: local send, reference receive / send, local receive
};

// One exchange with the reference (Unavailable when it does not answer).
using ClockExchange = std::function<Result<ClockSample>()>;

struct ClockOffset {
  std::string reference{};     // the URL (display form) or "fake"
  double offset_ms = 0;        // reference minus local: add it to a local instant to get reference time
  double uncertainty_ms = 0;   // half the kept sample's round trip
  double rtt_ms = 0;           // the kept sample's round trip
  int samples = 0;             // exchanges that answered
};

// `rounds` exchanges (at least one must answer); the min-round-trip sample decides.
// InvalidArgument for a sample whose clocks run backwards (t3 < t0 or t2 < t1).
Result<ClockOffset> MeasureClockOffset(const ClockExchange& exchange, int rounds = 8);

// The estimate from given samples (the pure part of MeasureClockOffset).
Result<ClockOffset> OffsetFromSamples(const std::vector<ClockSample>& samples);

// GET `url` answered with {"realtime_ns": N} (infereng serve's /clock) as an exchange;
// t0 / t3 from `local_now` (the wall clock; a seam for tests).
ClockExchange HttpClockExchange(const std::string& url, std::function<int64_t()> local_now);

// The manifest's shard.clock block: {"reference", "offset_ms", "uncertainty_ms", "rtt_ms", "samples"}.
nlohmann::json ClockOffsetToJson(const ClockOffset& c);

}  // namespace infereng::bench
