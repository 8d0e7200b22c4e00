// socket_send_bench: what one small write costs the kernel on this machine, loopback TCP
// against a Unix-domain stream socket — the floor under `infereng serve`, which writes one
// chunk per token per stream. N connected pairs; each round sends one --bytes message on
// every pair (round robin, like N streams), then reads every pair. Reports CPU time per
// send and per recv (the recv side includes the ACKs TCP sends back). No HTTP, no engine.
// Usage: socket_send_bench [--pairs 5000] [--rounds 40] [--bytes 208]
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Pairs {
  std::vector<int> senders, readers;
  ~Pairs() {
    for (int fd : senders) close(fd);
    for (int fd : readers) close(fd);
  }
};

bool MakeTcp(int n, Pairs* p) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || getsockname(l, reinterpret_cast<sockaddr*>(&a), &al) != 0 ||
      listen(l, 4096) != 0) {
    return false;
  }
  for (int i = 0; i < n; ++i) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
    int s = accept(l, nullptr, nullptr);
    if (s < 0) return false;
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as serve
    fcntl(c, F_SETFL, O_NONBLOCK);
    p->senders.push_back(s);
    p->readers.push_back(c);
  }
  close(l);
  return true;
}

bool MakeUnix(int n, Pairs* p) {
  for (int i = 0; i < n; ++i) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return false;
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    p->senders.push_back(sv[0]);
    p->readers.push_back(sv[1]);
  }
  return true;
}

void Measure(const char* name, const Pairs& p, int rounds, int bytes) {
  std::string msg(static_cast<std::size_t>(bytes), 'x');
  std::vector<char> buf(1 << 16);
  double send_cpu = 0, recv_cpu = 0;
  long sends = 0;
  for (int r = 0; r < rounds; ++r) {
    double c0 = CpuSeconds();
    for (int fd : p.senders) sends += send(fd, msg.data(), msg.size(), MSG_NOSIGNAL | MSG_DONTWAIT) > 0;
    double c1 = CpuSeconds();
    for (int fd : p.readers) (void)!recv(fd, buf.data(), buf.size(), 0);
    recv_cpu += CpuSeconds() - c1;
    send_cpu += c1 - c0;
  }
  std::printf("  %-12s %8ld sends: %.2f us CPU per send, %.2f us per recv\n", name, sends,
              send_cpu / static_cast<double>(sends) * 1e6, recv_cpu / static_cast<double>(sends) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  int pairs = 5000, rounds = 40, bytes = 208;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    int v = std::atoi(argv[i + 1]);
    if (k == "--pairs") pairs = v;
    else if (k == "--rounds") rounds = v;
    else if (k == "--bytes") bytes = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  std::printf("socket_send_bench: %d pairs x %d rounds, %d-byte messages\n", pairs, rounds, bytes);
  {
    Pairs p;
    if (!MakeTcp(pairs, &p)) {
      std::fprintf(stderr, "cannot set up %d TCP pairs (fd limit %lu)\n", pairs, static_cast<unsigned long>(rl.rlim_cur));
      return 3;
    }
    Measure("loopback TCP", p, rounds, bytes);
  }
  {
    Pairs p;
    if (!MakeUnix(pairs, &p)) {
      std::fprintf(stderr, "cannot set up %d Unix socket pairs\n", pairs);
      return 3;
    }
    Measure("Unix socket", p, rounds, bytes);
  }
  return 0;
}
