// The per-request state machine of HttpClient: connect (TCP, TLS handshake with
// verification), send, read and parse the response incrementally, classify the outcome,
// return the connection to the keep-alive pool. See stream_state.h for ownership.
//
// Timeouts use one steady_timer per stream that is re-armed only when it fires (at
// min(request deadline, last byte + stall timeout)), so reads never pay for timer resets.
#include <algorithm>
#include <cstdio>
#include <limits>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "client/http_error.h"
#include "client/stream_state.h"

namespace infereng::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using metrics::ErrorClass;

namespace {

Nanos Now() { return SteadyNow(); }

// What to do about a failed TLS handshake, by OpenSSL's reason code: a plain-HTTP server
// answering the ClientHello ("wrong version number") is not a certificate problem.
std::string TlsHint(const beast::error_code& ec, bool insecure) {
  if (ec.category() != asio::error::get_ssl_category()) return {};
  const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
  if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG || reason == SSL_R_HTTP_REQUEST) {
    return " (the server does not speak TLS on this port: try http:// instead of https://)";
  }
  if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && !insecure) {
    return " (pass --ca-file PEM to trust its CA, or --insecure to skip certificate verification)";
  }
  return {};
}

std::string Seconds(Nanos ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", NanosToSeconds(ns));
  return buf;
}

}  // namespace

// ---- lifecycle -------------------------------------------------------------------------

void HttpClient::Impl::Begin(const std::shared_ptr<StreamState>& s) {
  if (std::unique_ptr<Connection> c = TakeLiveIdleConnection()) {
    s->conn = std::move(c);
    s->reused = true;
    Send(s);
    return;
  }
  Connect(s);
}

// The most recently used idle connection that still looks alive; dead ones are closed and
// counted on the way (a request written to a closed socket would need a retry).
std::unique_ptr<Connection> HttpClient::Impl::TakeLiveIdleConnection() {
  while (!idle.empty()) {
    std::unique_ptr<Connection> c = std::move(idle.back());
    idle.pop_back();
    if (c->IdleLooksAlive()) return c;
    c->Close();
    --open;
    ++stale_dropped;
  }
  return nullptr;
}

void HttpClient::Impl::Connect(const std::shared_ptr<StreamState>& s) {
  s->conn = std::make_unique<Connection>(io, tls ? &*tls : nullptr);
  s->reused = false;
  s->connecting = true;
  s->connect_deadline = Now() + options.connect_timeout;
  ++open;
  ++opened_total;
  ArmTimer(s);
  Open(*s->conn, [s] { return s->finished; }, [this, s](ErrorClass error, std::string message) {
    if (error != ErrorClass::kNone) return Fail(s, error, std::move(message));
    s->connecting = false;
    Send(s);
  });
}

// TCP (or Unix-socket) connect, then the TLS handshake with SNI and host name
// verification when the URL is https. The caller owns timeouts (closing the socket ends a
// pending step with an error). Once `abandoned()` is true (the owner gave up: timed out,
// cancelled; `c` may be gone) no step touches `c` and `done` is not called.
void HttpClient::Impl::Open(Connection& c, std::function<bool()> abandoned,
                            std::function<void(ErrorClass, std::string)> done) {
  asio::async_connect(c.socket(), endpoints, [this, &c, abandoned, done = std::move(done)](beast::error_code ec, const auto&) mutable {
    if (abandoned()) return;
    if (ec) return done(ErrorClass::kConnect, "connect to " + TargetName() + " failed: " + ec.message());
    if (options.unix_socket.empty()) c.socket().set_option(tcp::no_delay(true), ec);
    c.stamped().EnableStamps(KernelRxStampsEnabled());
    if (!c.tls()) return done(ErrorClass::kNone, "");
    auto& stream = c.tls_stream();
    if (!SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str())) {
      return done(ErrorClass::kConnect, "TLS: cannot set SNI host name");
    }
    if (!options.insecure) stream.set_verify_callback(ssl::host_name_verification(url.host));
    stream.async_handshake(ssl::stream_base::client, [this, abandoned, done = std::move(done)](beast::error_code hec) {
      if (abandoned()) return;
      if (hec) {
        return done(ErrorClass::kConnect, "TLS handshake with " + url.ToString() + " failed: " + hec.message() +
                                              TlsHint(hec, options.insecure));
      }
      done(ErrorClass::kNone, "");
    });
  });
}

void HttpClient::Impl::Send(const std::shared_ptr<StreamState>& s) {
  s->any_bytes = false;
  s->header_handled = false;
  s->buffer.clear();
  s->parser.emplace();
  s->parser->header_limit(64 << 10);
  s->parser->eager(true);  // one put parses all a read brought (OnRead)
  // SSE streams are unbounded; we bound events ourselves. (Not boost::none: Beast 1.74 then
  // rejects every Content-Length body as "body limit exceeded".)
  s->parser->body_limit(std::numeric_limits<std::uint64_t>::max());
  if (s->request.method == "HEAD") s->parser->skip(true);
  if (s->request.sse) s->sse.emplace(options.sse);
  const Nanos t_send = Now();
  if (s->t_first_send < 0) s->t_first_send = t_send;
  s->last_activity = t_send;
  ArmTimer(s);  // from here on: request deadline and stall timeout
  s->handler->OnSend(t_send);
  s->conn->Visit([&](auto& stream) {
    http::async_write(stream, s->http_request, [this, s](beast::error_code ec, std::size_t) {
      if (s->finished) return;
      if (ec) {
        if (RetryOnFreshConnection(s, "writing to a kept-alive connection failed: " + ec.message())) return;
        return Fail(s, ErrorClass::kConnect, "sending the request failed: " + ec.message());
      }
      ReadSome(s);
    });
  });
}

// One socket read into the stream's buffer; OnRead parses what it brought. Not Beast's
// http::async_read_some: that composed operation (an async_compose frame with executor work
// tracking per read) returns after each parsed element, so every SSE event took two rounds
// through it, the second via a posted completion — about a third of the client's
// instructions per token (issue 17 profile). Here one read is one parse of all it brought.
void HttpClient::Impl::ReadSome(const std::shared_ptr<StreamState>& s) {
  const auto space = s->buffer.prepare(kReadBytes);
  s->conn->Visit([&](auto& stream) {
    stream.async_read_some(space, [this, s](beast::error_code ec, std::size_t n) { OnRead(s, ec, n); });
  });
}

// The event time of what this read delivered: the kernel's receive stamp of the socket
// read that brought the bytes (stamped_socket.h), clamped to the user-space stamp `now`;
// `now` itself when that read had none (the fallback).
Nanos HttpClient::Impl::EventTime(const std::shared_ptr<StreamState>& s, Nanos now) {
  const Nanos kernel = s->conn ? s->conn->stamped().last_kernel_stamp() : -1;
  return kernel < 0 ? now : std::min(kernel, now);
}

// Per read that delivered body bytes: which stamp it had, and (kernel stamp only) the
// client's own delay user - kernel, once per SSE event it carried.
void HttpClient::Impl::NoteStamp(Nanos now, Nanos t, bool kernel, std::uint64_t events) {
  RxStampStats& st = ThreadRxStampStats();
  if (!kernel) {
    ++st.reads_user;
    return;
  }
  ++st.reads_kernel;
  if (events > 0) st.delay_ms.AddN(NanosToMillis(now - t), events);
}

void HttpClient::Impl::OnRead(const std::shared_ptr<StreamState>& s, beast::error_code ec, std::size_t n) {
  if (s->finished) return;
  const Nanos now = Now();  // user space: when the client looked at the bytes
  s->last_activity = now;
  // A read that brought bytes dates them (its kernel stamp). One that brought none (the end
  // of stream) dates whatever it still parses or flushes — bytes that came with the last
  // read that had any — by that read, not by when the client got round to the close.
  const bool fresh = n > 0 || s->t_last_bytes < 0;
  const Nanos t = fresh ? EventTime(s, now) : s->t_last_bytes;
  const bool kernel = fresh ? s->conn && s->conn->stamped().last_kernel_stamp() >= 0 : s->last_bytes_kernel;
  if (n > 0) {
    s->t_last_bytes = t;
    s->last_bytes_kernel = kernel;
  }
  s->buffer.commit(n);
  auto& parser = *s->parser;
  if (n > 0 || s->buffer.size() > 0 || parser.got_some()) {
    s->any_bytes = true;
    if (s->t_first_byte < 0) s->t_first_byte = t;
  }
  if (ec == asio::error::eof) {  // as Beast's read: a started message ends here or is partial
    if (parser.got_some()) {
      ec = {};
      parser.put_eof(ec);  // ok: the message is complete (close-delimited); else partial_message
    } else {
      ec = http::error::end_of_stream;
    }
  }
  // Parse everything the read brought (the parser is eager); body bytes go through
  // body_buf to Consume, kReadChunk at a time.
  bool body = false;
  const std::uint64_t events_before = s->events_seen;
  while (!ec && s->buffer.size() > 0 && !parser.is_done()) {
    auto& out = parser.get().body();
    out.data = s->body_buf.data();
    out.size = s->body_buf.size();
    beast::error_code pec;
    const std::size_t used = parser.put(s->buffer.data(), pec);
    s->buffer.consume(used);
    if (!s->header_handled && parser.is_header_done()) {
      HandleHeader(s);
      if (s->finished) return;  // the handler cancelled the stream
    }
    if (const std::size_t got = s->body_buf.size() - out.size; got > 0) {
      body = true;
      if (!Consume(s, std::string_view(s->body_buf.data(), got), t)) return;
    }
    if (pec == http::error::need_more) break;  // the rest is an incomplete element: read on
    if (pec && pec != http::error::need_buffer) ec = pec;  // need_buffer: body_buf was full
    if (used == 0 && pec != http::error::need_buffer) break;
  }
  if (body) NoteStamp(now, t, kernel, s->events_seen - events_before);
  if (ec) {
    const bool closed = ec == http::error::end_of_stream || ec == http::error::partial_message ||
                        ec == asio::error::eof || ec == asio::error::connection_reset ||
                        ec == ssl::error::stream_truncated;
    if (!s->any_bytes &&
        RetryOnFreshConnection(s, "kept-alive connection closed before any response byte: " + ec.message())) {
      return;
    }
    if (!s->header_handled) {
      if (closed) return Fail(s, ErrorClass::kIncomplete, "server closed the connection before responding");
      return Fail(s, closed ? ErrorClass::kIncomplete : ErrorClass::kProtocol,
                  "reading the response failed: " + ec.message());
    }
    if (closed) return Complete(s, t);  // ended without a proper end of message
    return Fail(s, ErrorClass::kProtocol, "reading the response body failed: " + ec.message());
  }
  if (parser.is_done()) return Complete(s, t);
  ReadSome(s);
}

void HttpClient::Impl::HandleHeader(const std::shared_ptr<StreamState>& s) {
  s->header_handled = true;
  const auto& res = s->parser->get();
  s->end.http_status = static_cast<int>(res.result_int());
  if (auto it = res.find(http::field::content_type); it != res.end()) s->content_type = std::string(it->value());
  if (auto it = res.find(http::field::retry_after); it != res.end()) s->end.retry_after = std::string(it->value().substr(0, 64));
  if (s->t_first_byte < 0) s->t_first_byte = Now();
  s->handler->OnFirstByte(s->t_first_byte, s->end.http_status);
}

// Returns false when the stream was failed (the caller must stop).
bool HttpClient::Impl::Consume(const std::shared_ptr<StreamState>& s, std::string_view bytes, Nanos now) {
  const int status = s->end.http_status;
  if (status >= 300 || status < 200) {
    std::size_t room = options.max_error_body_bytes - std::min(options.max_error_body_bytes, s->error_body.size());
    s->error_body.append(bytes.substr(0, room));
    return true;
  }
  if (!s->request.sse) {
    if (s->end.body.size() + bytes.size() > options.max_body_bytes) {
      Fail(s, ErrorClass::kProtocol, "response body larger than " + std::to_string(options.max_body_bytes) + " bytes");
      return false;
    }
    s->end.body.append(bytes);
    return true;
  }
  // Each event is handled as the parser completes it, as views into `bytes` (no copy).
  Status st = s->sse->Feed(bytes, [&](const SseEventView& e) { return HandleEvent(s, e, now); });
  if (s->finished) return false;  // failed or cancelled by an event (completed ones counted)
  if (!st.ok()) {
    Fail(s, ErrorClass::kProtocol, st.message());
    return false;
  }
  return true;
}

// Interprets one event and reports it. Returns false when the stream was failed or the
// handler cancelled it (the parser stops there).
bool HttpClient::Impl::HandleEvent(const std::shared_ptr<StreamState>& s, const SseEventView& event, Nanos now) {
  StreamEnd& end = s->end;
  Result<ChunkInfo> info = InterpretEvent(s->request.dialect, event);
  if (!info.ok()) {
    Fail(s, ErrorClass::kProtocol, info.status().message());
    return false;
  }
  if (info->done && s->t_done < 0) {
    end.saw_done = true;
    s->t_done = now;
  }
  if (!info->finish_reason.empty()) end.finish_reason = info->finish_reason;
  const Usage& u = info->usage;
  if (u.prompt_tokens >= 0) end.usage.prompt_tokens = u.prompt_tokens;
  if (u.completion_tokens >= 0) end.usage.completion_tokens = u.completion_tokens;
  if (u.cached_tokens >= 0) end.usage.cached_tokens = u.cached_tokens;
  if (u.reasoning_tokens >= 0) end.usage.reasoning_tokens = u.reasoning_tokens;
  if (info->timings.malformed) {
    end.timings.malformed = true;
  } else if (info->timings.present()) {
    const bool malformed = end.timings.malformed;
    end.timings = info->timings;
    end.timings.malformed = malformed;
  }
  if (info->error && end.error == ErrorClass::kNone) {
    end.error = ErrorClass::kStreamError;
    end.error_message = "error event in the stream: " + info->error_message;
  }
  s->events_seen++;
  s->handler->OnChunk(now, *info);
  return !s->finished;  // the handler may have cancelled the stream
}

// The response message ended (or the server closed the connection after the headers).
void HttpClient::Impl::Complete(const std::shared_ptr<StreamState>& s, Nanos now) {
  StreamEnd& end = s->end;
  end.t_end = s->t_done >= 0 ? s->t_done : now;
  const bool clean = s->parser->is_done();
  const bool keep = clean && s->parser->keep_alive() && s->buffer.size() == 0;
  const int status = end.http_status;
  if (status < 200 || status >= 300) {
    end.error = status >= 500 ? ErrorClass::kHttp5xx : status >= 400 ? ErrorClass::kHttp4xx : ErrorClass::kProtocol;
    end.error_message = HttpErrorMessage(status, std::string(s->parser->get().reason()), s->error_body);
    if (!s->request.sse) end.body = std::move(s->error_body);
    return Finish(s, keep);
  }
  if (s->request.sse) {
    Status st = s->sse->Finish([&](const SseEventView& e) { return HandleEvent(s, e, now); });
    if (s->finished) return;
    if (!st.ok()) return Fail(s, ErrorClass::kProtocol, st.message());
    if (s->events_seen == 0 && !s->content_type.empty() && s->content_type.find("event-stream") == std::string::npos) {
      // A 200 that is not a stream: JSON (stream not asked for), or an HTML page from a proxy
      // or a web UI at that path. Say what came instead of "incomplete stream".
      end.error = ErrorClass::kProtocol;
      end.error_message = "expected an SSE stream (text/event-stream) but got Content-Type " + s->content_type.substr(0, 100);
      if (s->content_type.find("json") != std::string::npos) {
        // bench asks for a stream on a streamed card: the engine answers this route whole
        // (whisper.cpp's server ignores stream=true on transcriptions).
        end.error_message += " (the server answered whole although the request asked for a stream: if this engine "
                             "does not stream this endpoint, set product.streaming: false in the card)";
      } else if (s->content_type.find("html") != std::string::npos) {
        end.error_message += " (a web page: is --target the API's base URL?)";
      }
    } else if (end.error == ErrorClass::kNone && !end.saw_done && end.finish_reason.empty()) {
      end.error = ErrorClass::kIncomplete;
      end.error_message = clean ? "stream ended without a finish reason or [DONE]"
                                : "server closed the connection mid-stream (no finish reason or [DONE])";
    }
  } else if (!clean) {
    end.error = ErrorClass::kIncomplete;
    end.error_message = "server closed the connection before the body was complete";
  }
  Finish(s, keep);
}

bool HttpClient::Impl::RetryOnFreshConnection(const std::shared_ptr<StreamState>& s, std::string cause) {
  // A kept-alive connection the server closed between our check and the write: resend once
  // on a new connection, and say so on the request (StreamEnd::retries). Never after a
  // response byte (the server may have acted on the request), never on a fresh connection.
  if (!s->reused || s->retried || s->any_bytes) return false;
  s->retried = true;
  s->end.retries = 1;
  s->end.retry_cause = std::move(cause);
  s->end.retry_lost = Now() - s->t_first_send;
  DropConnection(s);
  Connect(s);
  return true;
}

void HttpClient::Impl::Fail(const std::shared_ptr<StreamState>& s, ErrorClass error, std::string message) {
  if (s->finished) return;
  if (s->end.error == ErrorClass::kNone || error == ErrorClass::kCancelled || error == ErrorClass::kTimeout) {
    s->end.error = error;
    s->end.error_message = std::move(message);
  }
  if (s->end.t_end < 0) s->end.t_end = Now();
  Finish(s, /*keep_connection=*/false);
}

void HttpClient::Impl::Finish(const std::shared_ptr<StreamState>& s, bool keep_connection) {
  if (s->finished) return;
  s->finished = true;
  s->timer.cancel();
  s->end.reused_connection = s->reused;
  if (s->conn) {
    if (keep_connection) {
      ++s->conn->requests_served;
      idle.push_back(std::move(s->conn));
    } else {
      DropConnection(s);
    }
  }
  active.erase(s->id);
  StreamHandler* handler = s->handler;
  s->handler = nullptr;
  handler->OnEnd(s->end);
  StartWaiting();
}

void HttpClient::Impl::DropConnection(const std::shared_ptr<StreamState>& s) {
  if (!s->conn) return;
  s->conn->Close();  // the Connection object stays with the state until its handlers drain
  --open;
}

void HttpClient::Impl::StartWaiting() {
  while (!waiting.empty() && (!idle.empty() || open < options.max_connections)) {
    std::shared_ptr<StreamState> next = std::move(waiting.front());
    waiting.pop_front();
    if (!next->finished) Begin(next);
  }
}

void HttpClient::Impl::ArmTimer(const std::shared_ptr<StreamState>& s) {
  Nanos next = s->deadline;
  Nanos guard = s->connecting ? s->connect_deadline
                : options.stall_timeout > 0 ? s->last_activity + options.stall_timeout : 0;
  if (guard > 0 && (next == 0 || guard < next)) next = guard;
  if (s->connecting && next == 0) next = Now() + options.connect_timeout;
  if (next == 0) return;  // no timeouts configured
  s->timer.expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(next)));
  s->timer.async_wait([this, s](beast::error_code ec) {
    if (ec || s->finished) return;
    const Nanos now = Now();
    if (s->deadline > 0 && now >= s->deadline) {
      return Fail(s, ErrorClass::kTimeout, "request timeout of " + Seconds(s->request.request_timeout) + " exceeded");
    }
    if (s->connecting && now >= s->connect_deadline) {
      return Fail(s, ErrorClass::kConnect, "connect to " + TargetName() + " timed out after " +
                                               Seconds(options.connect_timeout));
    }
    if (!s->connecting && options.stall_timeout > 0 && now >= s->last_activity + options.stall_timeout) {
      return Fail(s, ErrorClass::kTimeout,
                  "stall timeout: no bytes from the server for " + Seconds(options.stall_timeout));
    }
    ArmTimer(s);
  });
}

}  // namespace infereng::client
