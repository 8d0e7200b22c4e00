// RecordingHandler: StreamHandler that fills a metrics::RequestRecord (see http_client.h).
#include <utility>

#include "client/http_client.h"

namespace infereng::client {

RecordingHandler::RecordingHandler(metrics::RequestRecord* record,
                                   std::function<void(RecordingHandler&)> on_done)
    : record_(record), on_done_(std::move(on_done)) {}

void RecordingHandler::OnSend(Nanos t_send) { record_->t_send = t_send; }

void RecordingHandler::OnFirstByte(Nanos t, int http_status) {
  record_->t_first_byte = t;
  record_->http_status = http_status;
}

void RecordingHandler::OnChunk(Nanos t, const ChunkInfo& info) {
  counter_.On(t, info);
  if (keep_text_) text_ += info.text;
}

void RecordingHandler::OnEnd(const StreamEnd& end) {
  metrics::RequestRecord& r = *record_;
  r.token_source = counter_.Finish();
  r.chunks = std::move(counter_.mutable_chunks());
  r.t_end = end.t_end;
  r.prompt_tokens = end.usage.prompt_tokens;
  r.completion_tokens = end.usage.completion_tokens;
  r.cached_tokens = end.usage.cached_tokens;
  r.reasoning_tokens = end.usage.reasoning_tokens;
  // The server's phases, stored as reported (durations on the server's clock).
  auto phase = [](double ms) { return ms < 0 ? Nanos{-1} : MillisToNanos(ms); };
  r.server_queue = phase(end.timings.queue_ms);
  r.server_prefill = phase(end.timings.prefill_ms);
  r.server_decode = phase(end.timings.decode_ms);
  r.server_timings_malformed = end.timings.malformed;
  if (end.http_status != 0) r.http_status = end.http_status;
  r.error = end.error;
  r.error_message = end.error_message;
  r.finish_reason = end.finish_reason;
  r.retries = end.retries;
  r.retry_cause = end.retry_cause;
  r.retry_lost = end.retry_lost;
  // Moved out first: on_done may destroy this handler (and with it on_done_).
  auto done = std::move(on_done_);
  if (done) done(*this);
}

}  // namespace infereng::client
