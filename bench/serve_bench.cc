// serve_bench: how many concurrent streams `infereng serve` sustains while writing every
// token on time. Starts serve::Server in-process with PacedEngine (one token every
// --itl-ms per stream, streams independently phased), opens --streams connections with a
// raw epoll client in this process, and runs for --seconds. Reports:
//   - emission lateness (socket write time - scheduled time) P50/P99/max, from the server,
//   - memory per stream (RSS growth / streams; includes this client's tiny buffers),
//   - CPU per 1M tokens of the server thread ("infereng-serve", from /proc) and of the
//     whole process (server + client + trace thread).
// Usage: serve_bench [--streams 5000] [--itl-ms 20] [--seconds 10] [--ramp-s 2]
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  int streams = 5000;
  double itl_ms = 20, seconds = 10, ramp_s = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    double v = std::atof(argv[i + 1]);
    if (k == "--streams") streams = static_cast<int>(v);
    else if (k == "--itl-ms") itl_ms = v;
    else if (k == "--seconds") seconds = v;
    else if (k == "--ramp-s") ramp_s = v;
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
  serve::PacedEngineOptions po;
  po.ttft_base = 20 * kNanosPerMilli;
  po.prefill_per_token = 0;
  po.itl = static_cast<Nanos>(itl_ms * 1e6);
  po.max_running = streams + 1;
  serve::Server server(so, std::make_unique<serve::PacedEngine>(po));
  auto port = server.Start();
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().ToString().c_str());
    return 3;
  }
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
      int fd = socket(AF_INET, SOCK_STREAM, 0);
      if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
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
      tokens0 = server.Snapshot().tokens_emitted;
      rss_steady = RssKb();
    }
    if (now - start >= ramp_s + 1 + seconds) break;
    int n = epoll_wait(ep, events, 512, 5);
    for (int i = 0; i < n; ++i) {
      ssize_t r;
      while ((r = recv(events[i].data.fd, buf.data(), buf.size(), 0)) > 0) bytes += static_cast<uint64_t>(r);
    }
  }
  const double t_end = Now();
  const double cpu_srv = ServerThreadCpu() - cpu_srv0, cpu_proc = ProcSeconds("/proc/self/stat") - cpu_proc0;
  serve::ServerSnapshot snap = server.Snapshot();
  const int64_t tokens = snap.tokens_emitted - tokens0;
  const long rss_now = std::max(RssKb(), rss_steady);
  for (int fd : fds) close(fd);
  server.Stop();

  std::printf("serve_bench: %d streams (%d failed to open), %.0f tok/s per stream target, %.1f s measured\n",
              static_cast<int>(fds.size()), failed, 1000 / itl_ms, t_end - measure_start);
  std::printf("  tokens written in window: %lld (%.0f tok/s; target %.0f)\n", static_cast<long long>(tokens),
              static_cast<double>(tokens) / (t_end - measure_start), 1000 / itl_ms * static_cast<double>(fds.size()));
  std::printf("  emission lateness (whole run, %lld chunks): p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
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
