// Emission: turns the engine's token events into bytes on the socket at the moment they
// are due, applying the stream interval and the mid-stream faults (stall, error, drop),
// and stamps every write (lateness, --trace-emissions). Also the non-streaming answer and
// aborts. Runs on the server thread, often inside the engine sink: anything that could
// re-enter the engine (closing a socket, starting the next request) is posted.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "serve/embeddings.h"
#include "serve/rerank.h"
#include "serve/server_internal.h"

namespace infereng::serve {

namespace {

thread_local std::string t_text;   // the tokens of one chunk
thread_local std::string t_event;  // one or more SSE events

// Appends `event` as one HTTP/1.1 chunk.
void AppendHttpChunk(std::string& out, std::string_view event) {
  fmt::format_to(std::back_inserter(out), "{:x}\r\n", event.size());
  out += event;
  out += "\r\n";
}

// Output token `i` of `r`: its eval answer's word (after the reasoning tokens), or the
// text model's filler word (reasoning tokens too).
std::string_view TokenText(const ActiveRequest& r, int32_t i) {
  if (!r.answer_tokens.empty() && i >= r.reasoning_tokens) {
    const auto k = static_cast<std::size_t>(i - r.reasoning_tokens);
    return k < r.answer_tokens.size() ? std::string_view(r.answer_tokens[k]) : std::string_view();
  }
  return OutputTokenText(r.text_seed, i);
}

// The usage of a response with `completion` tokens so far.
Usage UsageOf(const ActiveRequest& r, int32_t completion) {
  return Usage{.prompt = r.prompt_tokens, .completion = completion, .cached = r.cached,
               .reasoning = r.reasoning_tokens > 0 ? std::min(r.reasoning_tokens, completion) : -1};
}

}  // namespace

void Server::Impl::Emit(ActiveRequest& r) {
  if (r.ended) return;
  if (r.stall_until != 0) return;  // the stall timer resumes it
  const FaultPlan& f = r.faults;
  while (r.available > r.written) {
    const int32_t next = r.written + 1;  // 1-based index of the next token to write
    if (f.drop_at == next) {
      r.ended = true;
      r.conn->PostClose();
      return;
    }
    if (f.stream_error_at == next) return FailStream(r, "injected fault: error in the middle of the stream");
    if (f.stall_at == next && r.stream) {
      r.faults.stall_at = 0;
      return StartStall(r);
    }
    int32_t n = r.available - r.written;
    bool capped = false;
    for (int32_t point : {f.drop_at, f.stream_error_at, r.stream ? f.stall_at : 0}) {
      if (point > next && point - next < n) {
        n = point - next;
        capped = true;
      }
    }
    const bool last = r.written + n >= r.output_tokens;
    if (!r.stream) {
      r.written += n;
      if (last) return SendNonStream(r);
      continue;
    }
    if (!last && !capped && n < options.faults.stream_interval) return;
    WriteChunk(r, n, last);
    if (last) return EndStream(r);
  }
}

void Server::Impl::WriteChunk(ActiveRequest& r, int32_t n, bool final_chunk) {
  // Tokens still inside the reasoning go out first as their own reasoning event (same
  // write), so every event is one kind and its continuous usage counts it exactly.
  const int32_t thinking = std::clamp(r.reasoning_tokens - r.written, 0, n);
  auto text_of = [&r, final_chunk](int32_t from, int32_t to) {
    t_text.clear();
    for (int32_t i = from; i < to; ++i) {
      std::string_view tok = TokenText(r, i);
      if (final_chunk && i == r.output_tokens - 1 && r.stop.last_token_bytes >= 0) {
        tok = tok.substr(0, static_cast<std::size_t>(r.stop.last_token_bytes));
      }
      t_text += tok;
    }
  };
  Usage usage = UsageOf(r, r.written + n);
  const Usage* cu = r.continuous ? &usage : nullptr;
  std::string& out = scratch;
  out.clear();
  if (r.written == 0 && r.chat && !r.transcription) {  // vLLM's transcription stream has no role chunk
    t_event.clear();
    Usage u0 = UsageOf(r, 0);
    r.format.AppendRole(t_event, r.continuous ? &u0 : nullptr);
    AppendHttpChunk(out, t_event);
  }
  t_event.clear();
  if (thinking > 0) {
    text_of(r.written, r.written + thinking);
    Usage ur = UsageOf(r, r.written + thinking);
    r.format.AppendReasoning(t_event, t_text, r.continuous ? &ur : nullptr);
  }
  // The answer's part (none while still reasoning; the last token is always an answer's).
  if (thinking < n) {
    text_of(r.written + thinking, r.written + n);
    if (final_chunk) {
      std::string_view reason = r.stop.stopped || r.natural_stop ? "stop" : "length";
      const Timings timings = TimingsOf(r);
      r.format.AppendFinal(t_event, t_text, reason, r.stop_string, cu, &timings);
    } else {
      r.format.AppendContent(t_event, t_text, cu);
    }
  }
  AppendHttpChunk(out, t_event);
  r.conn->SendStream(out);
  const Nanos t_write = WallNow();
  // A chunk is due when its first token could have gone out: its oldest token's time,
  // or, with a stream interval, the time its last token arrived; after a stall, the
  // stall's end.
  const Nanos ready = options.faults.stream_interval > 1 ? r.last_sched : r.oldest_sched;
  const Nanos sched = std::max(ready, r.release_sched);
  metrics.lateness_fine.Record(t_write - sched);
  metrics.lateness.Observe(NanosToSeconds(t_write - sched));
  if (trace) trace->Record({t_write, sched, r.seq, n, r.chat ? 0 : 1});
  r.written += n;
  r.oldest_sched = r.last_sched;  // what is left unwritten (a capped chunk) was due by then
  snap.tokens_emitted += n;
}

void Server::Impl::EndStream(ActiveRequest& r) {
  r.ended = true;
  std::string& out = scratch;
  out.clear();
  if (r.include_usage) {
    t_event.clear();
    r.format.AppendUsage(t_event, UsageOf(r, r.output_tokens));
    AppendHttpChunk(out, t_event);
  }
  AppendHttpChunk(out, "data: [DONE]\n\n");
  out += "0\r\n\r\n";
  r.conn->SendStream(out);
  const Nanos now = WallNow();
  metrics.e2e.Observe(NanosToSeconds(now - r.t_arrival));
  ++metrics.counters.success_by_reason[r.stop.stopped || r.natural_stop ? "stop" : "length"];
  r.conn->FinishActive();  // destroys r
}

void Server::Impl::SendNonStream(ActiveRequest& r) {
  r.ended = true;
  ServerConnection& c = *r.conn;
  if (r.faults.stream_error_at) {
    c.SendError(MakeApiError(500, "injected fault: error during generation", "InternalServerError"));
    return c.FinishActive();
  }
  if (r.embeddings) return SendEmbeddings(r);
  if (r.rerank) return SendRerank(r);
  std::string text, reasoning;
  for (int32_t i = 0; i < r.output_tokens; ++i) {
    std::string_view tok = TokenText(r, i);
    if (i == r.output_tokens - 1 && r.stop.last_token_bytes >= 0) tok = tok.substr(0, static_cast<std::size_t>(r.stop.last_token_bytes));
    (i < r.reasoning_tokens ? reasoning : text) += tok;
  }
  const char* reason = r.stop.stopped || r.natural_stop ? "stop" : "length";
  if (r.transcription) {
    SendTranscription(r, text);
  } else {
    SendCompletion(r, text, reasoning, reason);
  }
  const Nanos t_write = WallNow();
  metrics.lateness_fine.Record(t_write - r.last_sched);
  metrics.lateness.Observe(NanosToSeconds(t_write - r.last_sched));
  if (trace) trace->Record({t_write, r.last_sched, r.seq, r.output_tokens, r.chat ? 0 : 1});
  snap.tokens_emitted += r.output_tokens;
  metrics.e2e.Observe(NanosToSeconds(t_write - r.t_arrival));
  ++metrics.counters.success_by_reason[reason];
  c.FinishActive();
}

void Server::Impl::SendCompletion(ActiveRequest& r, const std::string& text, const std::string& reasoning, const char* reason) {
  nlohmann::json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", reason},
                           {"stop_reason", r.stop_string.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stop_string)}};
  if (r.chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    if (r.reasoning_tokens > 0) choice["message"]["reasoning_content"] = reasoning;
  } else {
    choice["text"] = text;
  }
  nlohmann::json j = {{"id", ResponseId(r.chat ? 0 : 1, r.seq)},
                      {"object", r.chat ? "chat.completion" : "text_completion"},
                      {"created", created_unix},
                      {"model", options.model_name},
                      {"choices", nlohmann::json::array({choice})},
                      {"usage",
                       {{"prompt_tokens", r.prompt_tokens},
                        {"total_tokens", r.prompt_tokens + r.output_tokens},
                        {"completion_tokens", r.output_tokens},
                        {"prompt_tokens_details", {{"cached_tokens", r.cached}}}}}};
  if (r.reasoning_tokens > 0) j["usage"]["completion_tokens_details"] = {{"reasoning_tokens", r.reasoning_tokens}};
  j["timings"] = TimingsObject(TimingsOf(r), /*decode=*/true);
  r.conn->SendResponse(200, "application/json", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// OpenAI's transcription answers: json {text, usage} with token usage (gpt-4o-transcribe's
// shape: vLLM's says only {"type":"duration"}, which leaves a client no token count), text
// as a plain body, verbose_json with the clip's duration and one segment.
void Server::Impl::SendTranscription(ActiveRequest& r, const std::string& text) {
  const TranscriptionParams& p = *r.transcription;
  if (p.response_format == "text") return r.conn->SendResponse(200, "text/plain; charset=utf-8", text);
  const double seconds = static_cast<double>(p.audio.duration_ms) / 1000.0;
  nlohmann::json j = {{"text", text}};
  if (p.response_format == "verbose_json") {
    j = {{"task", "transcribe"},
         {"language", p.language.empty() ? "english" : p.language},
         {"duration", seconds},
         {"text", text},
         {"segments", nlohmann::json::array({{{"id", 0}, {"seek", 0}, {"start", 0.0}, {"end", seconds}, {"text", text},
                                              {"tokens", nlohmann::json::array()}, {"temperature", 0.0},
                                              {"avg_logprob", 0.0}, {"compression_ratio", 1.0}, {"no_speech_prob", 0.0}}})}};
  }
  j["usage"] = {{"type", "tokens"},
                {"input_tokens", r.prompt_tokens},
                {"input_token_details", {{"text_tokens", r.prompt_tokens - r.audio_tokens}, {"audio_tokens", r.audio_tokens}}},
                {"output_tokens", r.output_tokens},
                {"total_tokens", r.prompt_tokens + r.output_tokens}};
  j["timings"] = TimingsObject(TimingsOf(r), /*decode=*/true);
  r.conn->SendResponse(200, "application/json", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Server::Impl::SendEmbeddings(ActiveRequest& r) {
  Timings t = TimingsOf(r);
  t.predicted_ms = -1;  // no decode: the answer is ready when the prefill ends
  t.predicted_n = 0;
  r.conn->SendResponse(200, "application/json", EmbeddingsResponseJson(*r.embeddings, options.model_name, t));
  FinishPrefillOnly(r);
}

void Server::Impl::SendRerank(ActiveRequest& r) {
  Timings t = TimingsOf(r);
  t.predicted_ms = -1;  // no decode: the scores are ready when the prefill ends
  t.predicted_n = 0;
  const std::string id = "rerank-" + ResponseId(1, r.seq).substr(5);  // "cmpl-<hex>" -> "rerank-<hex>"
  r.conn->SendResponse(200, "application/json", RerankResponseJson(*r.rerank, id, options.model_name, t));
  FinishPrefillOnly(r);
}

void Server::Impl::FinishPrefillOnly(ActiveRequest& r) {
  const Nanos t_write = WallNow();
  metrics.lateness_fine.Record(t_write - r.last_sched);
  metrics.lateness.Observe(NanosToSeconds(t_write - r.last_sched));
  if (trace) trace->Record({t_write, r.last_sched, r.seq, 0, 1});
  metrics.e2e.Observe(NanosToSeconds(t_write - r.t_arrival));
  ++metrics.counters.success_by_reason["stop"];
  r.conn->FinishActive();  // destroys r
}

Timings Server::Impl::TimingsOf(const ActiveRequest& r) const {
  // Engine-time differences scaled to the server's wall clock, so they are comparable with
  // the client's TTFT at any --speedup.
  auto ms = [this](Nanos from, Nanos to) {
    return from < 0 || to < from ? -1.0 : NanosToMillis(to - from) / options.speedup;
  };
  Timings t;
  t.queue_ms = ms(r.t_submit_e, r.t_sched_e);
  t.prompt_ms = ms(r.t_sched_e, r.t_first_e);
  t.predicted_ms = r.t_first_e < 0 ? -1.0 : ms(r.t_first_e, r.last_token_engine_t);
  t.cache_n = r.cached;
  t.prompt_n = std::max(0, r.prompt_tokens - r.cached);
  t.predicted_n = r.output_tokens;
  return t;
}

void Server::Impl::FailStream(ActiveRequest& r, std::string_view message) {
  r.ended = true;
  ServerConnection& c = *r.conn;
  ApiError e = MakeApiError(500, std::string(message), "InternalServerError");
  Unregister(r);
  CancelInEngine(r.seq);
  if (r.stream) {
    std::string& out = scratch;
    out.clear();
    t_event.clear();
    SseFormat::AppendError(t_event, e.ToJson());
    AppendHttpChunk(out, t_event);
    AppendHttpChunk(out, "data: [DONE]\n\n");
    out += "0\r\n\r\n";
    c.SendStream(out);
  } else {
    c.SendError(e);
  }
  c.FinishActive();
}

void Server::Impl::StartStall(ActiveRequest& r) {
  r.stall_until = WallNow() + options.faults.stall_duration;
  r.stall_timer = std::make_unique<asio::steady_timer>(ioc);
  r.stall_timer->expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(r.stall_until)));
  r.stall_timer->async_wait([this, seq = r.seq](boost::system::error_code ec) {
    if (ec) return;
    auto it = active.find(seq);
    if (it == active.end()) return;
    ActiveRequest& ar = *it->second;
    ar.release_sched = ar.stall_until;
    ar.stall_until = 0;
    Emit(ar);
  });
}

void Server::Impl::ArmHeartbeat(ActiveRequest& r) {
  if (!r.heartbeat_timer) r.heartbeat_timer = std::make_unique<asio::steady_timer>(ioc);
  r.heartbeat_timer->expires_after(std::chrono::nanoseconds(options.sse_heartbeat));
  r.heartbeat_timer->async_wait([this, seq = r.seq](boost::system::error_code ec) {
    if (ec) return;  // the request ended (its timer went with it)
    auto it = active.find(seq);
    if (it == active.end()) return;
    ActiveRequest& ar = *it->second;
    if (ar.ended || ar.written > 0 || ar.conn == nullptr) return;  // output flows: no more comments
    std::string out;
    AppendHttpChunk(out, ": keep-alive\n\n");
    ar.conn->SendStream(out);
    ArmHeartbeat(ar);
  });
}

void Server::Impl::Unregister(ActiveRequest& r) {
  if (active.erase(r.seq)) --snap.requests_active;
}

void Server::Impl::CancelInEngine(uint64_t seq) {
  if (advancing) {
    pending_cancels.push_back(seq);
    return;
  }
  Nanos t = Sync();
  engine->Cancel(seq, t);
  ArmEngineTimer();
}

void Server::Impl::Abort(ActiveRequest& r, const char* why) {
  r.ended = true;
  bool was_active = active.count(r.seq) != 0;
  Unregister(r);
  if (!was_active) return;
  ++snap.requests_aborted;
  ++metrics.counters.aborted;
  ++metrics.counters.success_by_reason["abort"];
  if (!options.abort_on_disconnect) {
    ++snap.requests_orphaned;  // the engine generates it to the end for nobody
    return;
  }
  CancelInEngine(r.seq);
}

}  // namespace infereng::serve
