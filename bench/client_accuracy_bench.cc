// client_accuracy_bench: how truthful are the load generator's token timestamps?
//
// Starts the embedded server in-process with --trace-emissions (the server stamps every
// chunk right after its write() returns, on the same CLOCK_MONOTONIC), drives N concurrent
// streams through the real bench path (LoadRunner + HttpTransport + RecordingHandler), and
// joins each client chunk to its server emission by x-request-id and order. Reports, per N:
//   |t_client_chunk - t_server_write| P50 / P99 / max (what the client adds: loopback +
//   wake-up + parsing), client CPU per 1M tokens (io + dispatcher threads), achieved vs
//   offered token rate, and the server's own emission lateness (so a late server is not
//   mistaken for a slow client).
//
//   build/dev/client_accuracy_bench [--streams 100,500,2000] [--seconds 6] [--itl-ms 100]
//                                   [--tokens 40]
// Server and client share this machine's cores: both costs are in the numbers.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/http_transport.h"
#include "bench/request_body.h"
#include "bench/load_runner.h"
#include "core/stats.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

using namespace infereng;

namespace {

Nanos ThreadCpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

struct Args {
  std::vector<int> streams = {100, 500, 2000};
  double seconds = 6;
  double itl_ms = 100;
  int tokens = 40;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--streams") {
      a.streams.clear();
      std::stringstream ss(v);
      std::string x;
      while (std::getline(ss, x, ',')) a.streams.push_back(std::stoi(x));
    } else if (k == "--seconds") {
      a.seconds = std::stod(v);
    } else if (k == "--itl-ms") {
      a.itl_ms = std::stod(v);
    } else if (k == "--tokens") {
      a.tokens = std::stoi(v);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

// x_request_id -> server write times of the output-carrying chunks, in order.
std::unordered_map<std::string, std::vector<Nanos>> ReadTrace(const std::string& path) {
  std::unordered_map<std::string, std::vector<Nanos>> out;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::string f[5];
    std::stringstream ss(line);
    for (auto& x : f) std::getline(ss, x, ',');
    if (f[3].empty() || f[4].empty() || std::stoi(f[4]) <= 0) continue;
    out[f[3]].push_back(std::stoll(f[0]));
  }
  return out;
}

int RunOne(const Args& a, int n) {
  const std::string trace = (std::filesystem::temp_directory_path() / ("client_accuracy_" + std::to_string(n) + ".csv")).string();
  serve::ServerOptions so;
  so.port = 0;
  so.model_name = "acc";
  so.max_waiting = 0;
  so.max_connections = static_cast<size_t>(n) * 2 + 100;
  so.trace_emissions_path = trace;
  serve::PacedEngineOptions po;
  po.ttft_base = 10 * kNanosPerMilli;
  po.prefill_per_token = 0;
  po.itl = MillisToNanos(a.itl_ms);
  po.max_running = n + 16;
  serve::Server server(so, std::make_unique<serve::PacedEngine>(po));
  if (Status s = client::EnsureFileDescriptors(static_cast<size_t>(n) * 2 + 256); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 3;
  }
  Result<uint16_t> port = server.Start();
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().ToString().c_str());
    return 3;
  }
  bench::HttpTransportOptions to;
  to.client.base_url = "http://127.0.0.1:" + std::to_string(*port);
  to.client.expected_concurrency = static_cast<size_t>(n);
  to.endpoint = bench::ApiEndpoint::kCompletions;
  auto transport = bench::HttpTransport::Create(to);
  if (!transport.ok()) {
    std::fprintf(stderr, "%s\n", transport.status().ToString().c_str());
    return 3;
  }
  bench::BodyOptions bo;
  bo.model = "acc";
  bo.endpoint = bench::ApiEndpoint::kCompletions;
  bo.caps = bench::CapsForEngine("infereng");
  const std::string body = bench::BuildRequestBody(bo, {"hello world", nullptr}, a.tokens);

  std::mutex mu;
  std::vector<metrics::RequestRecord> records;
  uint64_t next = 0;
  bench::LoadRunner runner(SteadyClock::Instance(), **transport);
  bench::RunnerOptions ro;
  ro.mode = bench::RunnerOptions::Mode::kClosedLoop;
  ro.concurrency = n;
  ro.stop_after = SecondsToNanos(a.seconds);
  // Spread the streams' phases: N streams started at one instant with one ITL would emit
  // in lock-step bursts of N chunks, a test of burst absorption rather than of accuracy.
  ro.ramp = SecondsToNanos(std::min(2.0, a.seconds / 3));
  ro.drain_timeout = 60 * kNanosPerSecond;
  const Nanos cpu0 = ThreadCpu(), io0 = (*transport)->IoThreadCpu();
  const Nanos t0 = SteadyClock::Instance().Now();
  auto st = runner.Run(
      ro, [&]() -> std::optional<workload::RequestSpec> {
        workload::RequestSpec spec;
        spec.index = next++;
        return spec;
      },
      [&](const workload::RequestSpec& spec) -> Result<bench::PreparedRequest> {
        bench::PreparedRequest r;
        r.record.id = spec.index;
        r.path = "/v1/completions";
        r.body = body;
        r.request_id = std::to_string(spec.index);
        return r;
      },
      [&](bench::Finished&& f) {
        std::lock_guard<std::mutex> lock(mu);
        records.push_back(std::move(f.record));
      });
  const Nanos t1 = SteadyClock::Instance().Now();
  const Nanos cpu = ThreadCpu() - cpu0 + (*transport)->IoThreadCpu() - io0;
  serve::ServerSnapshot snap = server.Snapshot();
  transport->reset();
  server.Stop();
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.status().ToString().c_str());
    return 3;
  }
  auto emitted = ReadTrace(trace);
  std::vector<double> abs_us;
  int64_t tokens = 0, errors = 0, mismatched = 0;
  for (const auto& r : records) {
    if (!r.ok()) {
      ++errors;
      continue;
    }
    tokens += r.OutputTokens();
    auto it = emitted.find(std::to_string(r.id));
    if (it == emitted.end() || it->second.size() != r.chunks.size()) {
      ++mismatched;
      continue;
    }
    for (size_t i = 0; i < r.chunks.size(); ++i) {
      abs_us.push_back(std::abs(static_cast<double>(r.chunks[i].t - it->second[i])) / 1e3);
    }
  }
  stats::SampleStats s = stats::Summarize(abs_us);
  const double secs = NanosToSeconds(t1 - t0);
  const double offered = n * 1000.0 / a.itl_ms;  // steady-state tokens/s asked of the server
  std::printf("%6d streams | |client-server| us: p50 %8.1f  p99 %9.1f  max %9.1f  (n=%lld) | client CPU %6.2f s/1M tok "
              "| tokens/s achieved %8.0f offered %8.0f | server lateness p99 %.1f us | req %zu err %lld mismatch %lld\n",
              n, s.p50, s.p99, s.max, static_cast<long long>(s.count),
              tokens > 0 ? NanosToSeconds(cpu) / static_cast<double>(tokens) * 1e6 : 0.0,
              static_cast<double>(tokens) / secs, offered, static_cast<double>(snap.lateness_p99) / 1e3,
              records.size(), static_cast<long long>(errors), static_cast<long long>(mismatched));
  std::fflush(stdout);
  std::filesystem::remove(trace);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = Parse(argc, argv);
  std::printf("client_accuracy_bench: itl %.0f ms, %d tokens/request, %.0f s per point, closed loop\n", a.itl_ms,
              a.tokens, a.seconds);
  for (int n : a.streams) {
    if (int rc = RunOne(a, n); rc != 0) return rc;
  }
  return 0;
}
