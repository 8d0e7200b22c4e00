// RecordPipeline: where finished requests go — off the event loop.
//
// Push() (called on the transport's io thread) only moves the Finished into a queue and
// wakes the pipeline thread. That thread does everything else, in order: scores the
// quality check, lets the prompt builder observe the achieved prompt length, scrubs the
// API key from error text (defence in depth), shows it to `on_record`, appends the record to requests.jsonl and/or
// keeps it in memory, and updates the live counters the progress line reads. The lines of
// the records one wake-up drained go out with one write(2) (RecordWriter::Buffer/Flush):
// a crash keeps every line of the batches before the one being written.
//
// Thread-safety: Push from any thread; counters are atomics; Close() once, from the
// owning thread, after the producers are done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/prompt.h"
#include "bench/quality.h"
#include "bench/transport.h"
#include "metrics/quality.h"
#include "metrics/records_io.h"

namespace infereng::bench {

struct PipelineOptions {
  metrics::RecordWriter* writer = nullptr;        // null: no file
  bool keep_in_memory = false;                    // collect records for Records()
  PromptBuilder* prompts = nullptr;               // observe achieved prompt lengths
  const std::vector<EvalItem>* evals = nullptr;   // quality checks by Finished::quality_item
  std::string secret;                             // scrubbed from error messages
  // Consecutive connection failures after which `on_target_down` is called (0 = never).
  int target_down_after = 50;
  std::function<void()> on_target_down;
  // Sees every finished record on the pipeline thread, before it is written (e.g. the bench
  // job's steady-phase schedule lag); null: nothing.
  std::function<void(const metrics::RequestRecord&)> on_record;
};

struct PipelineCounters {
  std::atomic<int64_t> finished{0};
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> output_tokens{0};
  std::atomic<int64_t> quality_checked{0};
  std::atomic<int64_t> quality_passed{0};
  std::atomic<int64_t> retried{0};          // requests re-sent after a dead kept-alive connection
  std::atomic<int64_t> retry_lost_ns{0};    // sum of their first send -> re-send
};

class RecordPipeline {
 public:
  explicit RecordPipeline(PipelineOptions options);
  ~RecordPipeline();

  void Push(Finished&& f);
  // Drains the queue and joins the thread. Returns the first write error, if any.
  Status Close();

  const PipelineCounters& counters() const { return counters_; }
  std::vector<metrics::RequestRecord>& Records() { return records_; }  // after Close()
  Nanos ThreadCpu() const { return thread_cpu_.load(); }
  // The first failed request's class and message ("" when none failed), after Close().
  const std::string& first_error() const { return first_error_; }
  // One outcome per quality check, in completion order (texts only on the first
  // kKeptFailureTexts failures), after Close().
  std::vector<metrics::QualityOutcome>& QualityOutcomes() { return quality_; }

  // Failures whose prompt/expected/got are kept: more than a report shows, so the ones in
  // the measurement window are still enough after the warm-up's are dropped.
  static constexpr size_t kKeptFailureTexts = 4 * metrics::kMaxQualityFailures;

 private:
  void Loop();
  void Process(Finished& f);

  PipelineOptions opt_;
  PipelineCounters counters_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Finished> queue_;  // guarded by mu_
  bool closing_ = false;         // guarded by mu_
  std::thread thread_;
  Status write_status_;          // pipeline thread, read after join
  int consecutive_connect_ = 0;  // pipeline thread
  std::vector<metrics::RequestRecord> records_;
  std::string first_error_;      // pipeline thread, read after join
  std::vector<metrics::QualityOutcome> quality_;  // pipeline thread, read after join
  size_t failure_texts_ = 0;                      // pipeline thread
  std::atomic<Nanos> thread_cpu_{0};
};

}  // namespace infereng::bench
