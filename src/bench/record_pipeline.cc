#include "bench/record_pipeline.h"

#include <time.h>

#include "bench/target.h"

namespace infereng::bench {
namespace {

Nanos ThisThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

}  // namespace

RecordPipeline::RecordPipeline(PipelineOptions options) : opt_(std::move(options)) {
  thread_ = std::thread([this] { Loop(); });
}

RecordPipeline::~RecordPipeline() { (void)Close(); }

void RecordPipeline::Push(Finished&& f) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(f));
  }
  cv_.notify_one();
}

Status RecordPipeline::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  return write_status_;
}

void RecordPipeline::Loop() {
  std::vector<Finished> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty() && closing_) break;
      batch.swap(queue_);
    }
    for (Finished& f : batch) Process(f);
    batch.clear();
    // The batch's lines in one write(2): a record is on disk before the next wake-up.
    if (opt_.writer != nullptr && write_status_.ok()) {
      Status s = opt_.writer->Flush();
      if (!s.ok()) write_status_ = s;
    }
    thread_cpu_.store(ThisThreadCpu());
  }
  thread_cpu_.store(ThisThreadCpu());
}

void RecordPipeline::Process(Finished& f) {
  metrics::RequestRecord& r = f.record;
  if (!opt_.secret.empty()) r.error_message = ScrubSecret(std::move(r.error_message), opt_.secret);
  if (opt_.on_record) opt_.on_record(r);
  if (f.quality_item >= 0 && opt_.evals != nullptr && r.ok() &&
      f.quality_item < static_cast<int>(opt_.evals->size())) {
    const EvalItem& item = (*opt_.evals)[static_cast<size_t>(f.quality_item)];
    std::string why;
    const bool pass = RunCheck(item.check, f.text, &why);
    r.quality_pass = pass ? 1 : 0;
    metrics::QualityOutcome o{.request_id = r.id, .item = f.quality_item, .check = CheckKindName(item.check.kind),
                              .pass = pass, .t_sched = r.t_sched, .t_done = r.t_end};
    if (!pass && failure_texts_ < kKeptFailureTexts) {
      // Bounded excerpts, the API key scrubbed (an eval prompt or an echoing server could carry it).
      ++failure_texts_;
      o.prompt = metrics::QualityExcerpt(ScrubSecret(PromptText(item), opt_.secret));
      o.expected = metrics::QualityExcerpt(ScrubSecret(DescribeExpected(item.check), opt_.secret));
      o.got = metrics::QualityExcerpt(ScrubSecret(f.text, opt_.secret));
      o.why = metrics::QualityExcerpt(why);
    }
    quality_.push_back(std::move(o));
    counters_.quality_checked.fetch_add(1, std::memory_order_relaxed);
    if (pass) counters_.quality_passed.fetch_add(1, std::memory_order_relaxed);
  }
  // A request with images is left out: its usage.prompt_tokens holds the image tokens too,
  // counted by the server's own rule and chat template (Qwen2-VL adds vision start/end
  // tokens around each image), so it says nothing exact about the text's length.
  if (opt_.prompts != nullptr && r.ok() && f.quality_item < 0 && r.images == 0) {
    opt_.prompts->Observe(r.input_tokens_target, r.prompt_tokens);
  }
  counters_.finished.fetch_add(1, std::memory_order_relaxed);
  if (!r.ok()) counters_.errors.fetch_add(1, std::memory_order_relaxed);
  if (!r.ok() && first_error_.empty() && r.error != metrics::ErrorClass::kCancelled) {
    first_error_ = std::string(metrics::ErrorClassName(r.error)) + ": " + r.error_message;
  }
  if (r.retries > 0) {
    counters_.retried.fetch_add(1, std::memory_order_relaxed);
    counters_.retry_lost_ns.fetch_add(r.retry_lost, std::memory_order_relaxed);
  }
  if (r.ok()) counters_.output_tokens.fetch_add(r.OutputTokens(), std::memory_order_relaxed);

  if (r.error == metrics::ErrorClass::kConnect) {
    if (++consecutive_connect_ == opt_.target_down_after && opt_.on_target_down) opt_.on_target_down();
  } else if (r.error != metrics::ErrorClass::kCancelled) {
    consecutive_connect_ = 0;
  }

  if (opt_.writer != nullptr && write_status_.ok()) {
    Status s = opt_.writer->Buffer(r);  // written with the rest of the batch (Loop)
    if (!s.ok()) write_status_ = s;
  }
  if (opt_.keep_in_memory) records_.push_back(std::move(r));
}

}  // namespace infereng::bench
