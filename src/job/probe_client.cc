#include "job/probe_client.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

#include "client/engine_signals.h"
#include "client/prometheus.h"

namespace infereng::job {

namespace {

namespace asio = boost::asio;

// Records one call's raw facts; cancels its own stream after N output chunks.
class CallHandler final : public client::StreamHandler {
 public:
  CallHandler(CallResult* out, int cancel_after, asio::io_context& io) : out_(out), cancel_after_(cancel_after), io_(io) {}
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
    out_->body = end.body;
  }

 private:
  CallResult* out_;
  int cancel_after_;
  asio::io_context& io_;
  client::HttpClient* client_ = nullptr;
  client::StreamId id_ = 0;
  bool cancel_posted_ = false;
};

}  // namespace

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
  opts.expected_concurrency = specs.size();
  opts.stall_timeout = 0;
  const Nanos left = time_left();
  if (opts.connect_timeout > left) opts.connect_timeout = std::max<Nanos>(left, kNanosPerMilli);
  INFERENG_ASSIGN_OR_RETURN(auto cl, client::HttpClient::Create(io, std::move(opts)));
  std::vector<CallResult> out(specs.size());
  std::vector<std::unique_ptr<CallHandler>> handlers;
  std::vector<std::unique_ptr<asio::steady_timer>> timers;
  handlers.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    CallSpec& s = specs[i];
    handlers.push_back(std::make_unique<CallHandler>(&out[i], s.cancel_after_chunks, io));
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
  io.run();
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
  if (r.error == metrics::ErrorClass::kConnect) return Status::Unavailable("GET /metrics: " + r.error_message);
  if (r.status != 200) return std::optional<double>();
  auto scrape = client::ParsePrometheusText(r.body);
  if (!scrape.ok()) return std::optional<double>();
  return scrape->FirstValue(names);
}

}  // namespace infereng::job
