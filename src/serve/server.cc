// serve::Server lifecycle and the engine drive: wall clock -> engine time, one steady_timer
// armed at the engine's next event, and the EngineSink that turns engine events into
// emissions (emitter.cc). Everything runs on the one server thread.
#include "serve/server.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <utility>

#include "serve/server_internal.h"

namespace infereng::serve {

Nanos WallNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Server::Impl::Impl(ServerOptions o, std::unique_ptr<EnginePort> e) : options(std::move(o)), engine(std::move(e)) {
  if (options.speedup <= 0) options.speedup = 1;
  if (options.faults.stream_interval < 1) options.faults.stream_interval = 1;
  if ((engine->Vision() || engine->Audio()) && options.max_body_bytes == kDefaultMaxBodyBytes) {
    options.max_body_bytes = kVisionMaxBodyBytes;
  }
  scratch.reserve(4096);
}

Nanos Server::Impl::Sync() {
  if (advancing) return advance_t;
  Nanos t = EngineNow(WallNow());
  if (t < advance_t) t = advance_t;
  advancing = true;
  advance_t = t;
  engine->AdvanceTo(t, *this);
  advancing = false;
  if (!pending_cancels.empty()) {
    std::vector<uint64_t> cancels;
    cancels.swap(pending_cancels);
    for (uint64_t id : cancels) engine->Cancel(id, t);
  }
  FlushEmits();
  return t;
}

void Server::Impl::QueueEmit(ActiveRequest& r) {
  if (!advancing || !options.merge_late_tokens) return Emit(r);
  if (r.emit_queued) return;
  r.emit_queued = true;
  emit_queue.push_back(r.seq);
}

void Server::Impl::FlushEmits() {
  // Writing may re-enter Sync (a failed stream cancels in the engine, which advances it):
  // requests queued meanwhile wait for the next round of this loop, not a nested flush.
  // Requests are looked up by id, since a write may end (and free) one.
  if (!emit_batch.empty()) return;
  while (!emit_queue.empty()) {
    emit_batch.swap(emit_queue);
    for (uint64_t id : emit_batch) {
      auto it = active.find(id);
      if (it == active.end()) continue;
      it->second->emit_queued = false;
      Emit(*it->second);
    }
    emit_batch.clear();
  }
}

void Server::Impl::ArmEngineTimer() {
  if (stopping) return;
  auto next = engine->NextEventTime();
  if (!next) return;
  Nanos wall = WallOf(*next);
  if (wall <= WallNow()) {
    // Already due (the loop below ran out of its spin budget, or fell behind): go round
    // the scheduler, which polls the sockets on the way, without a timer syscall.
    if (!engine_posted) {
      engine_posted = true;
      asio::post(ioc, [this] {
        engine_posted = false;
        if (!stopping) OnEngineTimer();
      });
    }
    return;
  }
  if (engine_armed && wall >= engine_armed_at) return;
  engine_armed = true;
  engine_armed_at = wall;
  engine_timer.expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(wall)));
  engine_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;  // re-armed earlier, or stopping
    engine_armed = false;
    OnEngineTimer();
  });
}

void Server::Impl::OnEngineTimer() {
  // When the next event is only microseconds away (many streams), wait for it here rather
  // than through the reactor: arming the timer (timerfd_settime) and sleeping in epoll
  // cost more than such a gap in this VM. Bounded, so sockets (new requests, disconnects)
  // are still polled at least every kMaxSpin. A 50 µs spin gap measured the same
  // throughput and tail at 5,000 streams, and a spinning thread is always runnable: it
  // takes the CPU a client on the same 2 cores needs, so the gap stays short.
  constexpr Nanos kSpinGap = 5 * kNanosPerMicro, kMaxSpin = 200 * kNanosPerMicro;
  const Nanos spin_end = WallNow() + kMaxSpin;
  for (;;) {
    Sync();
    auto next = engine->NextEventTime();
    if (!next || stopping) break;
    const Nanos due = WallOf(*next), now = WallNow();
    if (due - now > kSpinGap || now >= spin_end) break;
    while (WallNow() < due) {
    }
  }
  ArmEngineTimer();
}

void Server::Impl::ArmSweep() {
  if (sweep_armed || stopping) return;
  sweep_armed = true;
  sweep_timer.expires_after(std::chrono::milliseconds(10));
  sweep_timer.async_wait([this](boost::system::error_code ec) {
    sweep_armed = false;
    if (ec) return;
    const Nanos now = WallNow();
    std::vector<uint64_t> expired;
    for (auto& [seq, r] : active) {
      if (r->deadline != 0 && now >= r->deadline && !r->ended) expired.push_back(seq);
    }
    for (uint64_t seq : expired) {
      auto it = active.find(seq);
      if (it == active.end()) continue;
      ActiveRequest& r = *it->second;
      ++snap.requests_aborted;
      ++metrics.counters.aborted;
      ++metrics.counters.success_by_reason["abort"];
      if (r.stream) {
        FailStream(r, "request timed out");
      } else {
        r.ended = true;
        ServerConnection& c = *r.conn;
        Unregister(r);
        CancelInEngine(seq);
        c.SendError(MakeApiError(504, "request timed out", "timeout_error"));
        c.FinishActive();
      }
    }
    if (!active.empty()) ArmSweep();
  });
}

void Server::Impl::Accept() {
  peer.emplace(ioc);
  auto on_accept = [this](boost::system::error_code ec) {
    if (stopping) return;
    if (!ec) {
      if (connections.size() >= options.max_connections) {
        boost::system::error_code ignored;
        peer->close(ignored);
      } else {
        std::make_shared<ServerConnection>(*this, std::move(*peer))->Start();
      }
    }
    Accept();
  };
  if (options.unix_socket.empty()) {
    acceptor.async_accept(*peer, on_accept);
  } else {
    unix_acceptor.async_accept(*peer, on_accept);
  }
}

void Server::Impl::Shutdown() {
  stopping = true;
  boost::system::error_code ec;
  acceptor.close(ec);
  if (unix_acceptor.is_open()) {
    unix_acceptor.close(ec);
    // Only our own socket file: never one another process put at the path since.
    struct stat st {};
    if (::lstat(options.unix_socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
        std::pair<dev_t, ino_t>{st.st_dev, st.st_ino} == unix_socket_id) {
      ::unlink(options.unix_socket.c_str());
    }
  }
  engine_timer.cancel();
  sweep_timer.cancel();
  std::vector<ServerConnection*> conns(connections.begin(), connections.end());
  for (ServerConnection* c : conns) c->Close();
}

void Server::Impl::OnScheduled(uint64_t id, Nanos t) {
  auto it = active.find(id);
  if (it == active.end()) return;
  if (it->second->t_sched_e < 0) it->second->t_sched_e = t;
  metrics.queue.Observe(NanosToSeconds(WallOf(t) - it->second->t_arrival));
}

void Server::Impl::OnTokens(uint64_t id, Nanos t, int32_t count, int32_t cached) {
  // Counted for every sequence the engine runs, including one whose client left and that
  // keeps generating for nobody (--no-abort-on-disconnect): the engine did the work.
  metrics.counters.generation_tokens += count;
  auto it = active.find(id);
  if (it == active.end()) return;
  ActiveRequest& r = *it->second;
  const Nanos wall = WallOf(t);
  const Nanos made = t - engine->OutboundDelay();  // the engine's own time of the token
  if (!r.first_seen) {
    r.first_seen = true;
    r.t_first_e = made;
    r.cached = cached;
    metrics.ttft.Observe(NanosToSeconds(wall - r.t_arrival));
    metrics.counters.prompt_tokens += r.prompt_tokens;
  } else {
    metrics.itl.Observe(NanosToSeconds(static_cast<Nanos>(static_cast<double>(made - r.last_token_engine_t) / options.speedup)));
  }
  r.last_token_engine_t = made;
  if (r.available <= r.written) r.oldest_sched = wall;
  r.available = std::min(r.output_tokens, r.available + count);
  r.last_sched = wall;
  QueueEmit(r);
}

void Server::Impl::OnFinished(uint64_t id, Nanos t, EngineFinish reason) {
  auto it = active.find(id);
  if (it == active.end()) return;
  ActiveRequest& r = *it->second;
  r.engine_done = true;
  if (reason == EngineFinish::kLength) {
    if (r.available <= r.written) r.oldest_sched = WallOf(t);
    r.available = r.output_tokens;  // defensive: the engine said it produced them all
    r.last_sched = WallOf(t);
    return QueueEmit(r);
  }
  ++metrics.counters.success_by_reason["abort"];
  FailStream(r, reason == EngineFinish::kTimeout ? "the engine timed the request out"
                                                 : "the engine could not serve the request");
}

// ---------------------------------------------------------------------------------------

Server::Server(ServerOptions options, std::unique_ptr<EnginePort> engine)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(engine))) {}

Server::~Server() { Stop(); }

namespace {

// The address to listen on: an IP literal as written, or a host name resolved ("localhost"),
// preferring an IPv4 address (what clients of 127.0.0.1-style URLs reach).
Result<asio::ip::address> ListenAddress(asio::io_context& ioc, const std::string& host) {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  if (!ec) return addr;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(host, "", ec);
  if (ec || results.empty()) {
    return Status::InvalidArgument("--host: \"" + host + "\" is neither an IP address nor a name that resolves" +
                                   (ec ? " (" + ec.message() + ")" : std::string()));
  }
  for (const auto& r : results) {
    if (r.endpoint().address().is_v4()) return r.endpoint().address();
  }
  return results.begin()->endpoint().address();
}

}  // namespace

Status Server::Impl::ListenTcp() {
  boost::system::error_code ec;
  auto addr = ListenAddress(ioc, options.host);
  if (!addr.ok()) return addr.status();
  tcp::endpoint ep(*addr, options.port);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("cannot listen on " + options.host + ":" + std::to_string(options.port) + ": " +
                               ec.message());
  }
  bound_port = acceptor.local_endpoint().port();
  return Status::Ok();
}

Status Server::Impl::ListenUnix() {
  const std::string& path = options.unix_socket;
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Status::InvalidArgument("--uds: \"" + path + "\" is longer than a Unix socket path may be (" +
                                   std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes)");
  }
  // A socket file left by a server that is gone (nobody accepts on it) is replaced; a live
  // server's socket is refused, as TCP refuses a port in use; any other file is not touched.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::InvalidArgument("--uds: \"" + path + "\" exists and is not a socket; not replacing it");
    }
    INFERENG_RETURN_IF_ERROR(CheckStaleSocket(path));
    ::unlink(path.c_str());
  }
  boost::system::error_code ec;
  unix_stream::endpoint ep(path);
  unix_acceptor.open(ep.protocol(), ec);
  if (!ec) unix_acceptor.bind(ep, ec);
  if (!ec) unix_acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::Unavailable("cannot listen on unix:" + path + ": " + ec.message());
  // Remember which file is ours: Shutdown removes it only if it is still this one.
  if (::lstat(path.c_str(), &st) == 0) unix_socket_id = {st.st_dev, st.st_ino};
  bound_port = 0;
  return Status::Ok();
}

// Connects to the socket at `path`: refused (nobody listens) means stale, ok to replace.
Status Server::Impl::CheckStaleSocket(const std::string& path) {
  // Non-blocking: a live server with a full backlog answers EAGAIN instead of blocking us.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IoError("--uds: socket(): " + std::string(std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);  // length checked by the caller
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  ::close(fd);
  if (rc == 0 || err == EAGAIN) {  // EAGAIN: alive, its backlog full
    return Status::Unavailable("cannot listen on unix:" + path +
                               ": Address already in use (a server is answering on it; stop it or choose another path)");
  }
  if (err == ECONNREFUSED) return Status::Ok();
  return Status::Unavailable("cannot listen on unix:" + path + ": cannot tell whether the socket there is in use (" +
                             std::strerror(err) + "); not replacing it");
}

Result<uint16_t> Server::Start() {
  Impl& s = *impl_;
  if (s.thread.joinable()) return Status::FailedPrecondition("server already started");
  if (!s.engine) return Status::InvalidArgument("server: no engine");
  if (!s.options.unix_socket.empty()) {
    INFERENG_RETURN_IF_ERROR(s.ListenUnix());
  } else {
    INFERENG_RETURN_IF_ERROR(s.ListenTcp());
  }
  if (!s.options.trace_emissions_path.empty()) {
    INFERENG_ASSIGN_OR_RETURN(s.trace, EmissionTrace::Open(s.options.trace_emissions_path, s.options.trace_capacity));
  }
  EngineStats st = s.engine->Stats();
  s.max_model_len = s.options.max_model_len > 0 ? s.options.max_model_len
                    : st.max_model_len > 0       ? st.max_model_len
                                                 : 131072;
  s.t0 = WallNow();
  s.cold_until = s.t0 + s.options.faults.cold_start;
  s.created_unix = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  s.Accept();
  s.thread = std::thread([&s] {
    pthread_setname_np(pthread_self(), "infereng-serve");  // benches find its CPU time by name
    s.ioc.run();
  });
  return s.bound_port;
}

void Server::Stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  asio::post(s.ioc, [&s] { s.Shutdown(); });
  s.thread.join();
  if (s.trace) (void)s.trace->Close();
}

void Server::Wait() {
  Impl& s = *impl_;
  if (s.thread.joinable()) s.thread.join();
}

uint16_t Server::port() const { return impl_->bound_port; }

ServerSnapshot Server::Snapshot() const {
  Impl& s = *impl_;
  auto fill = [&s] {
    ServerSnapshot out = s.snap;
    out.lateness_samples = s.metrics.lateness_fine.count();
    out.lateness_p50 = s.metrics.lateness_fine.Percentile(50);
    out.lateness_p99 = s.metrics.lateness_fine.Percentile(99);
    out.lateness_max = s.metrics.lateness_fine.max();
    return out;
  };
  if (!s.thread.joinable() || s.ioc.stopped()) return fill();
  auto p = std::make_shared<std::promise<ServerSnapshot>>();  // outlives a timed-out wait
  auto f = p->get_future();
  asio::post(s.ioc, [fill, p] { p->set_value(fill()); });
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) return s.snap;
  return f.get();
}

void Server::ResetLateness() {
  Impl& s = *impl_;
  if (!s.thread.joinable() || s.ioc.stopped()) return s.metrics.lateness_fine.Clear();
  auto p = std::make_shared<std::promise<void>>();  // outlives a timed-out wait
  auto f = p->get_future();
  asio::post(s.ioc, [&s, p] {
    s.metrics.lateness_fine.Clear();
    p->set_value();
  });
  f.wait_for(std::chrono::seconds(5));
}

}  // namespace infereng::serve
