// RxStampStats: what the client's receive stamps said over a stretch of reads — which
// source each read's event time came from, and the client's own delay (user-space stamp −
// kernel receive stamp) per SSE event, as a bounded histogram. Filled on the io thread by
// the HTTP client (stamped_socket.h has the stamps themselves) into a per-thread instance;
// merged across io threads and phases by the bench job. A light header: no Asio.
#pragma once

#include <cstdint>
#include <string>

#include "core/histogram.h"

namespace infereng::client {

// Where a read's event time came from.
enum class StampSource { kKernel, kUser };

// What the stamps said over a stretch of reads (one io thread; merged across threads).
struct RxStampStats {
  RxStampStats();
  // user − kernel per SSE event, ms: the client's own delay before it looked at the bytes.
  // Bounded: a log histogram (relative error <= 1.6%), never a sample per token.
  LogHistogram delay_ms;
  uint64_t reads_kernel = 0;  // reads that carried a kernel stamp
  uint64_t reads_user = 0;    // reads without one (user-space stamp used)

  void Merge(const RxStampStats& other);
  // "kernel" (every read), "user" (none), "mixed", or "none" (no reads).
  std::string Source() const;
};

// The calling thread's statistics: the HTTP client notes every read on its io thread here
// (one io thread per client, so no lock; an io thread with several clients pools them).
RxStampStats& ThreadRxStampStats();
// The calling thread's statistics since the last call, and starts afresh. Call on the io
// thread (HttpTransport posts it there).
RxStampStats TakeThreadRxStampStats();

// Kernel receive stamps for connections opened from now on: on by default; off forces the
// user-space fallback (to compare the two, and in tests). Process-wide.
void SetKernelRxStamps(bool on);
bool KernelRxStampsEnabled();

}  // namespace infereng::client
