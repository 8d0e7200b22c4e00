// Fault injection for `infereng serve`: the --faults spec and the seeded per-request draw.
//
// Spec: comma-separated key=value, e.g.
//   error5xx=0.05,stream_error=0.02,stall=0.01:500ms,drop=0.01,interval=4,cold_start=10s
//   error5xx=P       share of requests answered HTTP 500 before any stream starts
//   stream_error=P   share of streams that get an error event inside the 200 stream, then [DONE]
//   stall=P:DUR      share of streams that stall DUR (e.g. 500ms, 2s) mid-stream
//   drop=P           share of streams whose connection is dropped mid-stream (no [DONE])
//   interval=K       stream interval: K tokens per SSE chunk (like vLLM --stream-interval)
//   cold_start=DUR   /health answers 503 "loading" for DUR after start; requests get 503
// Draws are a pure function of (seed, request sequence number), so a run is reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::serve {

struct FaultSpec {
  double error5xx = 0;
  double stream_error = 0;
  double stall = 0;
  Nanos stall_duration = 0;
  double drop = 0;
  int stream_interval = 1;
  Nanos cold_start = 0;

  bool any_request_fault() const { return error5xx > 0 || stream_error > 0 || stall > 0 || drop > 0; }
};

// Parses a --faults spec; errors name the offending item.
Result<FaultSpec> ParseFaultSpec(std::string_view spec);

// Parses "500ms", "2s", "1.5s", "250us", "10m"; a bare number means seconds.
Result<Nanos> ParseDuration(std::string_view text);

// What happens to one request. Token indices are 1-based positions in the output at which
// the fault fires (before that token is written); 0 = never.
struct FaultPlan {
  bool error5xx = false;
  int32_t stream_error_at = 0;
  int32_t stall_at = 0;
  int32_t drop_at = 0;
};

// Draws the plan of request number `seq` producing `output_tokens` tokens.
FaultPlan DrawFaults(const FaultSpec& spec, uint64_t seed, uint64_t seq, int32_t output_tokens);

}  // namespace infereng::serve
