#include "job/probe_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>

#include "client/engine_signals.h"
#include "client/prometheus.h"

namespace infereng::job {

namespace {

namespace asio = boost::asio;

// Records one call's raw facts; cancels its own stream after N output chunks.
class CallHandler final : public client::StreamHandler {
 public:
  CallHandler(CallResult* out, int cancel_after, asio::io_context& io, std::function<void()> on_end = {})
      : out_(out), cancel_after_(cancel_after), io_(io), on_end_(std::move(on_end)) {}
  void Bind(client::HttpClient* cl, client::StreamId id) {
    client_ = cl;
    id_ = id;
  }
  void OnSend(Nanos t) override {
    if (out_->t_send < 0) out_->t_send = t;
  }
  void OnFirstByte(Nanos t, int status) override {
    out_->t_first_byte = t;
    out_->status = status;
  }
  void OnChunk(Nanos t, const client::ChunkInfo& info) override {
    if (info.usage.completion_tokens > 0) out_->usage_completion = info.usage.completion_tokens;
    if (info.usage.prompt_tokens > 0) out_->usage_prompt = info.usage.prompt_tokens;
    if (!info.has_output()) return;
    if (out_->t_first_token < 0) out_->t_first_token = t;
    out_->chunk_times.push_back(t);
    if (cancel_after_ > 0 && static_cast<int>(out_->chunk_times.size()) >= cancel_after_ && !cancel_posted_) {
      cancel_posted_ = true;  // not from inside the client's callback: post it
      out_->cancelled = true;
      asio::post(io_, [this] { client_->Cancel(id_); });
    }
  }
  void OnEnd(const client::StreamEnd& end) override {
    out_->t_end = end.t_end;
    if (end.http_status) out_->status = end.http_status;
    out_->error = end.error;
    out_->error_message = end.error_message;
    out_->retry_after = end.retry_after;
    out_->saw_done = end.saw_done;
    if (end.usage.completion_tokens > 0) out_->usage_completion = end.usage.completion_tokens;
    if (end.usage.prompt_tokens > 0) out_->usage_prompt = end.usage.prompt_tokens;
    out_->body = end.body;
    if (on_end_) on_end_();
  }

 private:
  CallResult* out_;
  int cancel_after_;
  asio::io_context& io_;
  std::function<void()> on_end_;
  client::HttpClient* client_ = nullptr;
  client::StreamId id_ = 0;
  bool cancel_posted_ = false;
};

double NaNIfAbsent(const nlohmann::json& signals, const char* name) {
  auto it = signals.find(name);
  return it != signals.end() && it->is_number() ? it->get<double>() : std::numeric_limits<double>::quiet_NaN();
}

// Scrapes /metrics every kSignalPollMs on the batch's io_context until Stop (the last of
// the batch's calls ended); at most one scrape in flight. Lives on Batch's stack.
class SignalPoller {
 public:
  // `record` returns false to stop polling (the target has no /metrics).
  SignalPoller(asio::io_context& io, client::HttpClient& cl, std::function<bool(const CallResult&)> record)
      : io_(io), client_(cl), timer_(io), record_(std::move(record)) {}
  // The first scrape 10 ms into the batch (a burst shorter than the interval still gets
  // one while its requests run), then every kSignalPollMs.
  void Arm(int64_t delay_ms = 10) {
    if (stopped_) return;
    timer_.expires_after(std::chrono::milliseconds(delay_ms));
    timer_.async_wait([this](boost::system::error_code ec) {
      if (ec || stopped_) return;
      if (!busy_) Scrape();
      Arm(kSignalPollMs);
    });
  }
  void Stop() {
    stopped_ = true;
    timer_.cancel();
  }

 private:
  void Scrape() {
    busy_ = true;
    results_.push_back(std::make_unique<CallResult>());
    CallResult* r = results_.back().get();
    handlers_.push_back(std::make_unique<CallHandler>(r, 0, io_, [this, r] {
      busy_ = false;
      if (!record_(*r)) Stop();
    }));
    client::StreamRequest req;
    req.method = "GET";
    req.path = "/metrics";
    req.sse = false;
    req.request_timeout = kNanosPerSecond;
    CallHandler* h = handlers_.back().get();
    h->Bind(&client_, client_.StartStream(std::move(req), h));
  }

  asio::io_context& io_;
  client::HttpClient& client_;
  asio::steady_timer timer_;
  std::function<bool(const CallResult&)> record_;
  std::vector<std::unique_ptr<CallResult>> results_;
  std::vector<std::unique_ptr<CallHandler>> handlers_;
  bool busy_ = false, stopped_ = false;
};

}  // namespace

ProbeClient::~ProbeClient() = default;

ProbeTrace ProbeClient::TakeTrace() {
  ProbeTrace t = std::move(trace_);
  trace_ = {};
  return t;
}

void ProbeClient::TraceCalls(const std::vector<CallSpec>& specs, const std::vector<CallResult>& calls) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const CallResult& c = calls[i];
    if (specs[i].method != "POST" || c.t_send < 0 || trace_.requests.size() >= kMaxTraceRequests) continue;
    trace_.requests.push_back(ProbeRequestPoint{
        .t_ms = NanosToMillis(c.t_send - t_start_),
        .latency_ms = c.latency() >= 0 ? NanosToMillis(c.latency()) : kNaN,
        .ttft_ms = c.ttft() >= 0 ? NanosToMillis(c.ttft()) : kNaN,
        .status = c.status,
        .ok = c.ok(),
        .cancelled = c.cancelled});
  }
}

void ProbeClient::TraceScrape(const CallResult& r) {
  ++trace_.scrapes;
  if (r.status == 404 || r.error == metrics::ErrorClass::kConnect) signals_absent_ = true;
  if (r.status != 200 || r.t_send < 0 || r.t_end < 0) return;
  auto scrape = client::ParsePrometheusText(r.body);
  if (!scrape.ok()) return;
  const double t_ms = NanosToMillis((r.t_send + r.t_end) / 2 - t_start_);
  if (!sampler_) sampler_ = std::make_unique<client::SignalSampler>();
  nlohmann::json line = sampler_->Sample(*scrape, t_ms / 1000);
  const nlohmann::json signals = line.value("signals", nlohmann::json::object());
  trace_.signals.push_back(ProbeSignalPoint{.t_ms = t_ms,
                                            .running = NaNIfAbsent(signals, "running"),
                                            .waiting = NaNIfAbsent(signals, "waiting"),
                                            .kv_usage = NaNIfAbsent(signals, "kv_usage")});
}

Nanos ProbeClient::SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ProbeClient::ProbeClient(client::ClientOptions base, ProbeBudget budget)
    : base_(std::move(base)), budget_(budget), t_start_(SteadyNowNs()) {}

void ProbeClient::Restart(ProbeBudget budget) {
  budget_ = budget;
  used_ = 0;
  t_start_ = SteadyNowNs();
  trace_ = {};
  signals_absent_ = false;
  sampler_.reset();
}

Status ProbeClient::Charge(int64_t n) {
  if (used_ + n > budget_.max_requests) {
    return Status::ResourceExhausted("request budget spent (" + std::to_string(used_) + " of " +
                                     std::to_string(budget_.max_requests) + ")");
  }
  if (time_left() <= 0) {
    return Status::ResourceExhausted("time budget spent (" + std::to_string(NanosToMillis(budget_.max_time)) + " ms)");
  }
  used_ += n;
  return Status::Ok();
}

Result<std::vector<CallResult>> ProbeClient::Batch(std::vector<CallSpec> specs) {
  INFERENG_RETURN_IF_ERROR(Charge(static_cast<int64_t>(specs.size())));
  asio::io_context io;
  client::ClientOptions opts = base_;
  opts.expected_concurrency = specs.size() + 1;  // + the signal poller's scrape
  opts.stall_timeout = 0;
  const Nanos left = time_left();
  if (opts.connect_timeout > left) opts.connect_timeout = std::max<Nanos>(left, kNanosPerMilli);
  INFERENG_ASSIGN_OR_RETURN(auto cl, client::HttpClient::Create(io, std::move(opts)));
  std::vector<CallResult> out(specs.size());
  std::vector<CallSpec> traced;  // method and path only (bodies move into the requests)
  bool any_post = false;
  for (const CallSpec& s : specs) {
    traced.push_back(CallSpec{.method = s.method, .path = s.path});
    any_post = any_post || s.method == "POST";
  }
  SignalPoller poller(io, *cl, [this](const CallResult& r) {
    TraceScrape(r);
    return !signals_absent_;
  });
  std::size_t remaining = specs.size();
  auto on_end = [&] {
    if (--remaining == 0) poller.Stop();
  };
  std::vector<std::unique_ptr<CallHandler>> handlers;
  std::vector<std::unique_ptr<asio::steady_timer>> timers;
  handlers.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    CallSpec& s = specs[i];
    handlers.push_back(std::make_unique<CallHandler>(&out[i], s.cancel_after_chunks, io, on_end));
    client::StreamRequest req;
    req.method = s.method;
    req.path = s.path;
    req.body = std::move(s.body);
    req.headers = std::move(s.headers);
    req.sse = s.sse;
    req.dialect = s.path.ends_with("/completions") && !s.path.ends_with("/chat/completions")
                      ? client::Dialect::kOpenAiCompletions
                      : client::Dialect::kOpenAiChat;
    req.request_timeout = std::max<Nanos>(kNanosPerMilli, std::min(s.timeout, left - s.start_delay));
    CallHandler* h = handlers.back().get();
    auto start = [&cl, h, req = std::move(req)]() mutable { h->Bind(cl.get(), cl->StartStream(std::move(req), h)); };
    if (s.start_delay <= 0) {
      start();
    } else {
      timers.push_back(std::make_unique<asio::steady_timer>(io, std::chrono::nanoseconds(s.start_delay)));
      timers.back()->async_wait([start = std::move(start)](boost::system::error_code ec) mutable {
        if (!ec) start();
      });
    }
  }
  if (any_post && poll_signals_ && !signals_absent_) poller.Arm();
  io.run();
  TraceCalls(traced, out);
  return out;
}

Result<CallResult> ProbeClient::Call(CallSpec spec) {
  std::vector<CallSpec> one;
  one.push_back(std::move(spec));
  INFERENG_ASSIGN_OR_RETURN(auto out, Batch(std::move(one)));
  return std::move(out.front());
}

Result<CallResult> ProbeClient::Get(std::string path, Nanos timeout) {
  CallSpec s{.method = "GET", .path = std::move(path), .sse = false, .timeout = timeout};
  return Call(std::move(s));
}

std::vector<std::string_view> ProbeClient::RunningGauges() {
  return client::MetricNames("running", client::SignalRule::kGauge);
}

std::vector<std::string_view> ProbeClient::GeneratedTokenCounters() {
  return client::MetricNames("generation_tokens_per_s", client::SignalRule::kCounterRate);
}

Result<std::optional<double>> ProbeClient::Gauge(const std::vector<std::string_view>& names) {
  INFERENG_ASSIGN_OR_RETURN(CallResult r, Get("/metrics"));
  TraceScrape(r);
  if (r.error == metrics::ErrorClass::kConnect) return Status::Unavailable("GET /metrics: " + r.error_message);
  if (r.status != 200) return std::optional<double>();
  auto scrape = client::ParsePrometheusText(r.body);
  if (!scrape.ok()) return std::optional<double>();
  return scrape->FirstValue(names);
}

}  // namespace infereng::job
