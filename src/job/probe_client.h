// ProbeClient: every request a probe sends goes through here, so a probe can never exceed
// its budget (requests and wall time) — the check is in one place, not in each probe.
//
// Requests are the product client's (client::HttpClient): a Batch starts its calls at once
// on a private io_context and runs it on the calling thread until every call ended; each
// call records raw facts (send, first byte, output chunks, end, status, Retry-After,
// [DONE], usage). A call may cancel itself (close its connection) after N output chunks,
// which is how the cancellation probe walks away mid-generation.
//
// Budget: Charge(n) before sending n requests; ResourceExhausted when the request count or
// the deadline would be passed (the probe then concludes from what it has). Every call's
// timeout is cut to the time left. Thread-safety: none (one probe at a time).
//
// Trace (probe.html's timelines): every POST's facts, and the engine's running / waiting /
// KV usage, go into a ProbeTrace. While a Batch with a POST runs, /metrics is scraped every
// kSignalPollMs on the same io_context (one scrape in flight at most; stopped for the rest
// of the probe after a 404 or a connection error). These scrapes are counted in the trace,
// not charged to the budget: the budget bounds the load a probe puts on the target, and a
// scrape every 100 ms is not load.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/http_client.h"
#include "core/clock.h"
#include "core/status.h"
#include "job/probe_result.h"

namespace infereng::client {
class SignalSampler;
}

namespace infereng::job {

inline constexpr int64_t kSignalPollMs = 100;
inline constexpr std::size_t kMaxTraceRequests = 2000;  // per probe; later requests are not traced

struct ProbeBudget {
  int64_t max_requests = 200;
  Nanos max_time = 30 * kNanosPerSecond;
};

struct CallSpec {
  std::string method = "POST";
  std::string path = "/v1/chat/completions";  // from the server root
  std::string body{};
  std::vector<client::Header> headers{};
  bool sse = true;
  int cancel_after_chunks = 0;  // > 0: close the connection after this many output chunks
  Nanos timeout = 20 * kNanosPerSecond;
  Nanos start_delay = 0;        // in a Batch: start this long after the batch starts
};

struct CallResult {
  int status = 0;
  metrics::ErrorClass error = metrics::ErrorClass::kNone;
  std::string error_message{};
  std::string retry_after{};       // the Retry-After header ("" when none)
  std::string body{};              // non-SSE calls, and error bodies
  Nanos t_send = -1, t_first_byte = -1, t_first_token = -1, t_end = -1;
  std::vector<Nanos> chunk_times{};  // arrival of each output-carrying SSE event
  int64_t usage_completion = 0;    // completion tokens the server reported (0: none)
  int64_t usage_prompt = 0;        // prompt tokens the server reported (0: none)
  bool saw_done = false;
  bool cancelled = false;          // we closed it (cancel_after_chunks)

  bool ok() const { return error == metrics::ErrorClass::kNone && status >= 200 && status < 300; }
  Nanos ttft() const { return t_first_token >= 0 && t_send >= 0 ? t_first_token - t_send : -1; }
  Nanos latency() const { return t_end >= 0 && t_send >= 0 ? t_end - t_send : -1; }
};

class ProbeClient {
 public:
  // `root`: the server root ("http://127.0.0.1:8000"); `base` supplies headers, TLS, socket.
  ProbeClient(client::ClientOptions base, ProbeBudget budget);
  ~ProbeClient();
  ProbeClient(const ProbeClient&) = delete;
  ProbeClient& operator=(const ProbeClient&) = delete;

  // Charges one request per spec, then runs them all concurrently.
  Result<std::vector<CallResult>> Batch(std::vector<CallSpec> specs);
  Result<CallResult> Call(CallSpec spec);
  // GET `path` (from the root), charged; any HTTP status is a result.
  Result<CallResult> Get(std::string path, Nanos timeout = 5 * kNanosPerSecond);
  // The first of `names` that /metrics exports (default: every engine's running-requests
  // gauge, client::MetricNames); nullopt when none is.
  Result<std::optional<double>> Gauge(const std::vector<std::string_view>& names = RunningGauges());
  static std::vector<std::string_view> RunningGauges();
  static std::vector<std::string_view> GeneratedTokenCounters();

  // Fails with ResourceExhausted when `n` more requests do not fit the budget.
  Status Charge(int64_t n);
  int64_t used() const { return used_; }
  Nanos elapsed() const { return SteadyNowNs() - t_start_; }
  Nanos time_left() const { return budget_.max_time - elapsed(); }
  const ProbeBudget& budget() const { return budget_; }
  const client::ClientOptions& options() const { return base_; }
  Nanos start() const { return t_start_; }
  // Resets the budget (and the trace) for the next probe.
  void Restart(ProbeBudget budget);
  // The trace since the last Restart; leaves it empty.
  ProbeTrace TakeTrace();
  // Off: no /metrics polling during batches (gauges read by probes are still traced).
  void set_poll_signals(bool on) { poll_signals_ = on; }

  static Nanos SteadyNowNs();

 private:
  client::ClientOptions base_{};
  ProbeBudget budget_{};
  int64_t used_ = 0;
  Nanos t_start_ = 0;
  ProbeTrace trace_{};
  bool poll_signals_ = true;
  bool signals_absent_ = false;  // /metrics answered 404 or refused: stop polling this probe
  std::unique_ptr<client::SignalSampler> sampler_;

  void TraceCalls(const std::vector<CallSpec>& specs, const std::vector<CallResult>& calls);
  // One /metrics answer into the trace (at its midpoint); the parsed scrape's body.
  void TraceScrape(const CallResult& r);
};

}  // namespace infereng::job
