// serve::Server — the OpenAI-compatible HTTP/SSE server driven by an engine (the twin)
// against the wall clock: each token is written at the moment the engine emits it.
//
// In-process use (infereng run, tests):
//   serve::ServerOptions opt{.port = 0, .speedup = 10};
//   serve::Server server(opt, std::move(engine));   // engine: serve::MakeTwinEngine(...)
//   INFERENG_ASSIGN_OR_RETURN(uint16_t port, server.Start());   // bound port
//   ... talk HTTP to 127.0.0.1:port ...
//   server.Stop();                                   // also done by the destructor
//
// Start() binds and returns at once; the server runs on its own thread (one io_context
// thread owns the sockets AND the engine, so no locks on the emission path). Stop() closes
// the listener and every connection, joins the thread and flushes --trace-emissions.
// Start/Stop/Snapshot are safe to call from any one controlling thread.
//
// Endpoints: POST /v1/chat/completions, POST /v1/completions, POST /tokenize,
// GET /v1/models, /health, /version, /metrics. Protocol details: docs/serve.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "serve/engine_port.h"
#include "serve/eval_answers.h"
#include "serve/faults.h"
#include "serve/tenant_cache.h"

namespace infereng::serve {

inline constexpr std::size_t kDefaultMaxBodyBytes = 1 << 20;
inline constexpr std::size_t kVisionMaxBodyBytes = 64 << 20;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;                 // 0: the OS picks a free port (Start returns it)
  // Listen on this Unix-domain socket path instead of host:port (as uvicorn's and vLLM's
  // --uds): same-host clients skip the TCP stack, ~4x less kernel time per chunk here.
  // A stale socket file is replaced; Start returns port 0.
  std::string unix_socket{};
  std::string model_name = "infereng-twin";
  double speedup = 1.0;                 // engine time runs this many times faster than wall
  int64_t max_model_len = 0;            // 0: take EngineStats::max_model_len (or 131072)
  // Admission control: requests waiting in the engine (not yet running) above which a
  // new request is refused with `overload_status` (429 or 503). 0 = unbounded.
  int64_t max_waiting = 1024;
  int overload_status = 429;
  Nanos request_timeout = 0;            // wall time from arrival to last token; 0 = none
  // Larger bodies get 413. Left at the default, an engine that accepts images (a card with
  // model.vision) or audio (model.audio) gets kVisionMaxBodyBytes instead: a 1080p PNG is over
  // 1 MiB in base64, OpenAI accepts images up to 20 MB each and audio files up to 25 MB (vLLM
  // sets no limit).
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  // A connection with no request in progress is closed after this long without a complete
  // request (keep-alive idle, or a slow client trickling a request).
  Nanos idle_timeout = 60 * kNanosPerSecond;
  std::size_t max_write_buffer = 4 << 20;  // a reader this far behind is dropped
  std::size_t max_connections = 20000;           // above this, new connections are closed
  FaultSpec faults{};
  // Production behaviours `infereng probe` tests, each both ways (docs/serve.md):
  // Refusals (429/503) carry `Retry-After: ceil(seconds)` when > 0; 0: no header.
  Nanos retry_after = 0;
  // A client that disconnects mid-generation frees its slot (vLLM); false: the engine keeps
  // generating for nobody, still counted as running in /metrics.
  bool abort_on_disconnect = true;
  // During cold start (faults.cold_start) /health answers 200 though requests still get 503.
  bool ready_lies = false;
  // Stream bytes (headers included) are held and flushed every this long, in bursts, as a
  // buffering proxy in front of the engine would; 0: written as generated.
  Nanos stream_buffer = 0;
  // An SSE comment (": keep-alive") on a stream every this long while it waits for its
  // first token (queue + prefill), as servers behind idle-timeout proxies do; 0: none.
  Nanos sse_heartbeat = 0;
  // Prefix cache across tenants (API key, or the `cache_salt` body field): shared, or
  // salted per tenant so one tenant's cached prompt never speeds up another's.
  CacheIsolation cache_isolation = CacheIsolation::kShared;
  uint64_t seed = 42;                   // fault draws and output text
  // Without ignore_eos a request stops "naturally" after a deterministic pseudo-random
  // length with this mean (finish_reason "stop"); 0: always run to max_tokens ("length").
  int32_t eos_mean_tokens = 0;
  int32_t default_max_tokens = 16;      // /v1/completions default, as OpenAI and vLLM
  // When the server is behind (several tokens of a stream due by the time it writes),
  // send them as one chunk, as vLLM's output loop merges outputs its consumer has not yet
  // taken. Off: exactly one chunk per token (per stream interval) however late.
  bool merge_late_tokens = true;
  // Eval-set prompts answered right with probability quality_accuracy, else wrongly
  // (eval_answers.h); null: every prompt gets filler text.
  std::shared_ptr<const EvalAnswers> eval_answers{};
  double quality_accuracy = 1.0;
  std::string trace_emissions_path{};   // "" = off; CSV, one line per written chunk
  std::size_t trace_capacity = 1 << 20; // records kept in memory before a background flush
};

// Counters for tests and the CLI's exit summary (read at any time, approximately current).
struct ServerSnapshot {
  int64_t connections_open = 0;
  int64_t requests_active = 0;      // admitted, not yet finished / aborted
  int64_t requests_total = 0;
  int64_t requests_rejected = 0;    // 429/503 from admission control
  int64_t requests_aborted = 0;     // client disconnects and timeouts
  int64_t requests_orphaned = 0;    // disconnected, left generating (abort_on_disconnect off)
  int64_t tokens_emitted = 0;
  // Emission lateness: actual socket write time minus the scheduled (engine) time.
  int64_t lateness_samples = 0;
  Nanos lateness_p50 = 0, lateness_p99 = 0, lateness_max = 0;
};

class Server {
 public:
  Server(ServerOptions options, std::unique_ptr<EnginePort> engine);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, starts the server thread, returns the bound port. Errors: bind failures.
  Result<uint16_t> Start();
  // Idempotent. Aborts in-flight requests, closes sockets, joins, flushes the trace.
  void Stop();
  // Blocks until Stop() is called from another thread (or a signal handler path).
  void Wait();
  uint16_t port() const;
  ServerSnapshot Snapshot() const;
  // Starts the lateness statistics in Snapshot() afresh (benches measure steady state after
  // a ramp); the Prometheus histogram is cumulative and unaffected.
  void ResetLateness();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace infereng::serve
