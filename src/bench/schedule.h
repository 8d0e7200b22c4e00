// Schedule: turns the workload generator's intended arrival offsets into absolute send
// times on the run's steady clock, and paces a thread to them.
//
// Why absolute: every intended time is `t0 + f(offset)`, computed from the start of the run,
// never `previous + gap`, so a late send never shifts the ones after it (no drift) and the
// lateness shows up as schedule lag (t_send - t_sched) instead of silently lowering the
// offered rate. Latency is also measured from t_sched (coordinated-omission-free).
//
// Ramp-up: over `ramp_s` the offered rate grows linearly from 0 to the target, i.e. the
// generator's load-time a maps to real time t with a = t^2 / (2R) for t < R and
// a = t - R/2 afterwards. Closed loop ramps the concurrency instead (RampedConcurrency).
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.h"
#include "workload/client_load.h"

namespace infereng::bench {

struct RampOptions {
  Nanos ramp = 0;  // 0: no ramp
};

// The ramp's arithmetic is shared with the twin's client layer (workload/client_load.h).
using workload::RampedConcurrency;  // concurrency allowed at `elapsed` while ramping
using workload::RampedOffset;       // generator arrival offset -> real time since t0

// Sleeps on `clock` until `t`, waking at least every 10 ms to look at `stop`. Returns
// false when stopped first. The last stretch is the clock's own high-resolution wait.
bool PaceUntil(Clock& clock, Nanos t, const std::atomic<bool>& stop);

}  // namespace infereng::bench
