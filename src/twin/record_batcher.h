// RecordBatcher: hands finished RequestRecords from the simulation's event loop to a
// consumer (the metrics accumulator, the records.jsonl writer) on a worker thread, so
// summarising overlaps simulating. Records travel in batches, in order (results are
// identical to the unthreaded mode), and come back reset with their chunk vectors'
// capacity kept, so steady state allocates nothing. Bounded: the producer waits when
// `max_batches_in_flight` batches are queued, so memory stays independent of duration.
//
// Thread-safety: Push and Finish from one producer thread; the consumer function runs on
// the worker thread (or inline when `threaded` is false) and must only touch state that
// the producer does not touch until Finish returns.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "metrics/record.h"

namespace infereng::twin {

class RecordBatcher {
 public:
  using Consumer = std::function<void(const metrics::RequestRecord&)>;
  static constexpr size_t kKeepChunks = 512;  // recycled chunk vectors keep at most this capacity
  RecordBatcher(Consumer consumer, bool threaded, size_t batch_size = 256, size_t max_batches_in_flight = 8);
  ~RecordBatcher();  // Finish()es
  RecordBatcher(const RecordBatcher&) = delete;
  RecordBatcher& operator=(const RecordBatcher&) = delete;

  // Takes `r` and leaves it as a reset record (possibly one recycled from earlier, with
  // chunk capacity to reuse).
  void Push(metrics::RequestRecord& r);
  // Flushes and waits until every record was consumed. Idempotent.
  void Finish();

 private:
  using Batch = std::vector<metrics::RequestRecord>;
  static void Reset(metrics::RequestRecord& r);
  enum class FlushKind { kBatchFull, kFinal };  // kFinal: no more batches follow
  void Flush(FlushKind kind);
  void Work();

  Consumer consumer_;
  const bool threaded_;
  const size_t batch_size_;
  const size_t max_in_flight_;
  Batch batch_;   // producer: being filled
  Batch spare_;   // producer: reset records to hand back from Push
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> full_;     // guarded by mu_
  std::vector<Batch> empty_;   // guarded by mu_: consumed and reset
  bool done_ = false;          // guarded by mu_
  bool finished_ = false;      // producer only
  std::thread worker_;
};

}  // namespace infereng::twin
