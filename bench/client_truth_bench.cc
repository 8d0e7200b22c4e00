// client_truth_bench: the client's TTFT and ITL against a server whose write times are the truth.
//
// Why a separate program from client_accuracy_bench: that one joins chunk arrival to the
// embedded engine's emission trace at 100 ms ITL and ramps its connects in; it never saw the
// client saturating (issue 17). Here a ground-truth SSE server (an epoll loop on its own
// thread, nothing else in it) writes every token on an exact schedule — first token TTFT
// after the request's last byte was read, then one every ITL (default 50 ms / 20 ms =
// 50 tokens/s per stream) — and logs when each write() returned, on the same
// CLOCK_MONOTONIC the client stamps with. The client is the one `infereng bench` runs:
// LoadRunner (closed loop) + HttpTransport (HttpClient, RecordingHandler) + RecordPipeline
// writing requests.jsonl. Per point it reports
//   TTFT error = client TTFT (t_send -> first chunk) - server TTFT (request read -> first write)
//   ITL error  = client gap between chunks - server gap between the matching writes
//   stamp      = client chunk stamp - server write (what the client adds per token)
// and the saturation verdict `infereng bench` would give (job/client_saturation.h: kernel-
// stamp delay P99, busiest io thread's CPU share, steady-phase lag P99), checked against
// the truth: flagged exactly where the TTFT or ITL error P99 exceeds 1 ms ("right"), else
// "WRONG".
// as |error| P50 / P99 / max, the server's own lateness against its schedule (so an
// overloaded server is not mistaken for a slow client), and client CPU (process CPU minus
// the server thread's) per 1M tokens. Connects happen inside the measured window (`cold`)
// or before it (`warm`: HttpTransport::Preconnect, as `infereng bench` does by default).
//
//   build/release/client_truth_bench [--streams 1,100,500,1000,2000] [--seconds 4]
//       [--tokens 64] [--ttft-ms 50] [--itl-ms 20] [--ramp-s 1] [--connect cold,warm]
//       [--endpoint chat|completions] [--io-threads N] [--server-cpu C]
//   --io-threads: the client's io threads (default: as `infereng bench` picks from the cores);
//   --server-cpu: pin the server thread to CPU C and the client to every other CPU (on a
//   machine with cores to spare, so the reference's own lateness does not move the truth).
//   build/release/client_truth_bench --parse-path 2000   (the per-token path alone, no sockets:
//       the fast chunk path vs the full parse, CPU per 1M tokens, ratio from one run)
// A quick run (--streams 100,1000 --seconds 3 --connect warm) takes ~15 s. Server and client
// share the machine's cores: both costs are in the numbers; run at nice 19 on a shared box.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/http_transport.h"
#include "bench/load_runner.h"
#include "bench/record_pipeline.h"
#include "bench/request_body.h"
#include "client/fast_chunk.h"
#include "core/stats.h"
#include "job/client_saturation.h"
#include "metrics/records_io.h"
#include "truth_server.h"

using namespace infereng;
using truth::CpuOf;
using truth::MakeEvents;
using truth::Now;
using truth::StreamLog;
using truth::TruthEvents;
using truth::TruthOptions;
using truth::TruthServer;

namespace {

// ---- the run ------------------------------------------------------------------------------

struct Args {
  std::vector<int> streams = {1, 100, 500, 1000, 2000};
  std::vector<bool> warm = {false, true};
  double seconds = 4;
  double ramp_s = 1;
  int parse_path = 0;  // > 0: only the parse-path measurement, over this many requests
  int io_threads = bench::DefaultIoThreads(std::thread::hardware_concurrency());
  int server_cpu = -1;  // >= 0: the server thread on this CPU, the client on the others
  TruthOptions truth;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "client_truth_bench: %s\n", why.c_str());
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (i + 1 >= argc) Usage("flag " + k + " needs a value");
    std::string v = argv[i + 1];
    try {
      if (k == "--streams") {
        a.streams.clear();
        std::stringstream ss(v);
        for (std::string x; std::getline(ss, x, ',');) a.streams.push_back(std::stoi(x));
      } else if (k == "--connect") {
        a.warm.clear();
        std::stringstream ss(v);
        for (std::string x; std::getline(ss, x, ',');) {
          if (x != "cold" && x != "warm") Usage("--connect takes cold, warm or cold,warm");
          a.warm.push_back(x == "warm");
        }
      } else if (k == "--seconds") {
        a.seconds = std::stod(v);
      } else if (k == "--parse-path") {
        a.parse_path = std::stoi(v);
      } else if (k == "--ramp-s") {
        a.ramp_s = std::stod(v);
      } else if (k == "--tokens") {
        a.truth.tokens = std::stoi(v);
      } else if (k == "--ttft-ms") {
        a.truth.ttft = MillisToNanos(std::stod(v));
      } else if (k == "--itl-ms") {
        a.truth.itl = MillisToNanos(std::stod(v));
      } else if (k == "--io-threads") {
        a.io_threads = std::stoi(v);
      } else if (k == "--server-cpu") {
        a.server_cpu = std::stoi(v);
        if (a.server_cpu < 0 || a.server_cpu >= static_cast<int>(std::thread::hardware_concurrency())) {
          Usage("--server-cpu " + v + ": not a CPU of this machine");
        }
      } else if (k == "--endpoint") {
        if (v != "chat" && v != "completions") Usage("--endpoint takes chat or completions");
        a.truth.chat = v == "chat";
      } else {
        Usage("unknown flag " + k);
      }
    } catch (const std::exception&) {
      Usage("bad value for " + k + ": " + v);
    }
  }
  if (a.streams.empty() || a.warm.empty() || a.truth.tokens < 2 || a.seconds <= 0) Usage("nothing to run");
  if (a.io_threads < 1) Usage("--io-threads takes at least 1");
  return a;
}

struct Errors {
  std::vector<double> ttft_us, itl_us, stamp_us, late_us;
  int64_t tokens = 0, requests = 0, failed = 0, unmatched = 0;
};

// Joins the client's records to the server's logs by x-request-id.
Errors Join(const std::vector<metrics::RequestRecord>& records, const TruthServer& server) {
  Errors e;
  for (const metrics::RequestRecord& r : records) {
    if (!r.ok()) {
      ++e.failed;
      continue;
    }
    ++e.requests;
    e.tokens += r.OutputTokens();
    auto it = server.logs().find(std::to_string(r.id));
    if (it == server.logs().end() || it->second.writes.size() != r.chunks.size()) {
      ++e.unmatched;
      continue;
    }
    const StreamLog& log = it->second;
    auto us = [](Nanos ns) { return std::abs(static_cast<double>(ns)) / 1e3; };
    e.ttft_us.push_back(us((r.chunks[0].t - r.t_send) - (log.writes[0] - log.t_recv)));
    for (size_t i = 0; i < r.chunks.size(); ++i) {
      e.stamp_us.push_back(us(r.chunks[i].t - log.writes[i]));
      e.late_us.push_back(us(log.lateness[i]));
      if (i > 0) e.itl_us.push_back(us((r.chunks[i].t - r.chunks[i - 1].t) - (log.writes[i] - log.writes[i - 1])));
    }
  }
  return e;
}

std::string Ms(const std::vector<double>& us) {
  stats::SampleStats s = stats::Summarize(us);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%7.2f %7.2f %7.2f", s.p50 / 1e3, s.p99 / 1e3, s.max / 1e3);
  return buf;
}

int RunOne(const Args& a, int n, bool warm) {
  TruthServer server(a.truth);
  if (Status s = client::EnsureFileDescriptors(static_cast<size_t>(n) * 2 + 256); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 3;
  }
  Result<uint16_t> port = server.Start();
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().ToString().c_str());
    return 3;
  }
  if (a.server_cpu >= 0 && !server.PinTo(a.server_cpu)) {
    std::fprintf(stderr, "client_truth_bench: cannot pin the server thread to CPU %d\n", a.server_cpu);
    return 3;
  }
  const auto endpoint = a.truth.chat ? bench::ApiEndpoint::kChat : bench::ApiEndpoint::kCompletions;
  bench::HttpTransportOptions to;
  to.client.base_url = "http://127.0.0.1:" + std::to_string(*port);
  to.client.expected_concurrency = static_cast<size_t>(n);
  to.endpoint = endpoint;
  to.io_threads = a.io_threads;
  auto transport = bench::HttpTransport::Create(to);
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 3;
  }
  bench::BodyOptions bo;
  bo.model = "truth";
  bo.endpoint = endpoint;
  bo.caps = bench::CapsForEngine("vllm");
  const std::string body = bench::BuildRequestBody(bo, {"hello world", nullptr}, a.truth.tokens);
  const std::string path = a.truth.chat ? "/v1/chat/completions" : "/v1/completions";

  const std::string jsonl = (std::filesystem::temp_directory_path() /
                             ("client_truth_" + std::to_string(getpid()) + ".jsonl")).string();
  Nanos connect_s = 0;
  if (warm) {
    client::PreconnectResult pc = (*transport)->Preconnect(static_cast<size_t>(n));
    if (pc.failed > 0) std::fprintf(stderr, "preconnect: %zu failed: %s\n", pc.failed, pc.first_error.c_str());
    connect_s = pc.elapsed;
  }
  const Nanos cpu0 = CpuOf(CLOCK_PROCESS_CPUTIME_ID), io0 = (*transport)->IoThreadCpu(), server0 = server.CpuNow();
  (void)(*transport)->TakeRxStampStats();  // the preconnect's are not measured
  const std::vector<Nanos> io_cpu0 = (*transport)->IoThreadCpus();
  const Nanos t0 = Now();
  auto writer = metrics::RecordWriter::Open(jsonl, t0);
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.status().ToString().c_str());
    return 3;
  }
  bench::PipelineOptions po;
  po.writer = writer->get();
  po.keep_in_memory = true;
  bench::RecordPipeline pipeline(std::move(po));
  uint64_t next = 0;
  bench::LoadRunner runner(SteadyClock::Instance(), **transport);
  bench::RunnerOptions ro;
  ro.mode = bench::RunnerOptions::Mode::kClosedLoop;
  ro.t0 = t0;
  ro.concurrency = n;
  ro.stop_after = SecondsToNanos(a.seconds);
  ro.ramp = SecondsToNanos(std::min(a.ramp_s, a.seconds));
  ro.drain_timeout = 60 * kNanosPerSecond;
  auto st = runner.Run(
      ro, [&]() -> std::optional<workload::RequestSpec> {
        workload::RequestSpec spec;
        spec.index = next++;
        return spec;
      },
      [&](const workload::RequestSpec& spec) -> Result<bench::PreparedRequest> {
        bench::PreparedRequest r;
        r.record.id = spec.index;
        r.record.output_tokens_target = a.truth.tokens;
        r.path = path;
        r.body = body;
        r.request_id = std::to_string(spec.index);
        return r;
      },
      [&](bench::Finished&& f) { pipeline.Push(std::move(f)); });
  const Status closed = pipeline.Close();
  const Nanos t1 = Now();
  const Nanos io_cpu = (*transport)->IoThreadCpu() - io0;
  // The verdict `infereng bench` would give this point (job/client_saturation.h): the
  // kernel-stamp delay, the busiest io thread's CPU share and the steady phase's lag.
  const client::RxStampStats stamps = (*transport)->TakeRxStampStats();
  const std::optional<double> io_share = job::BusiestIoCpuShare(io_cpu0, (*transport)->IoThreadCpus(), t1 - t0);
  transport->reset();
  server.Stop();  // its thread's CPU is known from here on
  const Nanos client_cpu = CpuOf(CLOCK_PROCESS_CPUTIME_ID) - cpu0 - (server.cpu() - server0);
  (void)(*writer)->Close();
  std::filesystem::remove(jsonl);
  if (!st.ok() || !closed.ok()) {
    std::fprintf(stderr, "%s\n", (!st.ok() ? st.status() : closed).ToString().c_str());
    return 3;
  }
  job::SteadyLagCollector lag;
  Nanos last_sched = t0;
  for (const metrics::RequestRecord& r : pipeline.Records()) {
    lag.Add(r.t_sched, r.t_send, r.t_end);
    last_sched = std::max(last_sched, r.t_sched);
  }
  std::vector<double> gaps_ms;  // the measured ITL, as the summary's itl_ms
  for (const metrics::RequestRecord& r : pipeline.Records()) {
    for (size_t i = 1; i < r.chunks.size(); ++i) gaps_ms.push_back(NanosToMillis(r.chunks[i].t - r.chunks[i - 1].t));
  }
  const std::optional<double> itl_p50 =
      gaps_ms.empty() ? std::nullopt : std::optional<double>(stats::PercentileInPlace(gaps_ms, 50));
  const job::ClientSaturation verdict =
      job::JudgeSaturation(stamps, io_share, lag.SteadyLagMs(t0 + ro.ramp, last_sched), {}, itl_p50);
  Errors e = Join(pipeline.Records(), server);
  const double per_m = e.tokens > 0 ? 1e6 / static_cast<double>(e.tokens) : 0;
  // The flag against the truth: did the client's own error (TTFT or ITL against the
  // server's writes) exceed 1 ms at P99? With kernel receive stamps a late read no longer
  // moves a chunk's time, so the stamp delay alone is not the truth; these errors are.
  const double err_p99_us = std::max(e.ttft_us.empty() ? 0.0 : stats::Summarize(e.ttft_us).p99,
                                     e.itl_us.empty() ? 0.0 : stats::Summarize(e.itl_us).p99);
  const bool truth_late = err_p99_us > 1000;
  std::printf("%6d %-4s | %s | %s | %s | %7.2f | %6.2f %6.2f | %8.0f %8.0f | %6.0f | %lld/%lld/%lld/%lld"
              " | %5.2f %3.0f%% %6.2f | %-3s %-5s %s\n", n,
              warm ? "warm" : "cold", Ms(e.ttft_us).c_str(), Ms(e.itl_us).c_str(), Ms(e.stamp_us).c_str(),
              stats::Summarize(e.late_us).p99 / 1e3, NanosToSeconds(client_cpu) * per_m,
              NanosToSeconds(io_cpu) * per_m, static_cast<double>(e.tokens) / NanosToSeconds(t1 - t0),
              n * 1e9 / static_cast<double>(a.truth.itl), NanosToMillis(connect_s),
              static_cast<long long>(e.requests), static_cast<long long>(e.failed),
              static_cast<long long>(e.unmatched), static_cast<long long>(server.short_writes()),
              verdict.stamp_delay_ms.count > 0 ? verdict.stamp_delay_ms.p99 : -1.0,
              io_share ? 100 * *io_share : -1.0, verdict.steady_lag_ms.count > 0 ? verdict.steady_lag_ms.p99 : -1.0,
              verdict.client_shaped ? "YES" : "no", verdict.client_shaped == truth_late ? "right" : "WRONG",
              verdict.reasons.empty() ? "" : verdict.reasons.front().c_str());
  std::fflush(stdout);
  return 0;
}

// The per-token path after the socket — SSE framing, the chunk's meaning, token accounting —
// fed one read per event (as at >= 500 streams, where a read carries one event), without
// sockets or a server: CPU per 1M tokens through InterpretData (the fast path) and through
// InterpretDataFull (the full parse every chunk took before), alternated in one run so
// machine load hits both alike; the best of 3 rounds each.
int RunParsePath(const Args& a) {
  const TruthEvents ev = MakeEvents(a.truth);
  std::vector<std::string> reads(static_cast<size_t>(a.truth.tokens - 1), ev.token);
  reads.push_back(ev.last + ev.usage + ev.done);
  const client::Dialect dialect = a.truth.chat ? client::Dialect::kOpenAiChat : client::Dialect::kOpenAiCompletions;
  auto run = [&](bool fast) -> double {
    const Nanos c0 = CpuOf(CLOCK_THREAD_CPUTIME_ID);
    int64_t tokens = 0;
    for (int r = 0; r < a.parse_path; ++r) {
      client::SseParser parser;
      client::StreamTokenCounter counter;
      Nanos t = 0;
      for (const std::string& bytes : reads) {
        // As the client: each event handled in place, as views into the read's bytes.
        const Status framed = parser.Feed(bytes, [&](const client::SseEventView& e) {
          Result<client::ChunkInfo> info =
              fast ? client::InterpretEvent(dialect, e) : client::InterpretDataFull(dialect, e.data, e.is_error_field);
          if (!info.ok()) Usage(info.status().ToString());
          counter.On(++t, *info);
          return true;
        });
        if (!framed.ok()) Usage("SSE framing failed");
      }
      counter.Finish();
      for (const metrics::Chunk& c : counter.chunks()) tokens += c.tokens;
    }
    if (tokens != static_cast<int64_t>(a.parse_path) * a.truth.tokens) Usage("token count mismatch");
    return NanosToSeconds(CpuOf(CLOCK_THREAD_CPUTIME_ID) - c0) / static_cast<double>(tokens) * 1e6;
  };
  double best_fast = 1e9, best_full = 1e9;
  for (int round = 0; round < 3; ++round) {
    best_full = std::min(best_full, run(false));
    best_fast = std::min(best_fast, run(true));
  }
  std::printf("parse path (%s, %d requests x %d tokens, one event per read): full parse %.3f s/1M tokens, "
              "fast path %.3f s/1M tokens, ratio %.2fx\n",
              a.truth.chat ? "chat" : "completions", a.parse_path, a.truth.tokens, best_full, best_fast,
              best_full / best_fast);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  if (a.parse_path > 0) return RunParsePath(a);
  if (a.server_cpu >= 0) {
    // The client (this thread and the io threads it starts) on every CPU but the server's.
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < static_cast<int>(std::thread::hardware_concurrency()) && c < CPU_SETSIZE; ++c) {
      if (c != a.server_cpu) CPU_SET(c, &set);
    }
    if (CPU_COUNT(&set) == 0 || sched_setaffinity(0, sizeof set, &set) != 0) {
      std::fprintf(stderr, "client_truth_bench: cannot keep the client off CPU %d\n", a.server_cpu);
      return 3;
    }
  }
  std::printf("client: %d io thread(s)%s\n", a.io_threads,
              a.server_cpu >= 0 ? (", server thread pinned to CPU " + std::to_string(a.server_cpu) +
                                   ", client on the other CPUs").c_str()
                                : ", server and client unpinned");
  std::printf("client_truth_bench: TTFT %.0f ms, ITL %.0f ms, %d tokens/request, %.1f s per point (ramp %.1f s), "
              "closed loop, %s\n",
              NanosToMillis(a.truth.ttft), NanosToMillis(a.truth.itl), a.truth.tokens, a.seconds, a.ramp_s,
              a.truth.chat ? "chat" : "completions");
  std::printf("errors in ms as |client - server| P50 P99 max; CPU in s per 1M tokens\n");
  std::printf("streams conn | TTFT p50   p99     max   | ITL p50   p99     max   | stamp p50 p99   max   "
              "| srv late p99 | CPU all   io | tok/s got  offered | conn ms | ok/failed/unmatched/short "
              "| kstamp p99 io%% lag p99 | flag vs truth (TTFT or ITL error p99 > 1 ms)\n");
  for (int n : a.streams) {
    for (bool warm : a.warm) {
      if (int rc = RunOne(a, n, warm); rc != 0) return rc;
    }
  }
  return 0;
}
