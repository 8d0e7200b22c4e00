// StampedSocket: the client's socket, read with recvmsg so each read carries the kernel's
// receive timestamp (when the bytes reached the socket), not only the time the parser ran.
//
// Why: a busy client reads late, and one late read carries several SSE events; stamping
// them when the parser runs turns the client's own delay into latency (issue 17: ITL read
// 20% of gaps under 5 ms where the truth was 20 ms). The kernel stamps skbs as they arrive
// (SO_TIMESTAMPING software RX, else SO_TIMESTAMPNS); a read's stamp is that of the last
// skb it consumed, so the event time is when the newest byte of the read arrived. TCP
// merges segments that queue up unread into one buffer stamped with the newest arrival, so
// events that waited together share that time: exact for an event that arrived alone (the
// usual case at many streams: one token per stream per read), an upper bound on the
// arrival of older ones, and the delay below a lower bound of theirs. Both
// clocks are kept: user − kernel is the client's own delay (RxStampStats), a direct
// self-check of the measurement.
//
// The kernel stamps are CLOCK_REALTIME; RealtimeToSteady() moves them onto the steady_clock
// (CLOCK_MONOTONIC) timeline with an offset re-sampled at most once a second per thread (the
// pair of clocks read back to back, the narrowest of three brackets; NTP slews realtime by at
// most 500 ppm, i.e. <= 0.5 µs drift per second between samples). A converted stamp is
// clamped to the user stamp, so kernel <= user always holds.
//
// Fallback: when neither option can be set (not Linux, a sandbox, a socket type without RX
// stamps) or a read arrives without the control message (Unix-domain sockets), that read
// has no kernel stamp and the user-space stamp is the event time; RxStampStats counts reads
// by source, and the manifest says which was used.
//
// The stream concept: async_read_some is one recvmsg(MSG_DONTWAIT) into the caller's
// buffers, queued on Asio's reactor as its own read operation (stamped_read_op.h: no
// epoll_ctl re-arm per read, one operation instead of a wait and a read); where it is not
// compiled (another Asio) it waits for readability (async_wait) and then reads. Writes go
// straight to the socket. It is the next layer of the TLS stream too, so TLS reads keep the
// stamp of the socket read that delivered the decrypted bytes.
//
// Thread-safety: as an Asio socket (one io_context thread).
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <boost/asio/async_result.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "client/rx_stamp_stats.h"
#include "client/stamped_read_op.h"
#include "core/clock.h"

namespace infereng::client {

// The clock offset CLOCK_REALTIME − CLOCK_MONOTONIC now (ns), sampled fresh.
Nanos SampleRealtimeMinusSteady();
// A CLOCK_REALTIME time (ns since the epoch) on the steady timeline, through this thread's
// cached offset (re-sampled when older than a second).
Nanos RealtimeToSteady(Nanos realtime_ns);

// Turns on kernel RX software timestamps for `fd`: SO_TIMESTAMPING (RX_SOFTWARE|SOFTWARE),
// else SO_TIMESTAMPNS. kUser when neither can be set (the fallback).
StampSource EnableKernelRxStamps(int fd);

class StampedSocket {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;
  using executor_type = Socket::executor_type;
  using next_layer_type = Socket;
  using lowest_layer_type = Socket::lowest_layer_type;

  explicit StampedSocket(boost::asio::io_context& io)
      : socket_(io)
#if INFERENG_STAMPED_READ_OP
        , reactor_(boost::asio::use_service<boost::asio::detail::reactor>(static_cast<boost::asio::execution_context&>(io)))
#endif
  {
  }
  // A pending read points at this object (stamped_read_op.h): it stays where it is.
  StampedSocket(const StampedSocket&) = delete;
  StampedSocket& operator=(const StampedSocket&) = delete;

  executor_type get_executor() { return socket_.get_executor(); }
  Socket& next_layer() { return socket_; }
  lowest_layer_type& lowest_layer() { return socket_.lowest_layer(); }

  // After connect: ask for kernel stamps (allowed = false forces the user-space fallback).
  StampSource EnableStamps(bool allowed) {
    source_ = allowed ? EnableKernelRxStamps(socket_.native_handle()) : StampSource::kUser;
    return source_;
  }
  StampSource source() const { return source_; }
  // The last read's kernel stamp on the steady timeline; -1 when it had none.
  Nanos last_kernel_stamp() const { return last_kernel_; }

  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          // An empty read completes at once (posted, never inside this call), as an Asio
          // socket's does: the TLS stream uses one to defer a completion, and waiting for
          // readability there would hang a stream whose bytes have all arrived.
          if (boost::asio::buffer_size(b) == 0) {
            boost::asio::post(socket_.get_executor(), [h = std::move(handler)]() mutable {
              std::move(h)(boost::system::error_code{}, std::size_t{0});
            });
            return;
          }
#if INFERENG_STAMPED_READ_OP
          using Op = StampedReadOp<StampedSocket, MutableBuffers, std::decay_t<decltype(handler)>, executor_type>;
          Op::Start(reactor_, ImplAccess::Of(socket_), this, b, handler, socket_.get_executor());
#else
          WaitThenRead(std::move(handler), b);
#endif
        },
        token, buffers);
  }

  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return socket_.async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  static constexpr int kMaxIov = 16;
  template <typename, typename>
  friend class StampedReadOpBase;

  // The socket's Asio implementation (descriptor, reactor data): protected in Asio, reached
  // through a derived class for StampedReadOp.
  struct ImplAccess : Socket {
    static auto& Of(Socket& s) { return (s.*&ImplAccess::impl_).get_implementation(); }
  };

  // One non-blocking recvmsg into iov; would_block when nothing is queued yet.
  std::size_t Receive(iovec* iov, int n, boost::system::error_code& ec);

  template <typename Handler, typename MutableBuffers>
  void WaitThenRead(Handler handler, const MutableBuffers& buffers) {
    socket_.async_wait(Socket::wait_read, [this, handler = std::move(handler), buffers](
                                              boost::system::error_code ec) mutable {
      if (ec) return std::move(handler)(ec, std::size_t{0});
      iovec iov[kMaxIov];
      int n = 0;
      if (FillIovecs(buffers, iov, kMaxIov, n) == 0) return std::move(handler)(ec, std::size_t{0});  // only empty buffers past kMaxIov
      const std::size_t got = Receive(iov, n, ec);
      if (ec == boost::asio::error::would_block) return WaitThenRead(std::move(handler), buffers);  // spurious wake
      // Called directly: we are on the io_context's thread, inside a completion (never
      // inside the initiating call), as every handler of this single-threaded client.
      std::move(handler)(ec, got);
    });
  }

  Socket socket_;
#if INFERENG_STAMPED_READ_OP
  boost::asio::detail::reactor& reactor_;
#endif
  StampSource source_ = StampSource::kUser;
  Nanos last_kernel_ = -1;
};

}  // namespace infereng::client
