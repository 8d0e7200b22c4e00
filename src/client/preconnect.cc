// HttpClient::Preconnect: warm the keep-alive pool before the measured phase.
//
// Why: a run that opens its C connections inside the window charges every first request a
// TCP (and TLS) handshake, and a burst of C connects at t0 delays the event loop, which
// shows up as schedule lag and inflated TTFT (issue 17 measured it at 100 streams). The
// pool is filled first, timed on its own, and reported apart.
#include <boost/asio/steady_timer.hpp>

#include "client/http_client.h"
#include "client/stream_state.h"

namespace infereng::client {

namespace {

struct PreconnectOp {
  explicit PreconnectOp(boost::asio::io_context& io) : timer(io) {}
  PreconnectResult result;
  std::size_t pending = 0;
  Nanos t0 = 0;
  bool timed_out = false;
  boost::asio::steady_timer timer;
  std::vector<std::unique_ptr<Connection>> conns;  // index i: the i-th open, until it ends
  std::function<void(const PreconnectResult&)> done;
};

}  // namespace

void HttpClient::Preconnect(std::size_t n, std::function<void(const PreconnectResult&)> done) {
  Impl& im = *impl_;
  auto op = std::make_shared<PreconnectOp>(im.io);
  n = n > im.idle.size() ? n - im.idle.size() : 0;  // already idle: nothing to open
  if (im.options.max_connections > 0) {
    const std::size_t room = im.options.max_connections > im.open ? im.options.max_connections - im.open : 0;
    n = std::min(n, room);
  }
  op->result.requested = n;
  op->done = std::move(done);
  op->t0 = SteadyNow();
  if (n == 0) {
    op->done(op->result);
    return;
  }
  op->pending = n;
  op->conns.resize(n);
  auto finish_one = [&im, op](std::size_t i, metrics::ErrorClass error, std::string message) {
    std::unique_ptr<Connection> c = std::move(op->conns[i]);
    if (error == metrics::ErrorClass::kNone && !op->timed_out) {
      op->result.connect_times.push_back(SteadyNow() - op->t0);
      ++op->result.opened;
      im.idle.push_back(std::move(c));
    } else {
      if (c) c->Close();
      --im.open;
      ++op->result.failed;
      if (op->result.first_error.empty()) op->result.first_error = op->timed_out ? "connect timed out" : message;
    }
    if (--op->pending == 0) {
      op->timer.cancel();
      op->result.elapsed = SteadyNow() - op->t0;
      op->done(op->result);
    }
  };
  // One deadline for the whole batch: the connect timeout. Past it, whatever is still
  // opening is closed (its handler then reports the failure).
  op->timer.expires_after(std::chrono::nanoseconds(im.options.connect_timeout));
  op->timer.async_wait([op](const boost::system::error_code& ec) {
    if (ec) return;
    op->timed_out = true;
    for (auto& c : op->conns) {
      if (c) c->Close();
    }
  });
  for (std::size_t i = 0; i < n; ++i) {
    op->conns[i] = std::make_unique<Connection>(im.io, im.tls ? &*im.tls : nullptr);
    ++im.open;
    ++im.opened_total;
    // Never abandoned: the timer closes the socket instead, so every open reports once.
    im.Open(*op->conns[i], [] { return false; },
            [finish_one, i](metrics::ErrorClass error, std::string message) { finish_one(i, error, std::move(message)); });
  }
}

}  // namespace infereng::client
