#include "twin/record_batcher.h"

#include <utility>

namespace infereng::twin {

RecordBatcher::RecordBatcher(Consumer consumer, bool threaded, size_t batch_size, size_t max_batches_in_flight)
    : consumer_(std::move(consumer)), threaded_(threaded), batch_size_(batch_size < 1 ? 1 : batch_size),
      max_in_flight_(max_batches_in_flight < 1 ? 1 : max_batches_in_flight) {
  if (threaded_) {
    batch_.reserve(batch_size_);
    worker_ = std::thread([this] { Work(); });
  }
}

RecordBatcher::~RecordBatcher() { Finish(); }

void RecordBatcher::Reset(metrics::RequestRecord& r) {
  std::vector<metrics::Chunk> chunks = std::move(r.chunks);
  chunks.clear();
  // Keep small buffers for reuse; give big ones back, or every recycled vector would
  // drift up to the longest output ever seen and memory would grow with the duration.
  if (chunks.capacity() > kKeepChunks) std::vector<metrics::Chunk>().swap(chunks);
  r = metrics::RequestRecord{};
  r.chunks = std::move(chunks);
}

void RecordBatcher::Push(metrics::RequestRecord& r) {
  if (!threaded_) {
    consumer_(r);
    Reset(r);
    return;
  }
  batch_.push_back(std::move(r));
  if (!spare_.empty()) {
    r = std::move(spare_.back());
    spare_.pop_back();
  } else {
    r = metrics::RequestRecord{};
  }
  if (batch_.size() >= batch_size_) Flush(FlushKind::kBatchFull);
}

void RecordBatcher::Flush(FlushKind kind) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return full_.size() < max_in_flight_; });
  if (!batch_.empty()) full_.push_back(std::move(batch_));
  if (kind == FlushKind::kFinal) done_ = true;
  batch_ = Batch();
  if (!empty_.empty()) {
    // Recycled records become the spares handed back by Push; their vector the next batch.
    for (metrics::RequestRecord& rec : empty_.back()) spare_.push_back(std::move(rec));
    empty_.back().clear();
    batch_ = std::move(empty_.back());
    empty_.pop_back();
  }
  batch_.reserve(batch_size_);
  lock.unlock();
  cv_.notify_all();
}

void RecordBatcher::Work() {
  for (;;) {
    Batch b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !full_.empty() || done_; });
      if (full_.empty()) return;  // done and drained
      b = std::move(full_.front());
      full_.pop_front();
    }
    cv_.notify_all();
    for (metrics::RequestRecord& r : b) {
      consumer_(r);
      Reset(r);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (empty_.size() < max_in_flight_) empty_.push_back(std::move(b));
    }
  }
}

void RecordBatcher::Finish() {
  if (finished_) return;
  finished_ = true;
  if (!threaded_) return;
  Flush(FlushKind::kFinal);
  worker_.join();
}

}  // namespace infereng::twin
