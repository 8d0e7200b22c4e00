// HttpClient: async HTTP/1.1 (keep-alive, TCP or TLS) streaming client for one target.
//
// One HttpClient talks to one base URL ("https://host:8443/v1"). Many concurrent streams
// run on one io_context thread: each stream takes an idle keep-alive connection from the
// pool or opens a new one (the pool grows to the concurrency; no hidden cap unless
// ClientOptions::max_connections is set, in which case excess streams wait in FIFO order).
//
// The hot path only stamps steady_clock times and hands raw facts to a StreamHandler:
// OnSend (first request byte about to be written), OnFirstByte (status line arrived), OnChunk
// for every interpreted SSE event (stamped with the time its bytes were read), and exactly
// one OnEnd with the error class. No logging, no percentile math, no JSON building.
//
// Error classes (metrics::ErrorClass): kConnect (DNS/refused/TLS handshake or verification),
// kTimeout (request timeout or stall timeout: no bytes for stall_timeout), kHttp4xx/kHttp5xx
// (message taken from the body's error.message), kStreamError (error object in a 200
// stream), kProtocol (unparseable HTTP/SSE/JSON), kIncomplete (stream ended without a finish
// reason or [DONE]), kCancelled (Cancel/CancelAll).
//
// TLS verifies certificates (system CAs, or ca_file) and the host name by default;
// `insecure` opts out. Header values (API keys) are never put in errors or logs.
//
// Thread-safety: StartStream/Cancel must be called on the io_context's thread (or before it
// runs); CancelAll is safe from any thread. Handlers are called on the io_context thread and
// must outlive their stream (until OnEnd). Destroy the client only when no stream is active
// or after the io_context has stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "client/dialect.h"
#include "client/sse_parser.h"
#include "client/url.h"
#include "core/clock.h"
#include "core/status.h"
#include "metrics/record.h"

namespace infereng::client {

struct Header {
  std::string name;
  std::string value;  // never logged or put in an error message
};

struct ClientOptions {
  std::string base_url;              // "http://127.0.0.1:8000/v1"
  // Connect to this Unix-domain socket instead of the URL's host:port; the URL still gives
  // the scheme, Host header and path (as curl --unix-socket). For `serve --uds`.
  std::string unix_socket;
  std::vector<Header> headers;       // sent with every request (e.g. Authorization)
  bool insecure = false;             // TLS: skip certificate and host name verification
  std::string ca_file;               // PEM CA bundle to trust; "" = system CAs
  Nanos connect_timeout = 10 * kNanosPerSecond;
  Nanos request_timeout = 600 * kNanosPerSecond;  // whole request; 0 = none
  Nanos stall_timeout = 120 * kNanosPerSecond;    // no bytes received for this long; 0 = none
  std::size_t max_connections = 0;   // 0 = unlimited: one connection per concurrent stream
  std::size_t expected_concurrency = 0;  // Create() raises RLIMIT_NOFILE for this many sockets
  std::size_t max_error_body_bytes = 64 << 10;  // body kept from a 4xx/5xx response
  std::size_t max_body_bytes = 64 << 20;        // body kept for non-SSE requests (Fetch)
  SseParserOptions sse;
};

struct StreamRequest {
  std::string method = "POST";
  std::string path;                  // appended to the URL's prefix: "/chat/completions"
  std::string body;                  // request body (JSON), sent as application/json
  Dialect dialect = Dialect::kOpenAiChat;
  std::vector<Header> headers;       // extra headers for this request
  Nanos request_timeout = -1;        // -1: ClientOptions::request_timeout
  bool sse = true;                   // false: collect the raw body into StreamEnd::body
};

// How a stream ended. Passed to OnEnd exactly once.
struct StreamEnd {
  Nanos t_end = -1;                  // [DONE] / end of message / the moment the error was seen
  int http_status = 0;               // 0 when no status line arrived
  metrics::ErrorClass error = metrics::ErrorClass::kNone;
  std::string error_message;         // "" when ok; never contains header values
  std::string finish_reason;         // last finish reason seen ("" if none)
  bool saw_done = false;             // `[DONE]` arrived
  Usage usage;                       // latest usage the server reported
  ServerTimings timings;             // latest valid `timings` (malformed: any seen was bad)
  std::string body;                  // non-SSE requests: the body (bounded)
  std::string retry_after;           // the response's Retry-After header ("" when none)
  bool reused_connection = false;    // the request went over a kept-alive connection
  // A kept-alive connection the server had closed failed before any response byte arrived
  // and the request was re-sent on a fresh one (at most once; never after a response byte).
  int retries = 0;
  std::string retry_cause;           // why the first attempt failed ("" when not retried)
  Nanos retry_lost = 0;              // first attempt's send -> the re-send (ns)
};

class StreamHandler {
 public:
  virtual ~StreamHandler() = default;
  virtual void OnSend(Nanos t_send) {}
  virtual void OnFirstByte(Nanos t, int http_status) {}
  // Every interpreted SSE event, output-carrying or not (check info.has_output()).
  virtual void OnChunk(Nanos t, const ChunkInfo& info) {}
  virtual void OnEnd(const StreamEnd& end) = 0;
};

// A ready-made handler that fills the raw facts of a metrics::RequestRecord (t_send,
// t_first_byte, chunks with tokens, t_end, usage, token_source, http_status, error,
// error_message, finish_reason) and then calls `on_done`. t_sched/id/tenant are the
// caller's. Keep it alive until on_done runs; on_done may destroy it.
class RecordingHandler final : public StreamHandler {
 public:
  RecordingHandler(metrics::RequestRecord* record, std::function<void(RecordingHandler&)> on_done);
  void OnSend(Nanos t_send) override;
  void OnFirstByte(Nanos t, int http_status) override;
  void OnChunk(Nanos t, const ChunkInfo& info) override;
  void OnEnd(const StreamEnd& end) override;

  metrics::RequestRecord* record() { return record_; }
  const std::string& output_text() const { return text_; }  // when keep_text(true)
  void keep_text(bool keep) { keep_text_ = keep; }

 private:
  metrics::RequestRecord* record_;
  std::function<void(RecordingHandler&)> on_done_;
  StreamTokenCounter counter_;
  bool keep_text_ = false;
  std::string text_;
};

using StreamId = uint64_t;

// What HttpClient::Preconnect did: connections opened into the idle pool before a run.
struct PreconnectResult {
  std::size_t requested = 0;
  std::size_t opened = 0;
  std::size_t failed = 0;
  Nanos elapsed = 0;                 // first connect started -> last one done
  std::vector<Nanos> connect_times;  // each successful open (TCP + TLS handshake), ns
  std::string first_error;           // "" when none failed
};

class HttpClient {
 public:
  // Parses the URL, resolves the host once (blocking; before the run starts), sets up TLS,
  // and raises the file-descriptor limit for expected_concurrency (or fails clearly).
  static Result<std::unique_ptr<HttpClient>> Create(boost::asio::io_context& io, ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Starts a request; the handler gets its facts on the io_context thread.
  StreamId StartStream(StreamRequest request, StreamHandler* handler);
  // Ends a stream with kCancelled (no-op if already ended).
  void Cancel(StreamId id);
  // Cancels every active stream and closes idle connections. Thread-safe.
  void CancelAll();
  // Fills the idle pool up to `n` connections: opens the missing ones (TCP connect + TLS
  // handshake, bounded together by the connect timeout) all at once, so a run's first
  // requests do not pay for connection setup inside the measured window; `done` gets the
  // outcome on the io thread. Bounded by max_connections when set. Call on the io thread
  // (as StartStream) and keep the client alive until `done` has run.
  void Preconnect(std::size_t n, std::function<void(const PreconnectResult&)> done);

  std::size_t active_streams() const;
  std::size_t open_connections() const;   // busy + idle
  std::size_t connections_opened() const; // total ever opened (keep-alive reuse check)
  // Idle kept-alive connections found closed by the server (or with stray bytes) when a
  // request was about to reuse them, and dropped instead of written to.
  std::size_t stale_connections_dropped() const;
  const Url& url() const;

  struct Impl;  // http_client.cc

 private:
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A blocking request for small control-plane calls (/health, /v1/models, /version, /props,
// /info, /get_server_info, /tokenize, /metrics). Any HTTP status is a successful Result
// (the caller decides what a 503 means); connect errors → Unavailable, timeouts →
// DeadlineExceeded, bad URL → InvalidArgument.
struct FetchResponse {
  int status = 0;
  std::string body;
  Nanos latency = 0;  // send → end of body
};
Result<FetchResponse> Fetch(const ClientOptions& options, std::string_view method,
                            std::string_view path, std::string_view body = {},
                            Nanos timeout = 30 * kNanosPerSecond);

// Raises the soft RLIMIT_NOFILE to at least `sockets` + headroom, or returns
// ResourceExhausted saying the hard limit and how to raise it (ulimit -n).
Status EnsureFileDescriptors(std::size_t sockets);

}  // namespace infereng::client
