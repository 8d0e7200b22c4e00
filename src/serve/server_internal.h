// Internals of serve::Server shared by server.cc (lifecycle, engine drive), server_connection.cc
// (HTTP I/O), handlers.cc (routing, endpoints) and emitter.cc (token emission, faults).
// Not part of the API.
//
// Threading: everything here runs on the one server thread (io_context::run); no locks.
// Ownership: a ServerConnection is held by shared_ptr through its pending handlers; the Impl
// keeps raw pointers to open connections (for Stop) and to active requests by engine id
// (for the engine sink). A ServerConnection owns at most one ActiveRequest; destroying either
// cancels the request in the engine and unregisters it.
#pragma once

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "serve/emission_trace.h"
#include "serve/faults.h"
#include "serve/prom_metrics.h"
#include "serve/request_parser.h"
#include "serve/server.h"
#include "serve/sse_format.h"
#include "serve/transcription_request.h"
#include "serve/text_model.h"

namespace infereng::serve {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using unix_stream = asio::local::stream_protocol;
// A client connection: TCP, or a Unix-domain stream socket with --uds.
using StreamSocket = asio::generic::stream_protocol::socket;

Nanos WallNow();  // steady_clock nanoseconds

class ServerConnection;

struct ActiveRequest {
  ActiveRequest(bool chat, std::string_view id, int64_t created, std::string_view model, std::string_view object = {})
      : format(chat, id, created, model, object) {}
  uint64_t seq = 0;               // engine id
  ServerConnection* conn = nullptr;
  bool chat = true, stream = false, include_usage = false, continuous = false;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;      // planned
  int32_t reasoning_tokens = 0;   // the first this many of them are reasoning (chat only)
  int32_t cached = 0;
  StopScan stop;                  // planned stop (tokens == output_tokens)
  std::string stop_string;        // the matched stop string (stop_reason), if any
  bool natural_stop = false;      // ends by "EOS": finish_reason stop, stop_reason null
  uint64_t text_seed = 0;
  // An eval-set prompt's answer as output tokens (eval_answers.h); empty: filler text.
  std::vector<std::string> answer_tokens;
  // POST /v1/embeddings: its inputs; the engine runs them as one prefill-only request
  // (output_tokens 1) and SendNonStream answers with the vectors (serve/embeddings.h).
  std::optional<EmbeddingsParams> embeddings;
  // POST /v1/rerank: its query and documents; run as embeddings are (one prefill-only
  // request of the pairs' tokens) and answered with the scores (serve/rerank.h).
  std::optional<RerankParams> rerank;
  // POST /v1/audio/transcriptions: the clip and how to answer; streamed as chat's deltas
  // under "transcription.chunk" (no role chunk), answered whole as {text, usage}
  // (serve/transcription.h).
  std::optional<TranscriptionParams> transcription;
  int32_t audio_tokens = 0;
  SseFormat format;
  FaultPlan faults;

  int32_t available = 0;          // tokens the engine emitted so far
  int32_t written = 0;            // tokens written to the client so far
  Nanos last_sched = 0;           // wall time the latest available token was due
  Nanos oldest_sched = 0;         // wall time the oldest available, unwritten token was due
  bool emit_queued = false;       // in Impl::emit_queue (tokens arrived during AdvanceTo)
  bool engine_done = false;       // OnFinished(kLength) seen
  bool first_seen = false;
  bool ended = false;             // response complete (or aborted); no more output
  Nanos t_arrival = 0;            // wall
  Nanos deadline = 0;             // wall; 0 = none
  Nanos last_token_engine_t = 0;
  // Engine-time phase stamps for the response's `timings` (sse_format.h): -1 until seen.
  Nanos t_submit_e = -1;          // arrival at the engine (Submit)
  Nanos t_sched_e = -1;           // first scheduled (OnScheduled): prefill starts
  Nanos t_first_e = -1;           // first token (OnTokens)
  Nanos stall_until = 0;          // wall; > now while an injected stall holds output
  Nanos release_sched = 0;        // wall time a stall released output (its chunks' schedule)
  std::unique_ptr<asio::steady_timer> stall_timer;
  std::unique_ptr<asio::steady_timer> heartbeat_timer;  // --sse-heartbeat, until the first token
};

class ServerConnection : public std::enable_shared_from_this<ServerConnection> {
 public:
  ServerConnection(Server::Impl& srv, StreamSocket sock);
  ~ServerConnection();
  void Start();
  // Queues bytes for the socket: written at once when possible, else when writable.
  void Send(std::string_view bytes);
  // Writes a complete non-streaming response.
  void SendResponse(int status, std::string_view content_type, std::string_view body,
                    std::string_view extra_headers = {});
  void SendError(const ApiError& e) { SendResponse(e.http_status, "application/json", e.ToJson()); }
  // Bytes of a streaming response: as Send, or, with ServerOptions::stream_buffer, held and
  // flushed in bursts every stream_buffer (and at the end of the response), as a
  // buffering proxy would.
  void SendStream(std::string_view bytes);
  // The active request's response is complete: go on with the next request.
  void FinishActive();
  // Hard close now (drops queued bytes). Aborts the active request.
  void Close();
  void CloseAfterFlush();
  // Close() from a fresh handler: safe inside the engine sink.
  void PostClose();

  bool closed() const { return closed_; }
  bool keep_alive = true;
  bool head_only = false;    // a HEAD request: headers without the body
  std::unique_ptr<ActiveRequest> active;
  std::string x_request_id;  // of the request being handled
  // Keeps the connection alive while a request is active even when no I/O is pending
  // (e.g. a pipelined request was read and we are not reading further). Cleared by
  // FinishActive() and Close().
  std::shared_ptr<ServerConnection> keep_alive_ref;

 private:
  void ReadHeader();
  void OnHeader(boost::system::error_code ec);
  void OnBody(boost::system::error_code ec);
  void OnReadError(boost::system::error_code ec);
  void Dispatch();
  void WaitWritable();
  void ArmIdleTimer();
  void FlushHeld();

  std::string held_;                         // stream bytes held by stream_buffer
  std::unique_ptr<asio::steady_timer> flush_timer_;

  Server::Impl& srv_;
  StreamSocket sock_;
  boost::beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::request<http::string_body>> pending_;  // a pipelined request
  asio::steady_timer idle_timer_;
  std::string out_;
  bool waiting_writable_ = false;
  bool close_after_flush_ = false;
  bool closed_ = false;
  bool reading_ = false;
};

struct Server::Impl : EngineSink {
  Impl(ServerOptions o, std::unique_ptr<EnginePort> e);

  // ---- lifecycle / engine drive (server.cc)
  Nanos EngineNow(Nanos wall) const {
    return static_cast<Nanos>(static_cast<double>(wall - t0) * options.speedup);
  }
  Nanos WallOf(Nanos engine_t) const { return t0 + static_cast<Nanos>(static_cast<double>(engine_t) / options.speedup); }
  Nanos Sync();                 // advances the engine to now; returns engine now
  void ArmEngineTimer();
  void OnEngineTimer();
  void ArmSweep();
  Status ListenTcp();
  Status ListenUnix();            // options.unix_socket
  static Status CheckStaleSocket(const std::string& path);  // ok: nobody accepts there
  void Accept();
  void Shutdown();              // on the server thread
  void OnScheduled(uint64_t id, Nanos t) override;
  void OnTokens(uint64_t id, Nanos t, int32_t count, int32_t cached) override;
  void OnFinished(uint64_t id, Nanos t, EngineFinish reason) override;

  // ---- routing and endpoints (handlers.cc)
  void Handle(ServerConnection& c, http::request<http::string_body>& req);
  void HandleCompletion(ServerConnection& c, http::request<http::string_body>& req, Endpoint ep);
  void HandleEmbeddings(ServerConnection& c, http::request<http::string_body>& req);
  void HandleRerank(ServerConnection& c, http::request<http::string_body>& req);
  void HandleTranscription(ServerConnection& c, http::request<http::string_body>& req);
  // The request both prefill-only endpoints submit: `prompt_tokens` in one sequence, never
  // cached, one output step nobody sees; `fill` sets what the answer needs on r.
  template <typename Fill>
  void StartPrefillOnly(ServerConnection& c, int64_t prompt_tokens, Nanos now_e, const char* param, Fill fill);
  // The engine's time now, or nullopt after answering 429/503 (ServerOptions::max_waiting).
  std::optional<Nanos> AdmitOrRefuse(ServerConnection& c);
  // What every generation request sets alike: its sequence number, stream options, arrival
  // and deadline (ServerOptions::request_timeout). r.output_tokens must be set for Faulted.
  void BeginRequest(ActiveRequest& r, uint64_t seq, bool stream, bool include_usage, bool continuous);
  // Draws r's injected faults (ServerOptions::faults); true after answering an injected 500.
  bool Faulted(ServerConnection& c, ActiveRequest& r);
  // Submits `er` for `r` (answering 400/429 when the engine refuses; `param` names the
  // field a 400 blames), then registers r as c's active request (a stream's headers sent).
  void StartInEngine(ServerConnection& c, std::unique_ptr<ActiveRequest> r, const EngineRequest& er, Nanos now_e,
                     const char* param);
  bool Loading() const { return WallNow() < cold_until; }
  void SendRefusal(ServerConnection& c, std::string_view why);  // 429/503 (+ Retry-After)

  // ---- emission (emitter.cc)
  void Emit(ActiveRequest& r);              // writes whatever is due for r
  void WriteChunk(ActiveRequest& r, int32_t n, bool final_chunk);
  void EndStream(ActiveRequest& r);         // usage chunk, [DONE], terminal chunk
  void FailStream(ActiveRequest& r, std::string_view message);
  void SendNonStream(ActiveRequest& r);
  void SendEmbeddings(ActiveRequest& r);    // SendNonStream of an embeddings request
  void SendRerank(ActiveRequest& r);        // SendNonStream of a rerank request
  // SendNonStream's answer body: a chat/completions response, or a transcription's.
  void SendCompletion(ActiveRequest& r, const std::string& text, const std::string& reasoning, const char* reason);
  void SendTranscription(ActiveRequest& r, const std::string& text);
  void FinishPrefillOnly(ActiveRequest& r); // after either answer: lateness, e2e, success
  Timings TimingsOf(const ActiveRequest& r) const;  // the phases so far, server-clock ms
  void Abort(ActiveRequest& r, const char* why);  // client gone / timeout: free in engine
  void Unregister(ActiveRequest& r);
  void CancelInEngine(uint64_t seq);     // deferred while the engine is advancing
  void StartStall(ActiveRequest& r);
  // --sse-heartbeat: an SSE comment every options.sse_heartbeat while r's stream waits for
  // its first token (queue + prefill), so idle-timeout proxies keep the connection.
  void ArmHeartbeat(ActiveRequest& r);
  // Emission is deferred while the engine advances: tokens of one AdvanceTo are written
  // after it, one chunk per request, so a stream that fell behind (several tokens due)
  // gets them in one write, as vLLM's output loop merges outputs its consumer has not
  // yet taken. Chunk lateness counts from the oldest token in it.
  void QueueEmit(ActiveRequest& r);
  void FlushEmits();

  ServerOptions options;
  std::unique_ptr<EnginePort> engine;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  unix_stream::acceptor unix_acceptor{ioc};  // with options.unix_socket instead of TCP
  std::pair<dev_t, ino_t> unix_socket_id{};  // the socket file this server created (dev, inode)
  std::optional<StreamSocket> peer;          // the socket the pending accept fills
  asio::steady_timer engine_timer{ioc};
  asio::steady_timer sweep_timer{ioc};
  bool engine_armed = false;
  bool engine_posted = false;   // OnEngineTimer posted (the next event was already due)
  bool sweep_armed = false;
  bool advancing = false;       // inside engine->AdvanceTo: no re-entry, cancels deferred
  Nanos advance_t = 0;          // engine time of the AdvanceTo in progress / last one
  std::vector<uint64_t> pending_cancels;
  std::vector<uint64_t> emit_queue, emit_batch;  // engine ids; the batch is being written
  Nanos engine_armed_at = 0;
  Nanos t0 = 0, cold_until = 0;
  int64_t created_unix = 0;
  int64_t max_model_len = 131072;
  uint64_t next_seq = 1;
  std::unordered_map<uint64_t, uint64_t> eval_seen;  // eval prompt hash -> times asked
  bool stopping = false;
  std::thread thread;
  uint16_t bound_port = 0;
  std::unordered_set<ServerConnection*> connections;
  std::unordered_map<uint64_t, ActiveRequest*> active;
  ServeMetrics metrics;
  std::unique_ptr<EmissionTrace> trace;
  std::string scratch;          // reused to build chunks (no per-token allocation)
  ServerSnapshot snap;          // counters (server thread); copied by Snapshot()
};

}  // namespace infereng::serve
