// Connection: one keep-alive socket to the target, plain or TLS, over TCP or a Unix-domain
// socket (the socket is Asio's generic stream socket, so one type serves both; internal to
// client/).
//
// The two transports are a std::variant; Visit() hands the active one to generic code so
// the request/response logic in http_client.cc is written once. Both read through a
// StampedSocket (stamped_socket.h): every read carries the kernel's receive timestamp. A Connection is owned by
// exactly one place at a time: the client's idle pool or the stream using it.
#pragma once

#include <poll.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>

#include "client/stamped_socket.h"

namespace infereng::client {

class Connection {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;  // TCP or Unix-domain
  using Tcp = StampedSocket;  // plain: the socket read with receive timestamps
  using Tls = boost::asio::ssl::stream<StampedSocket>;

  // tls == nullptr: plain (no TLS).
  Connection(boost::asio::io_context& io, boost::asio::ssl::context* tls)
      : stream_(MakeStream(io, tls)) {}

  bool tls() const { return std::holds_alternative<Tls>(stream_); }
  Tls& tls_stream() { return std::get<Tls>(stream_); }

  // The reader under either transport: its last read's kernel stamp.
  StampedSocket& stamped() {
    if (auto* t = std::get_if<Tls>(&stream_)) return t->next_layer();
    return std::get<Tcp>(stream_);
  }
  Socket& socket() { return stamped().next_layer(); }

  // Calls f(stream) with the active transport (tcp socket or ssl stream).
  template <typename F>
  decltype(auto) Visit(F&& f) {
    return std::visit(std::forward<F>(f), stream_);
  }

  // Closes the socket: pending operations complete with operation_aborted. Idempotent.
  void Close() {
    boost::system::error_code ignored;
    socket().shutdown(Socket::shutdown_both, ignored);
    socket().close(ignored);
  }

  // An idle keep-alive connection must have nothing to read: readable (the server's FIN,
  // an RST, a TLS close_notify, or stray bytes) means it cannot carry another request.
  // Non-blocking (poll with a zero timeout); also false for a closed socket.
  bool IdleLooksAlive() {
    if (!socket().is_open()) return false;
    pollfd p{};
    p.fd = socket().native_handle();
    p.events = POLLIN | POLLRDHUP;
    const int n = ::poll(&p, 1, 0);
    return n == 0;  // nothing pending; n < 0 (poll failed) counts as dead too
  }

  uint64_t requests_served = 0;

 private:
  static std::variant<Tcp, Tls> MakeStream(boost::asio::io_context& io, boost::asio::ssl::context* tls) {
    if (tls) return std::variant<Tcp, Tls>(std::in_place_type<Tls>, io, *tls);
    return std::variant<Tcp, Tls>(std::in_place_type<Tcp>, io);
  }

  std::variant<Tcp, Tls> stream_;
};

}  // namespace infereng::client
