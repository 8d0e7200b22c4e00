// Schedule: turns the workload generator's intended arrival offsets into absolute send
// times on the run's steady clock, and paces a thread to them.
//
// Why absolute: every intended time is `t0 + f(offset)`, computed from the start of the run,
// never `previous + gap`, so a late send never shifts the ones after it (no drift) and the
// lateness shows up as schedule lag (t_send - t_sched) instead of silently lowering the
// offered rate. Latency is also measured from t_sched (coordinated-omission-free).
//
// Ramp-up is the load rule's (workload/client_load.h: RampedOffset, RampedConcurrency),
// shared with the twin's client layer.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/clock.h"
#include "workload/client_load.h"

namespace infereng::bench {

using workload::RampedConcurrency;  // concurrency allowed at `elapsed` while ramping
using workload::RampedOffset;       // generator arrival offset -> real time since t0

// Sleeps on `clock` until `t`, waking at least every 10 ms to look at `stop`. Returns
// false when stopped first. The last stretch is the clock's own high-resolution wait.
bool PaceUntil(Clock& clock, Nanos t, const std::atomic<bool>& stop);

}  // namespace infereng::bench
