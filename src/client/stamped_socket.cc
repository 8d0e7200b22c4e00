// StampedSocket: recvmsg with the kernel's receive timestamp, the realtime -> steady offset,
// and the per-read stamp statistics (see stamped_socket.h).
#include "client/stamped_socket.h"

#include <linux/net_tstamp.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <utility>
#include <cstring>

namespace infereng::client {

namespace {

Nanos ReadClock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

struct OffsetCache {
  Nanos offset = 0;
  Nanos sampled_at = -1;  // steady time of the sample; -1: never
};

// Three timespecs, as the kernel's struct scm_timestamping: [0] is the software stamp.
struct ScmTimestamping {
  timespec ts[3];
};

}  // namespace

Nanos SampleRealtimeMinusSteady() {
  // Steady, realtime, steady: the realtime read lies inside the bracket, so the offset to
  // its midpoint is off by at most half the bracket. The narrowest of three wins (a
  // preemption between the reads widens one bracket, rarely three).
  Nanos best_width = -1, best = 0;
  for (int i = 0; i < 3; ++i) {
    const Nanos a = ReadClock(CLOCK_MONOTONIC);
    const Nanos r = ReadClock(CLOCK_REALTIME);
    const Nanos b = ReadClock(CLOCK_MONOTONIC);
    if (best_width < 0 || b - a < best_width) {
      best_width = b - a;
      best = r - (a + (b - a) / 2);
    }
  }
  return best;
}

Nanos RealtimeToSteady(Nanos realtime_ns) {
  thread_local OffsetCache cache;
  const Nanos now = ReadClock(CLOCK_MONOTONIC);
  if (cache.sampled_at < 0 || now - cache.sampled_at > kNanosPerSecond) {
    cache.offset = SampleRealtimeMinusSteady();
    cache.sampled_at = now;
  }
  return realtime_ns - cache.offset;
}

StampSource EnableKernelRxStamps(int fd) {
  const int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  if (::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0) return StampSource::kKernel;
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0) return StampSource::kKernel;
  return StampSource::kUser;
}

std::size_t StampedSocket::Receive(iovec* iov, int n, boost::system::error_code& ec) {
  last_kernel_ = -1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ScmTimestamping)) + CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<std::size_t>(n);
  if (source_ == StampSource::kKernel) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  ssize_t got;
  do {
    got = ::recvmsg(socket_.native_handle(), &msg, MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    ec = (errno == EAGAIN || errno == EWOULDBLOCK)
             ? boost::system::error_code(boost::asio::error::would_block)
             : boost::system::error_code(errno, boost::system::system_category());
    return 0;
  }
  if (got == 0) {
    ec = boost::asio::error::eof;
    return 0;
  }
  ec = {};
  if (msg.msg_controllen == 0) return static_cast<std::size_t>(got);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET) continue;
    timespec ts{};
    if (c->cmsg_type == SCM_TIMESTAMPING && c->cmsg_len >= CMSG_LEN(sizeof(ScmTimestamping))) {
      ScmTimestamping st;
      std::memcpy(&st, CMSG_DATA(c), sizeof st);
      ts = st.ts[0];
    } else if (c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
    } else {
      continue;
    }
    if (ts.tv_sec == 0 && ts.tv_nsec == 0) continue;  // no software stamp on this skb
    last_kernel_ = RealtimeToSteady(static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec);
  }
  return static_cast<std::size_t>(got);
}

RxStampStats::RxStampStats() : delay_ms(HistogramOptions{.lowest = 1e-3, .highest = 3.6e6, .sub_buckets = 32}) {}

void RxStampStats::Merge(const RxStampStats& other) {
  (void)delay_ms.Merge(other.delay_ms);  // same options by construction
  reads_kernel += other.reads_kernel;
  reads_user += other.reads_user;
}

RxStampStats& ThreadRxStampStats() {
  thread_local RxStampStats stats;
  return stats;
}

RxStampStats TakeThreadRxStampStats() {
  RxStampStats out;
  std::swap(out, ThreadRxStampStats());
  return out;
}

namespace {
std::atomic<bool> kernel_rx_stamps{true};
}  // namespace

void SetKernelRxStamps(bool on) { kernel_rx_stamps.store(on); }
bool KernelRxStampsEnabled() { return kernel_rx_stamps.load(std::memory_order_relaxed); }

std::string RxStampStats::Source() const {
  if (reads_kernel == 0 && reads_user == 0) return "none";
  if (reads_user == 0) return "kernel";
  if (reads_kernel == 0) return "user";
  return "mixed";
}

}  // namespace infereng::client
