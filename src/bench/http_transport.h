// HttpTransport: the real Transport — io threads, each running its own io_context and its
// own async streaming HTTP client (client/http_client.h) for one target.
//
// Connections are sharded across the io threads ("lanes"): each request goes to the next
// lane in turn, and each lane keeps its own keep-alive pool, so a connection is only ever
// touched by one thread (the client is single-threaded) and nothing on the hot path is
// shared. The records meet again in the runner's sink. One lane unless asked for more
// (DefaultIoThreads: the machine decides).
//
// Start() posts onto a lane's io thread; the client stamps t_send when the first request
// byte is written, so the post hop shows up as schedule lag, never as server latency.
// Per-request state (record + RecordingHandler) lives on the io thread from StartStream to
// OnEnd; on OnEnd the finished record is handed to `done` (the runner's sink, which only
// queues it: no formatting on the event loop).
//
// Thread-safety: Start/CancelAll from any thread. Destruction cancels what is left,
// stops the io threads and joins them.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "bench/request_body.h"
#include "bench/transport.h"
#include "client/http_client.h"
#include "client/rx_stamp_stats.h"

namespace infereng::bench {

struct HttpTransportOptions {
  client::ClientOptions client;          // base_url = the server root
  ApiEndpoint endpoint = ApiEndpoint::kChat;
  bool stream = true;                    // false: generations answered whole (WholeAnswerHandler)
  int io_threads = 1;                    // lanes (>= 1)
};

// The io threads a run gets by default: 1 on a machine with <= 4 cores (the server, the
// dispatcher and the record pipeline need the rest: on the 2-core machine of issue 17 the
// server shares it), else a quarter of the cores, at most 8.
int DefaultIoThreads(unsigned hardware_threads);

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

  // CPU time the io threads have used so far (the client's own cost), nanoseconds, summed.
  Nanos IoThreadCpu() const;
  // The same per io thread (lane order): the busiest one is the saturation signal.
  std::vector<Nanos> IoThreadCpus() const;
  int io_threads() const { return static_cast<int>(lanes_.size()); }
  // The receive-stamp statistics of every io thread since the last call (client::
  // TakeThreadRxStampStats on each), merged; waits for them.
  client::RxStampStats TakeRxStampStats();
  std::size_t ConnectionsOpened() const;
  std::size_t StaleConnectionsDropped() const;  // idle connections found closed before reuse

  struct Stream;  // per-request state, io thread only

 private:
  // One io thread with its io_context, client and keep-alive pool.
  struct Lane {
    Lane() : work(boost::asio::make_work_guard(io)) {}
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
    std::unique_ptr<client::HttpClient> client;
    std::thread thread;
    std::atomic<std::size_t> connections_opened{0};
    std::atomic<std::size_t> stale_dropped{0};
  };

  explicit HttpTransport(HttpTransportOptions options);
  Lane& NextLane();

  HttpTransportOptions options_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<std::size_t> next_lane_{0};
  std::atomic<bool> cancelling_{false};
};

}  // namespace infereng::bench
