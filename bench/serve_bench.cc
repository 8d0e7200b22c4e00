// serve_bench: how many concurrent streams `infereng serve` sustains while writing every
// token on time. Starts serve::Server in-process with PacedEngine (one token every
// --itl-ms per stream, streams independently phased), opens --streams connections with a
// raw epoll client in this process, and runs for --seconds. Reports:
//   - emission lateness (socket write time - scheduled time) P50/P99/max, from the server,
//   - memory per stream (RSS growth / streams; includes this client's tiny buffers),
//   - CPU per 1M tokens of the server thread ("infereng-serve", from /proc) and of the
//     whole process (server + client + trace thread).
// Lateness counts the measured window only (from 1 s after the ramp), not the ramp.
// --server floor replaces the server with a bare paced sender (threads: accept, then one
// send() of --bytes per token on the same schedule, no HTTP, no engine): the floor any
// server on this kernel can reach, so serve's figures can be read against it.
// --client-poll-ms P makes the client read every P ms instead of waking per event.
// Usage: serve_bench [--streams 5000] [--itl-ms 20] [--seconds 10] [--ramp-s 2]
//                    [--server serve|floor] [--floor-threads 1] [--bytes 208] [--client-poll-ms 0]
//                    [--merge 1]   (0: serve writes one chunk per token however late)
//                    [--uds PATH]  (serve listens on a Unix socket; the client connects there)
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <algorithm>
#include <atomic>
#include <queue>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>

#include "core/stats.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

using namespace infereng;

namespace {

double ProcSeconds(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  auto rp = s.rfind(')');
  if (rp == std::string::npos) return 0;
  std::vector<std::string> f;
  std::size_t pos = rp + 2;
  while (pos < s.size()) {
    auto sp = s.find(' ', pos);
    f.push_back(s.substr(pos, sp - pos));
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  if (f.size() < 13) return 0;
  return (std::stod(f[11]) + std::stod(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));  // utime + stime
}

double ServerThreadCpu() {
  DIR* d = opendir("/proc/self/task");
  double cpu = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string base = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(base + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "infereng-serve") cpu = ProcSeconds(base + "/stat");
  }
  closedir(d);
  return cpu;
}

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }


// The floor: `threads` threads (each its own SO_REUSEPORT listener, so the kernel shards
// the connections) accepting and sending --bytes per token per stream on the same schedule
// as PacedEngine (first token ttft after the connection, then every itl).
class FloorSender {
 public:
  FloorSender(Nanos ttft, Nanos itl, int bytes, int threads)
      : ttft_(ttft), itl_(itl), payload_(static_cast<std::size_t>(bytes), 'x'), workers_(static_cast<std::size_t>(std::max(1, threads))) {}
  ~FloorSender() { Stop(); }

  uint16_t Start() {
    uint16_t port = 0;
    for (Worker& w : workers_) {
      w.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      int one = 1;
      setsockopt(w.listen_fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port);
      bind(w.listen_fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
      socklen_t al = sizeof a;
      getsockname(w.listen_fd, reinterpret_cast<sockaddr*>(&a), &al);
      port = ntohs(a.sin_port);
      listen(w.listen_fd, 4096);
    }
    for (Worker& w : workers_) w.thread = std::thread([this, &w] { Run(w); });
    return port;
  }
  void Stop() {
    if (stop_.exchange(true)) return;
    for (Worker& w : workers_) {
      if (w.thread.joinable()) w.thread.join();
      for (int fd : w.fds) close(fd);
      if (w.listen_fd >= 0) close(w.listen_fd);
    }
  }
  // From now on lateness counts only what is sent after this call (steady state).
  void ResetLateness() { reset_epoch_.fetch_add(1); }
  int64_t tokens() const { return tokens_.load(std::memory_order_relaxed); }
  std::vector<Nanos> Lateness() const {  // after Stop()
    std::vector<Nanos> all;
    for (const Worker& w : workers_) all.insert(all.end(), w.lateness.begin(), w.lateness.end());
    return all;
  }

 private:
  struct Worker {
    int listen_fd = -1;
    std::thread thread;
    std::vector<int> fds;
    std::vector<Nanos> lateness;
    using Due = std::pair<Nanos, int>;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due;
  };
  static Nanos NowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  void AcceptAll(Worker& w) {
    int fd;
    while ((fd = accept4(w.listen_fd, nullptr, nullptr, SOCK_NONBLOCK)) >= 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      w.fds.push_back(fd);
      w.due.push({NowNs() + ttft_, fd});
    }
  }
  void Run(Worker& w) {
    pthread_setname_np(pthread_self(), "infereng-serve");
    w.lateness.reserve(1 << 22);
    int epoch = 0;
    Nanos next_accept = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      Nanos now = NowNs();
      if (now >= next_accept) {
        AcceptAll(w);
        next_accept = now + 200 * kNanosPerMicro;
        if (int e = reset_epoch_.load(); e != epoch) {
          epoch = e;
          w.lateness.clear();
        }
      }
      if (w.due.empty() || w.due.top().first > now) {
        // Sleep when the next token is far, spin when it is close (as serve does).
        Nanos gap = w.due.empty() ? kNanosPerMilli : w.due.top().first - now;
        if (gap > 50 * kNanosPerMicro) std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(gap - 30 * kNanosPerMicro, 200 * kNanosPerMicro)));
        continue;
      }
      auto [due, fd] = w.due.top();
      w.due.pop();
      ::send(fd, payload_.data(), payload_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      w.lateness.push_back(NowNs() - due);
      tokens_.fetch_add(1, std::memory_order_relaxed);
      w.due.push({due + itl_, fd});
    }
  }

  Nanos ttft_, itl_;
  std::string payload_;
  std::vector<Worker> workers_;
  std::atomic<bool> stop_{false};
  std::atomic<int> reset_epoch_{0};
  std::atomic<int64_t> tokens_{0};
};

}  // namespace

int main(int argc, char** argv) {
  int streams = 5000;
  double itl_ms = 20, seconds = 10, ramp_s = 2, client_poll_ms = 0;
  int bytes_per_token = 208, floor_threads = 1;
  bool merge = true;
  std::string uds;  // serve listens on this Unix socket and the client connects there
  std::string server_kind = "serve";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--uds") {
      uds = argv[i + 1];
      continue;
    }
    if (k == "--server") {
      server_kind = argv[i + 1];
      if (server_kind != "serve" && server_kind != "floor") {
        std::fprintf(stderr, "--server: expected serve or floor, got %s\n", argv[i + 1]);
        return 2;
      }
      continue;
    }
    double v = std::atof(argv[i + 1]);
    if (k == "--streams") streams = static_cast<int>(v);
    else if (k == "--itl-ms") itl_ms = v;
    else if (k == "--seconds") seconds = v;
    else if (k == "--ramp-s") ramp_s = v;
    else if (k == "--client-poll-ms") client_poll_ms = v;
    else if (k == "--bytes") bytes_per_token = static_cast<int>(v);
    else if (k == "--floor-threads") floor_threads = static_cast<int>(v);
    else if (k == "--merge") merge = v != 0;
    else { std::fprintf(stderr, "unknown flag %s\n", k.c_str()); return 2; }
  }
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(2 * streams + 100)) {
    std::fprintf(stderr, "fd limit %lu too low for %d streams\n", static_cast<unsigned long>(rl.rlim_cur), streams);
    return 3;
  }

  serve::ServerOptions so;
  so.port = 0;
  so.max_waiting = 0;
  so.max_connections = static_cast<std::size_t>(streams) + 100;
  so.merge_late_tokens = merge;
  so.unix_socket = uds;
  serve::PacedEngineOptions po;
  po.ttft_base = 20 * kNanosPerMilli;
  po.prefill_per_token = 0;
  po.itl = static_cast<Nanos>(itl_ms * 1e6);
  po.max_running = streams + 1;
  const bool floor = server_kind == "floor";
  if (floor && !uds.empty()) {
    std::fprintf(stderr, "--uds: the floor sender is TCP only\n");
    return 2;
  }
  serve::Server server(so, std::make_unique<serve::PacedEngine>(po));
  FloorSender floor_sender(po.ttft_base, po.itl, bytes_per_token, floor_threads);
  Result<uint16_t> port = floor ? Result<uint16_t>(floor_sender.Start()) : server.Start();
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().ToString().c_str());
    return 3;
  }
  auto tokens_now = [&] { return floor ? floor_sender.tokens() : server.Snapshot().tokens_emitted; };
  const long rss0 = RssKb();
  const int max_tokens = static_cast<int>((seconds + ramp_s + 5) * 1000 / itl_ms);
  std::string body = "{\"prompt\":\"bench prompt words\",\"max_tokens\":" + std::to_string(max_tokens) +
                     ",\"ignore_eos\":true,\"stream\":true}";
  std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;

  int ep = epoll_create1(0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(*port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sockaddr_un uaddr{};
  uaddr.sun_family = AF_UNIX;
  std::snprintf(uaddr.sun_path, sizeof uaddr.sun_path, "%s", uds.c_str());
  const bool use_uds = !uds.empty();
  std::vector<int> fds;
  std::vector<char> buf(1 << 16);
  uint64_t bytes = 0;
  int opened = 0, failed = 0;
  const double start = Now();
  double measure_start = 0, cpu_srv0 = 0, cpu_proc0 = 0;
  int64_t tokens0 = 0;
  long rss_steady = 0;
  epoll_event events[512];
  while (true) {
    const double now = Now();
    // Ramp: open connections evenly over ramp_s so the streams' phases spread out.
    int due = std::min(streams, static_cast<int>((now - start) / ramp_s * streams) + 1);
    while (opened < due) {
      int fd = socket(use_uds ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
      const int rc = use_uds ? connect(fd, reinterpret_cast<sockaddr*>(&uaddr), sizeof uaddr)
                             : connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      if (fd < 0 || rc != 0 ||
          send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        ++failed;
        if (fd >= 0) close(fd);
      } else {
        fcntl(fd, F_SETFL, O_NONBLOCK);
        epoll_event ev{.events = EPOLLIN, .data = {.fd = fd}};
        epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        fds.push_back(fd);
      }
      ++opened;
    }
    if (measure_start == 0 && now - start >= ramp_s + 1) {
      measure_start = now;
      cpu_srv0 = ServerThreadCpu();
      cpu_proc0 = ProcSeconds("/proc/self/stat");
      tokens0 = tokens_now();
      if (floor) floor_sender.ResetLateness();
      else server.ResetLateness();
      rss_steady = RssKb();
    }
    if (now - start >= ramp_s + 1 + seconds) break;
    if (client_poll_ms > 0) {
      // Lazy reader: drain whatever is ready, then sleep. While it sleeps nobody waits on
      // the epoll set, so the server's send() does not have to wake a thread.
      int n;
      do {
        n = epoll_wait(ep, events, 512, 0);
        for (int i = 0; i < n; ++i) {
          ssize_t r = recv(events[i].data.fd, buf.data(), buf.size(), 0);
          if (r > 0) bytes += static_cast<uint64_t>(r);
        }
      } while (n == 512);
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(client_poll_ms * 1000)));
      continue;
    }
    int n = epoll_wait(ep, events, 512, 5);
    for (int i = 0; i < n; ++i) {
      ssize_t r;
      while ((r = recv(events[i].data.fd, buf.data(), buf.size(), 0)) > 0) bytes += static_cast<uint64_t>(r);
    }
  }
  const double t_end = Now();
  const double cpu_srv = ServerThreadCpu() - cpu_srv0, cpu_proc = ProcSeconds("/proc/self/stat") - cpu_proc0;
  const int64_t tokens = tokens_now() - tokens0;
  const long rss_now = std::max(RssKb(), rss_steady);
  serve::ServerSnapshot snap = floor ? serve::ServerSnapshot{} : server.Snapshot();
  floor_sender.Stop();
  if (floor) {
    std::vector<Nanos> late = floor_sender.Lateness();
    std::sort(late.begin(), late.end());
    std::vector<double> ms(late.begin(), late.end());
    snap.lateness_samples = static_cast<int64_t>(late.size());
    snap.lateness_p50 = static_cast<Nanos>(stats::PercentileSorted(ms, 50));
    snap.lateness_p99 = static_cast<Nanos>(stats::PercentileSorted(ms, 99));
    snap.lateness_max = late.empty() ? 0 : late.back();
  }
  for (int fd : fds) close(fd);
  server.Stop();

  std::printf("serve_bench (%s): %d streams (%d failed to open), %.0f tok/s per stream target, %.1f s measured\n",
              floor ? "floor: bare paced send(), no HTTP, no engine" : use_uds ? "infereng serve, Unix socket" : "infereng serve, TCP", static_cast<int>(fds.size()), failed, 1000 / itl_ms, t_end - measure_start);
  if (!floor) std::printf("  chunks per token: %.3f (merging of late tokens %s)\n", tokens > 0 ? static_cast<double>(snap.lateness_samples) / static_cast<double>(tokens) : 0, merge ? "on" : "off");
  std::printf("  tokens written in window: %lld (%.0f tok/s; target %.0f)\n", static_cast<long long>(tokens),
              static_cast<double>(tokens) / (t_end - measure_start), 1000 / itl_ms * static_cast<double>(fds.size()));
  std::printf("  emission lateness (measured window, %lld chunks): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
              static_cast<long long>(snap.lateness_samples), NanosToMillis(snap.lateness_p50),
              NanosToMillis(snap.lateness_p99), NanosToMillis(snap.lateness_max));
  std::printf("  memory: RSS %ld KiB before, %ld KiB with streams -> %.1f KiB per stream (server + client)\n", rss0,
              rss_now, static_cast<double>(rss_now - rss0) / std::max<std::size_t>(1, fds.size()));
  std::printf("  CPU per 1M tokens: server thread %.2f s, whole process %.2f s (client included)\n",
              tokens > 0 ? cpu_srv / static_cast<double>(tokens) * 1e6 : 0,
              tokens > 0 ? cpu_proc / static_cast<double>(tokens) * 1e6 : 0);
  std::printf("  client received %.1f MB\n", static_cast<double>(bytes) / 1e6);
  return snap.lateness_p99 < 2 * kNanosPerMilli ? 0 : 1;
}
