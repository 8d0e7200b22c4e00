// ServerConnection: one client socket. Reads HTTP/1.1 requests with Beast (header first, so
// `Expect: 100-continue` and oversized bodies are answered early), keeps one read pending
// while a response streams (its EOF or error is how a client disconnect is noticed), and
// writes with direct non-blocking send() (falling back to waiting for writability), so a
// token costs one syscall and no handler allocation.
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <boost/beast/http/read.hpp>
#include <fmt/format.h>

#include "serve/server_internal.h"

namespace infereng::serve {

ServerConnection::ServerConnection(Server::Impl& srv, StreamSocket sock)
    : srv_(srv), sock_(std::move(sock)), idle_timer_(srv.ioc) {
  srv_.connections.insert(this);
  ++srv_.snap.connections_open;
}

ServerConnection::~ServerConnection() {
  if (active) srv_.Abort(*active, "connection closed");
  srv_.connections.erase(this);
  --srv_.snap.connections_open;
}

void ServerConnection::Start() {
  boost::system::error_code ec;
  sock_.non_blocking(true, ec);
  if (srv_.options.unix_socket.empty()) sock_.set_option(tcp::no_delay(true), ec);
  ReadHeader();
}

void ServerConnection::ArmIdleTimer() {
  idle_timer_.expires_after(std::chrono::nanoseconds(srv_.options.idle_timeout));
  idle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec && !self->active && !self->closed_) self->Close();
  });
}

void ServerConnection::ReadHeader() {
  if (closed_ || reading_ || close_after_flush_) return;
  parser_.emplace();
  parser_->body_limit(srv_.options.max_body_bytes);
  parser_->header_limit(64 * 1024);
  reading_ = true;
  if (!active) ArmIdleTimer();
  http::async_read_header(sock_, buf_, *parser_, [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
    self->OnHeader(ec);
  });
}

void ServerConnection::OnHeader(boost::system::error_code ec) {
  if (ec) return OnReadError(ec);
  auto& req = parser_->get();
  auto expect = req.find(http::field::expect);
  if (expect != req.end() && boost::beast::iequals(expect->value(), "100-continue")) {
    auto len = parser_->content_length();
    if (len && *len > srv_.options.max_body_bytes) return OnReadError(http::error::body_limit);
    Send("HTTP/1.1 100 Continue\r\n\r\n");
  }
  http::async_read(sock_, buf_, *parser_, [self = shared_from_this()](boost::system::error_code e, std::size_t) {
    self->OnBody(e);
  });
}

void ServerConnection::OnBody(boost::system::error_code ec) {
  reading_ = false;
  if (ec) return OnReadError(ec);
  idle_timer_.cancel();
  if (active) {  // pipelined behind a response in progress: answer it afterwards
    pending_.emplace(parser_->release());
    return;
  }
  pending_.emplace(parser_->release());
  Dispatch();
}

void ServerConnection::Dispatch() {
  while (pending_ && !active && !closed_ && !close_after_flush_) {
    http::request<http::string_body> req = std::move(*pending_);
    pending_.reset();
    keep_alive = req.keep_alive();
    head_only = req.method() == http::verb::head;
    srv_.Handle(*this, req);
    if (!keep_alive && !active) CloseAfterFlush();
  }
  if (!pending_ && !closed_) ReadHeader();
}

void ServerConnection::OnReadError(boost::system::error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (ec == http::error::body_limit) {
    keep_alive = false;
    SendError(MakeApiError(413, fmt::format("request body is larger than the limit of {} bytes",
                                                          srv_.options.max_body_bytes)));
    return CloseAfterFlush();
  }
  if (ec == http::error::header_limit) {
    keep_alive = false;
    SendError(MakeApiError(431, "request headers are larger than 64 KiB"));
    return CloseAfterFlush();
  }
  bool eof_like = ec == http::error::end_of_stream || ec == asio::error::eof ||
                  ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
                  ec == asio::error::broken_pipe || ec == http::error::partial_message;
  if (!eof_like && !active) {
    // A malformed request: say what was wrong, then close (the stream is out of sync).
    keep_alive = false;
    SendError(MakeApiError(400, "malformed HTTP request: " + ec.message()));
    return CloseAfterFlush();
  }
  // The client went away (or half-closed): abort what it asked for and close.
  Close();
}

void ServerConnection::Send(std::string_view bytes) {
  if (closed_ || bytes.empty()) return;
  if (out_.empty() && !waiting_writable_) {
    ssize_t n = ::send(sock_.native_handle(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        PostClose();
        return;
      }
      n = 0;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    if (bytes.empty()) return;
  }
  if (out_.size() + bytes.size() > srv_.options.max_write_buffer) {
    PostClose();  // the reader is hopelessly behind
    return;
  }
  out_.append(bytes);
  WaitWritable();
}

void ServerConnection::WaitWritable() {
  if (waiting_writable_ || closed_) return;
  waiting_writable_ = true;
  sock_.async_wait(StreamSocket::wait_write, [self = shared_from_this()](boost::system::error_code ec) {
    self->waiting_writable_ = false;
    if (ec || self->closed_) return;
    ssize_t n = ::send(self->sock_.native_handle(), self->out_.data(), self->out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return self->Close();
    if (n > 0) self->out_.erase(0, static_cast<std::size_t>(n));
    if (!self->out_.empty()) return self->WaitWritable();
    if (self->close_after_flush_) self->Close();
  });
}

void ServerConnection::SendStream(std::string_view bytes) {
  const Nanos every = srv_.options.stream_buffer;
  if (every <= 0) return Send(bytes);
  if (closed_ || bytes.empty()) return;
  held_.append(bytes);
  if (flush_timer_) return;  // a flush is already due
  flush_timer_ = std::make_unique<asio::steady_timer>(srv_.ioc);
  flush_timer_->expires_after(std::chrono::nanoseconds(every));
  flush_timer_->async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->FlushHeld();
  });
}

void ServerConnection::FlushHeld() {
  flush_timer_.reset();  // cancels a pending wait (its handler sees operation_aborted)
  if (held_.empty()) return;
  std::string bytes = std::move(held_);
  held_.clear();
  Send(bytes);
}

void ServerConnection::SendResponse(int status, std::string_view content_type, std::string_view body,
                              std::string_view extra_headers) {
  std::string& s = srv_.scratch;
  s.clear();
  fmt::format_to(std::back_inserter(s), "HTTP/1.1 {} {}\r\nServer: infereng\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                 status, [&] { auto r = http::obsolete_reason(static_cast<http::status>(status)); return std::string_view(r.data(), r.size()); }(), content_type,
                 body.size());
  if (!keep_alive) s += "Connection: close\r\n";
  if (!x_request_id.empty()) fmt::format_to(std::back_inserter(s), "x-request-id: {}\r\n", x_request_id);
  s += extra_headers;
  s += "\r\n";
  if (!head_only) s += body;
  Send(s);
}

void ServerConnection::FinishActive() {
  auto hold = std::move(keep_alive_ref);  // `this` lives until we return
  FlushHeld();  // the buffering proxy passes the end of the response on at once
  if (active) {
    srv_.Unregister(*active);
    active.reset();
  }
  if (!keep_alive) return CloseAfterFlush();
  // Later, not now: we may be inside the engine sink, and the next request submits.
  asio::post(srv_.ioc, [self = shared_from_this()] { self->Dispatch(); });
}

void ServerConnection::CloseAfterFlush() {
  close_after_flush_ = true;
  if (out_.empty() && !waiting_writable_) Close();
}

void ServerConnection::PostClose() {
  if (closed_) return;
  if (active) active->ended = true;  // no more output for it
  asio::post(srv_.ioc, [self = shared_from_this()] { self->Close(); });
}

void ServerConnection::Close() {
  auto hold = std::move(keep_alive_ref);  // `this` lives until we return
  if (closed_) return;
  closed_ = true;
  if (active) {
    srv_.Abort(*active, "client disconnected");
    active.reset();
  }
  boost::system::error_code ec;
  idle_timer_.cancel();
  flush_timer_.reset();
  sock_.shutdown(StreamSocket::shutdown_both, ec);
  sock_.close(ec);
}

}  // namespace infereng::serve
