// StampedReadOp: StampedSocket's read as an operation of Asio's own reactor — one
// recvmsg(MSG_DONTWAIT) with the kernel's receive stamp, and no other system call per read
// (internal to client/; only stamped_socket.h includes it).
//
// Why (issue 17, the leaner per-token path): the first StampedSocket waited for
// readability with socket.async_wait and then read. Asio runs an async_wait through the
// reactor's non-speculative path, which re-arms the edge-triggered registration with an
// epoll_ctl(EPOLL_CTL_MOD) every time, and the wait and the read were two operations and
// two handler frames per read. This is Asio's reactive_socket_recv_op (Boost 1.74,
// detail/reactive_socket_recv_op.hpp) with the perform step replaced by
// StampedSocket::Receive: one operation on the reactor's read queue, no re-arm (the
// registration is edge-triggered and stays), and Asio's own speculative read when it
// starts. Per read: at most one recvmsg that finds nothing (the speculative one, when the
// bytes have not arrived yet) and the recvmsg that reads them.
//
// Not done, on purpose: treating a short read as "queue empty, do not speculate next
// time" (done_and_exhausted) would save the speculative recvmsg, but a FIN that arrived
// with the last bytes leaves the socket readable without a new epoll edge, and the next
// read would wait forever (a close-delimited response never ends). As Asio does, only a
// read of 0 bytes (EOF, error) says exhausted.
//
// It reaches into Asio's detail namespace (the reactor, the socket's per-descriptor data),
// so it is compiled only for the Asio whose internals it was written against (Boost
// 1.74–1.81, epoll: kStampedReadOp); elsewhere StampedSocket keeps the portable
// wait-then-read path.
//
// Lifetime: the operation points at its StampedSocket; the socket must outlive the pending
// read, as Asio requires of every socket (closing it cancels the read, which then completes
// with operation_aborted and never touches the socket).
#pragma once

#include <boost/version.hpp>
#include <boost/asio/detail/config.hpp>

#if BOOST_VERSION >= 107400 && BOOST_VERSION < 108200 && defined(BOOST_ASIO_HAS_EPOLL) && \
    !defined(BOOST_ASIO_HAS_IO_URING)
#define INFERENG_STAMPED_READ_OP 1
#else
#define INFERENG_STAMPED_READ_OP 0
#endif

#include <sys/uio.h>

#include <cstddef>

#include <boost/asio/buffer.hpp>

namespace infereng::client {

// The non-empty buffers of `buffers` as at most `max` iovecs (n of them); returns the bytes
// they hold. Both read paths of StampedSocket fill their recvmsg with it.
template <typename MutableBuffers>
std::size_t FillIovecs(const MutableBuffers& buffers, iovec* iov, int max, int& n) {
  n = 0;
  std::size_t total = 0;
  for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers) && n < max;
       ++it) {
    boost::asio::mutable_buffer mb(*it);
    if (mb.size() == 0) continue;
    iov[n].iov_base = mb.data();
    iov[n].iov_len = mb.size();
    total += mb.size();
    ++n;
  }
  return total;
}

}  // namespace infereng::client

#if INFERENG_STAMPED_READ_OP

#include <boost/asio/buffer.hpp>
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/memory.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/error.hpp>

namespace infereng::client {

inline constexpr bool kStampedReadOp = true;

// Reader: the socket, with `std::size_t Receive(iovec*, int, error_code&)`: one
// non-blocking stamped read (would_block when nothing is queued).
template <typename Reader, typename MutableBuffers>
class StampedReadOpBase : public boost::asio::detail::reactor_op {
 public:
  static constexpr int kMaxIov = 16;

  StampedReadOpBase(Reader* reader, const MutableBuffers& buffers, func_type complete)
      : reactor_op(boost::system::error_code(), &StampedReadOpBase::DoPerform, complete),
        reader_(reader),
        buffers_(buffers) {}

  static status DoPerform(reactor_op* base) {
    auto* o = static_cast<StampedReadOpBase*>(base);
    iovec iov[kMaxIov];
    int n = 0;
    if (FillIovecs(o->buffers_, iov, kMaxIov, n) == 0) {  // only empty buffers (StampedSocket posts those; defensive)
      o->bytes_transferred_ = 0;
      return done;
    }
    o->bytes_transferred_ = o->reader_->Receive(iov, n, o->ec_);
    if (o->ec_ == boost::asio::error::would_block) {
      o->ec_ = {};
      return not_done;  // stays queued for the next readiness edge
    }
    return o->bytes_transferred_ == 0 ? done_and_exhausted : done;  // as Asio's own receive
  }

 private:
  Reader* reader_;
  MutableBuffers buffers_;
};

template <typename Reader, typename MutableBuffers, typename Handler, typename IoExecutor>
class StampedReadOp : public StampedReadOpBase<Reader, MutableBuffers> {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(StampedReadOp);

  StampedReadOp(Reader* reader, const MutableBuffers& buffers, Handler& handler, const IoExecutor& io_ex)
      : StampedReadOpBase<Reader, MutableBuffers>(reader, buffers, &StampedReadOp::DoComplete),
        handler_(static_cast<Handler&&>(handler)),
        work_(handler_, io_ex) {}

  // As reactive_socket_recv_op::do_complete: free the operation before the upcall.
  static void DoComplete(void* owner, boost::asio::detail::operation* base, const boost::system::error_code&,
                         std::size_t) {
    auto* o = static_cast<StampedReadOp*>(base);
    ptr p = {boost::asio::detail::addressof(o->handler_), o, o};
    boost::asio::detail::handler_work<Handler, IoExecutor> w(
        static_cast<boost::asio::detail::handler_work<Handler, IoExecutor>&&>(o->work_));
    boost::asio::detail::binder2<Handler, boost::system::error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                                         o->bytes_transferred_);
    p.h = boost::asio::detail::addressof(handler.handler_);
    p.reset();
    if (owner) {
      boost::asio::detail::fenced_block b(boost::asio::detail::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

  // Queues the read on the reactor that serves `socket` (an Asio socket's implementation:
  // its descriptor and per-descriptor reactor data).
  template <typename SocketImpl>
  static void Start(boost::asio::detail::reactor& reactor, SocketImpl& impl, Reader* reader,
                    const MutableBuffers& buffers, Handler& handler, const IoExecutor& io_ex) {
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(handler);
    ptr p = {boost::asio::detail::addressof(handler), ptr::allocate(handler), 0};
    p.p = new (p.v) StampedReadOp(reader, buffers, handler, io_ex);
    reactor.start_op(boost::asio::detail::reactor::read_op, impl.socket_, impl.reactor_data_, p.p,
                     is_continuation, /*allow_speculative=*/true);
    p.v = p.p = 0;
  }

 private:
  Handler handler_;
  boost::asio::detail::handler_work<Handler, IoExecutor> work_;
};

}  // namespace infereng::client

#else

namespace infereng::client {
inline constexpr bool kStampedReadOp = false;
}  // namespace infereng::client

#endif
