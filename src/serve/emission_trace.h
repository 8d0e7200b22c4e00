// EmissionTrace: --trace-emissions FILE, the ground truth for benchmark accuracy.
//
// One CSV line per chunk the server wrote to a socket:
//   t_write_ns,t_sched_ns,request_id,x_request_id,tokens
// t_write_ns: steady_clock (CLOCK_MONOTONIC) nanoseconds right after the write() returned,
// the same clock a client on this machine stamps arrivals with; t_sched_ns: when the engine
// scheduled the emission (so t_write_ns - t_sched_ns is the server's own lateness);
// request_id: the id in the response ("chatcmpl-…"/"cmpl-…"); x_request_id: the client's
// x-request-id header, or empty; tokens: output tokens carried by the chunk.
//
// Hot path: Record() appends 32 bytes to a preallocated block (no allocation, no I/O).
// Full blocks go to a background writer thread, which formats and writes them; Close()
// drains everything. Thread-safety: Register/Record/Close from one thread (the server's).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::serve {

class EmissionTrace {
 public:
  struct Rec {
    Nanos t_write;
    Nanos t_sched;
    uint64_t seq;       // request sequence number (the id is derived from it)
    int32_t tokens;
    int32_t kind;       // 0 chat, 1 completions
  };

  // Opens the file (truncating) and starts the writer thread.
  static Result<std::unique_ptr<EmissionTrace>> Open(const std::string& path, std::size_t block_records);
  ~EmissionTrace();

  void Register(uint64_t seq, std::string x_request_id);
  void Record(const Rec& r) {
    cur_.push_back(r);
    if (cur_.size() == block_) HandOff();
  }
  // Flushes and joins the writer; returns the first write error, if any.
  Status Close();

 private:
  EmissionTrace(std::ofstream out, std::size_t block);
  void HandOff();
  void WriterLoop();

  std::ofstream out_;
  std::size_t block_;
  std::vector<Rec> cur_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<Rec>> full_;                       // guarded by mu_
  std::vector<std::pair<uint64_t, std::string>> new_ids_;   // guarded by mu_
  std::vector<std::vector<Rec>> spare_;                     // guarded by mu_: recycled blocks
  bool closing_ = false;                                    // guarded by mu_
  std::unordered_map<uint64_t, std::string> ids_;           // writer thread only
  std::thread writer_;
  bool closed_ = false;
};

// "chatcmpl-<16 hex>" / "cmpl-<16 hex>": the response id for request number `seq`.
std::string ResponseId(int kind, uint64_t seq);

}  // namespace infereng::serve
