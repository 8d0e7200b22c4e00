// TruthServer: the ground-truth SSE server of client_truth_bench (see that file's top
// comment): an epoll loop on its own thread that writes every token on an exact schedule and
// logs when each write() returned, on the clock the client stamps with (CLOCK_MONOTONIC).
// Header-only: bench/*.cc are one program each.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::truth {

inline Nanos Now() { return SteadyClock::Instance().Now(); }

inline Nanos CpuOf(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

struct TruthOptions {
  Nanos ttft = 50 * kNanosPerMilli;
  Nanos itl = 20 * kNanosPerMilli;
  int tokens = 64;
  bool chat = true;
};

// What the server did for one request: when its last byte was read, when each token's
// write() returned, and how late each write was against its schedule.
struct StreamLog {
  Nanos t_recv = 0;
  std::vector<Nanos> writes;
  std::vector<Nanos> lateness;
};

// The SSE events the server sends, vLLM's chunk shape: a token, the last token (with its
// finish reason), the usage-only chunk, [DONE].
struct TruthEvents {
  std::string token, last, usage, done;
};

inline TruthEvents MakeEvents(const TruthOptions& o) {
  auto event = [&](const char* finish) {
    std::string fin = finish ? std::string("\"") + finish + "\"" : "null";
    if (o.chat) {
      return "data: {\"id\":\"chatcmpl-truth\",\"object\":\"chat.completion.chunk\",\"created\":1733100000,"
             "\"model\":\"truth\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" hello\"},\"logprobs\":null,"
             "\"finish_reason\":" + fin + "}]}\n\n";
    }
    return "data: {\"id\":\"cmpl-truth\",\"object\":\"text_completion\",\"created\":1733100000,"
           "\"model\":\"truth\",\"choices\":[{\"index\":0,\"text\":\" hello\",\"logprobs\":null,\"finish_reason\":" +
           fin + "}]}\n\n";
  };
  TruthEvents e;
  e.token = event(nullptr);
  e.last = event("length");
  e.usage = "data: {\"id\":\"truth\",\"object\":\"" + std::string(o.chat ? "chat.completion.chunk" : "text_completion") +
            "\",\"created\":1733100000,\"model\":\"truth\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,"
            "\"completion_tokens\":" + std::to_string(o.tokens) + ",\"total_tokens\":" + std::to_string(o.tokens + 8) +
            "}}\n\n";
  e.done = "data: [DONE]\n\n";
  return e;
}

// One epoll thread: accepts, reads a request (headers + Content-Length body), answers
// 200 with a chunked text/event-stream and then writes token i at t_recv + ttft + i * itl
// (a timerfd at the earliest due write, timer slack 1 ns). Keep-alive: the next request on
// the connection starts a new schedule. Thread-safety: Start/Stop from one thread; logs()
// only after Stop().
class TruthServer {
 public:
  explicit TruthServer(TruthOptions o) : o_(o) { BuildFrames(); }
  ~TruthServer() { Stop(); }

  Result<uint16_t> Start() {
    lfd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(lfd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(lfd_, 8192) != 0 ||
        getsockname(lfd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Status::Unavailable("truth server: cannot listen on 127.0.0.1");
    }
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    tfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    stopfd_ = eventfd_like();
    Add(lfd_, EPOLLIN);
    Add(tfd_, EPOLLIN);
    Add(stopfd_[0], EPOLLIN);
    thread_ = std::thread([this] { Loop(); });
    return ntohs(addr.sin_port);
  }

  void Stop() {
    if (!thread_.joinable()) return;
    char c = 1;
    (void)!write(stopfd_[1], &c, 1);
    thread_.join();
    for (auto& [fd, conn] : conns_) close(fd);
    conns_.clear();
    for (int fd : {lfd_, ep_, tfd_, stopfd_[0], stopfd_[1]}) close(fd);
  }

  const std::unordered_map<std::string, StreamLog>& logs() const { return logs_; }
  Nanos cpu() const { return cpu_; }  // the server thread's CPU, after Stop()
  // The server thread's CPU so far (while it runs).
  Nanos CpuNow() {
    clockid_t id;
    if (!thread_.joinable() || pthread_getcpuclockid(thread_.native_handle(), &id) != 0) return 0;
    return CpuOf(id);
  }
  int64_t short_writes() const { return short_writes_; }
  // Pins the server thread to one CPU (after Start), so a client pinned elsewhere never
  // shares its core; false when the kernel refused.
  bool PinTo(int cpu) {
    if (!thread_.joinable() || cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set) == 0;
  }

 private:
  struct Conn {
    std::string in;
    std::string out;          // bytes a full socket buffer left unwritten
    std::string request_id;
    StreamLog log;
    int next = -1;            // next token index; -1 = reading a request
    uint64_t generation = 0;  // new per request, so stale timer entries are skipped
  };
  struct Due {
    Nanos t;
    int fd;
    uint64_t generation;
    bool operator>(const Due& d) const { return t > d.t; }
  };

  static std::array<int, 2> eventfd_like() {
    std::array<int, 2> p{};
    if (pipe2(p.data(), O_CLOEXEC | O_NONBLOCK) != 0) p = {-1, -1};
    return p;
  }
  void Add(int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
  }

  // Every token event is pre-framed (chunked size line + SSE bytes): the server's cost per
  // token is one write(), so it keeps its schedule at 100k tokens/s.
  void BuildFrames() {
    auto frame = [](const std::string& sse) {
      char size[16];
      std::snprintf(size, sizeof size, "%zx\r\n", sse.size());
      return size + sse + "\r\n";
    };
    const TruthEvents ev = MakeEvents(o_);
    token_ = frame(ev.token);
    last_ = frame(ev.last) + frame(ev.usage) + frame(ev.done) + "0\r\n\r\n";
    header_ = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
              "transfer-encoding: chunked\r\n\r\n";
  }

  void Loop() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    std::vector<epoll_event> evs(1024);
    for (;;) {
      int n = epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), -1);
      for (int i = 0; i < n; ++i) {
        const int fd = evs[static_cast<size_t>(i)].data.fd;
        if (fd == stopfd_[0]) {
          cpu_ = CpuOf(CLOCK_THREAD_CPUTIME_ID);
          return;
        }
        if (fd == lfd_) {
          Accept();
        } else if (fd == tfd_) {
          uint64_t expirations;
          (void)!read(tfd_, &expirations, sizeof expirations);
        } else {
          OnReadable(fd, evs[static_cast<size_t>(i)].events);
        }
      }
      WriteDue();
    }
  }

  void Accept() {
    for (;;) {
      int fd = accept4(lfd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      conns_[fd];
      Add(fd, EPOLLIN | EPOLLOUT | EPOLLET);
    }
  }

  void OnReadable(int fd, uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (events & EPOLLOUT) Flush(fd, c);
    char buf[8192];
    for (;;) {
      ssize_t got = read(fd, buf, sizeof buf);
      if (got > 0) {
        c.in.append(buf, static_cast<size_t>(got));
        continue;
      }
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return CloseConn(fd);
      break;
    }
    if (c.next < 0) TryStartRequest(fd, c);
  }

  void TryStartRequest(int fd, Conn& c) {
    const size_t head_end = c.in.find("\r\n\r\n");
    if (head_end == std::string::npos) return;
    std::string head = c.in.substr(0, head_end);
    for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    size_t body = 0;
    if (size_t p = head.find("content-length:"); p != std::string::npos) body = std::strtoul(head.c_str() + p + 15, nullptr, 10);
    if (c.in.size() < head_end + 4 + body) return;
    c.request_id.clear();
    if (size_t p = head.find("x-request-id:"); p != std::string::npos) {
      size_t v = head.find_first_not_of(' ', p + 13), e = head.find("\r\n", v);
      c.request_id = c.in.substr(v, (e == std::string::npos ? head.size() : e) - v);
    }
    c.in.erase(0, head_end + 4 + body);
    c.log = StreamLog{};
    c.log.t_recv = Now();
    c.log.writes.reserve(static_cast<size_t>(o_.tokens));
    c.log.lateness.reserve(static_cast<size_t>(o_.tokens));
    c.next = 0;
    c.generation = ++generations_;  // server-wide: a reused fd never matches an old entry
    Send(fd, c, header_);
    Schedule(fd, c);
  }

  void Schedule(int fd, const Conn& c) {
    const Nanos t = c.log.t_recv + o_.ttft + c.next * o_.itl;
    due_.push({t, fd, c.generation});
    if (t < armed_ || armed_ == 0) Arm(t);
  }

  void Arm(Nanos t) {
    armed_ = t;
    itimerspec its{};
    its.it_value.tv_sec = t / kNanosPerSecond;
    its.it_value.tv_nsec = t % kNanosPerSecond;
    timerfd_settime(tfd_, TFD_TIMER_ABSTIME, &its, nullptr);
  }

  void WriteDue() {
    armed_ = 0;
    while (!due_.empty()) {
      const Due d = due_.top();
      if (d.t > Now()) {
        Arm(d.t);
        return;
      }
      due_.pop();
      auto it = conns_.find(d.fd);
      if (it == conns_.end() || it->second.generation != d.generation) continue;
      Conn& c = it->second;
      const bool last = c.next + 1 == o_.tokens;
      Send(d.fd, c, last ? last_ : token_);
      const Nanos t = Now();
      c.log.writes.push_back(t);
      c.log.lateness.push_back(t - d.t);
      if (last) {
        logs_[c.request_id] = std::move(c.log);
        c.next = -1;
        TryStartRequest(d.fd, c);  // a pipelined next request (the client does not, but be safe)
      } else {
        ++c.next;
        Schedule(d.fd, c);
      }
    }
  }

  void Send(int fd, Conn& c, const std::string& bytes) {
    if (!c.out.empty()) {
      c.out += bytes;
      ++short_writes_;
      return Flush(fd, c);
    }
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0) n = 0;
    if (static_cast<size_t>(n) < bytes.size()) {
      ++short_writes_;
      c.out.assign(bytes, static_cast<size_t>(n));
    }
  }

  void Flush(int fd, Conn& c) {
    if (c.out.empty()) return;
    ssize_t n = write(fd, c.out.data(), c.out.size());
    if (n > 0) c.out.erase(0, static_cast<size_t>(n));
  }

  void CloseConn(int fd) {
    epoll_ctl(ep_, EPOLL_CTL_DEL, fd, nullptr);
    close(fd);
    conns_.erase(fd);
  }

  TruthOptions o_;
  std::string header_, token_, last_;
  int lfd_ = -1, ep_ = -1, tfd_ = -1;
  std::array<int, 2> stopfd_{-1, -1};
  std::thread thread_;
  std::unordered_map<int, Conn> conns_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> due_;
  Nanos armed_ = 0;
  uint64_t generations_ = 0;
  std::unordered_map<std::string, StreamLog> logs_;
  Nanos cpu_ = 0;
  int64_t short_writes_ = 0;
};

}  // namespace infereng::truth
