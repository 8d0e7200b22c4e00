// StreamState and HttpClient::Impl: the private state of the HTTP client (internal to
// client/; shared by stream_machine.cc, the per-request state machine, and http_client.cc,
// the public API).
//
// Each stream is a StreamState owned by shared_ptr: the client's active map holds one
// reference, every pending async operation another, so aborting a stream (timeout, cancel)
// can report OnEnd immediately while the aborted operations drain harmlessly (they see
// `finished` and return). The handler is never touched after OnEnd.
//
// Thread-safety: everything here runs on the io_context's thread.
#pragma once

#include <functional>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "client/connection.h"
#include "client/http_client.h"

namespace infereng::client {

inline Nanos SteadyNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline constexpr std::size_t kReadChunk = 4096;  // body bytes per parse step, per stream
inline constexpr std::size_t kReadBytes = 4096;  // socket bytes per read, per stream

struct StreamState {
  StreamState(boost::asio::io_context& io) : timer(io) {}

  StreamId id = 0;
  StreamRequest request;
  StreamHandler* handler = nullptr;
  std::unique_ptr<Connection> conn;
  bool reused = false;
  bool retried = false;
  bool connecting = false;
  bool finished = false;
  bool header_handled = false;
  bool any_bytes = false;      // a response byte arrived on this attempt
  Nanos t_first_send = -1;     // the first attempt's send (retry_lost is measured from it)
  std::uint64_t events_seen = 0;
  std::string content_type;

  boost::beast::http::request<boost::beast::http::string_body> http_request;
  boost::beast::flat_buffer buffer;
  std::optional<boost::beast::http::response_parser<boost::beast::http::buffer_body>> parser;
  std::array<char, kReadChunk> body_buf{};
  std::optional<SseParser> sse;
  std::string error_body;  // 4xx/5xx body (bounded)

  boost::asio::steady_timer timer;
  Nanos deadline = 0;          // 0: none
  Nanos connect_deadline = 0;
  Nanos last_activity = 0;
  Nanos t_first_byte = -1;
  // The event time of the last read that brought bytes, and whether it was a kernel stamp:
  // what the end-of-stream read (no bytes, so no stamp of its own) hands to the final event
  // it flushes, whose bytes came with that earlier read.
  Nanos t_last_bytes = -1;
  bool last_bytes_kernel = false;
  Nanos t_done = -1;           // [DONE] arrival
  StreamEnd end;
};

struct HttpClient::Impl {
  boost::asio::io_context& io;
  ClientOptions options;
  Url url;
  // Resolved TCP addresses, or the one Unix-domain socket (ClientOptions::unix_socket).
  std::vector<boost::asio::generic::stream_protocol::endpoint> endpoints;
  std::optional<boost::asio::ssl::context> tls;

  StreamId next_id = 1;
  std::unordered_map<StreamId, std::shared_ptr<StreamState>> active;
  std::deque<std::shared_ptr<StreamState>> waiting;  // only with max_connections
  std::vector<std::unique_ptr<Connection>> idle;
  std::size_t open = 0;
  std::size_t opened_total = 0;
  std::size_t stale_dropped = 0;  // idle connections found closed before reuse

  explicit Impl(boost::asio::io_context& ctx) : io(ctx) {}
  // For error messages: the URL, and the socket path when connecting over one.
  std::string TargetName() const {
    return options.unix_socket.empty() ? url.ToString() : url.ToString() + " via unix:" + options.unix_socket;
  }

  void Begin(const std::shared_ptr<StreamState>& s);
  void Connect(const std::shared_ptr<StreamState>& s);
  void Open(Connection& c, std::function<bool()> abandoned, std::function<void(metrics::ErrorClass, std::string)> done);
  void Send(const std::shared_ptr<StreamState>& s);
  void ReadSome(const std::shared_ptr<StreamState>& s);
  void OnRead(const std::shared_ptr<StreamState>& s, boost::beast::error_code ec, std::size_t n);
  Nanos EventTime(const std::shared_ptr<StreamState>& s, Nanos now);
  void NoteStamp(Nanos now, Nanos t, bool kernel, std::uint64_t events);
  void HandleHeader(const std::shared_ptr<StreamState>& s);
  bool Consume(const std::shared_ptr<StreamState>& s, std::string_view bytes, Nanos now);
  bool HandleEvent(const std::shared_ptr<StreamState>& s, const SseEventView& event, Nanos now);
  void Complete(const std::shared_ptr<StreamState>& s, Nanos now);
  bool RetryOnFreshConnection(const std::shared_ptr<StreamState>& s, std::string cause);
  std::unique_ptr<Connection> TakeLiveIdleConnection();
  void Fail(const std::shared_ptr<StreamState>& s, metrics::ErrorClass error, std::string message);
  void Finish(const std::shared_ptr<StreamState>& s, bool keep_connection);
  void ArmTimer(const std::shared_ptr<StreamState>& s);
  void DropConnection(const std::shared_ptr<StreamState>& s);
  void StartWaiting();
};

}  // namespace infereng::client
