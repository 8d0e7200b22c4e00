// HttpTransport: the real Transport — one io_context thread running the async streaming
// HTTP client (client/http_client.h) for one target.
//
// Start() posts onto the io thread (the client is single-threaded); the client stamps
// t_send when the first request byte is written, so the post hop shows up as schedule
// lag, never as server latency. Per-request state (record + RecordingHandler) lives on the
// io thread from StartStream to OnEnd; on OnEnd the finished record is handed to `done`
// (the runner's sink, which only queues it: no formatting on the event loop).
//
// Thread-safety: Start/CancelAll from any thread. Destruction cancels what is left,
// stops the io thread and joins it.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "bench/request_body.h"
#include "bench/transport.h"
#include "client/http_client.h"

namespace infereng::bench {

struct HttpTransportOptions {
  client::ClientOptions client;          // base_url = the server root
  ApiEndpoint endpoint = ApiEndpoint::kChat;
};

class HttpTransport final : public Transport {
 public:
  static Result<std::unique_ptr<HttpTransport>> Create(HttpTransportOptions options);
  ~HttpTransport() override;

  void Start(PreparedRequest req, DoneFn done) override;
  void CancelAll() override;
  // Accepts new requests again after CancelAll (the next phase or trial).
  void Rearm() { cancelling_.store(false); }

  // Fills the idle pool up to `n` connections (client::HttpClient::Preconnect) and waits
  // for the outcome. Call between phases, not while requests run.
  client::PreconnectResult Preconnect(std::size_t n);

  // CPU time the io thread has used so far (the client's own cost), nanoseconds.
  Nanos IoThreadCpu() const;
  std::size_t ConnectionsOpened() const;
  std::size_t StaleConnectionsDropped() const;  // idle connections found closed before reuse

  struct Stream;  // per-request state, io thread only

 private:
  explicit HttpTransport(HttpTransportOptions options);

  HttpTransportOptions options_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::unique_ptr<client::HttpClient> client_;
  std::thread thread_;
  std::atomic<bool> cancelling_{false};
  std::atomic<std::size_t> connections_opened_{0};
  std::atomic<std::size_t> stale_dropped_{0};
};

}  // namespace infereng::bench
