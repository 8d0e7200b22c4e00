#include "serve/prom_metrics.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace infereng::serve {

void PromHistogram::Observe(double v) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);  // le semantics
  ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  sum_ += v;
  ++count_;
}

void PromHistogram::Render(std::string& out, const std::string& name, const std::string& help,
                           const std::string& labels) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  uint64_t cum = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{}\",{}}} {}\n", name, bounds_[i], labels, cum);
  }
  cum += counts_.back();
  out += fmt::format("{}_bucket{{le=\"+Inf\",{}}} {}\n", name, labels, cum);
  out += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, sum_, name, labels, count_);
}

ServeMetrics::ServeMetrics()
    : ttft({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
            80.0, 160.0, 640.0, 2560.0}),
      itl({0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
           960.0, 1920.0, 7680.0}),
      queue({0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
             960.0, 1920.0, 7680.0}),
      lateness({0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0}) {}

namespace {

void Scalar(std::string& out, const char* type, const std::string& name, const std::string& help,
            const std::string& labels, double v) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}{{{}}} {}\n", name, help, name, type, name, labels, v);
}

}  // namespace

std::string ServeMetrics::Render(const std::string& model_name, const EngineStats& s) const {
  std::string out;
  out.reserve(16384);
  // Model names are ids like "org/model-1"; escape the label value anyway.
  std::string esc;
  for (char c : model_name) {
    if (c == '\\' || c == '"') esc += '\\';
    if (c == '\n') { esc += "\\n"; continue; }
    esc += c;
  }
  const std::string lb = "model_name=\"" + esc + "\"";
  Scalar(out, "gauge", "vllm:num_requests_running", "Number of requests in model execution batches.", lb,
         static_cast<double>(s.running));
  Scalar(out, "gauge", "vllm:num_requests_waiting", "Number of requests waiting to be processed.", lb,
         static_cast<double>(s.waiting));
  Scalar(out, "gauge", "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", lb, s.kv_usage);
  Scalar(out, "counter", "vllm:prefix_cache_queries_total",
         "Prefix cache queries, in terms of number of queried tokens.", lb,
         static_cast<double>(s.prefix_queries_tokens));
  Scalar(out, "counter", "vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
         lb, static_cast<double>(s.prefix_hits_tokens));
  Scalar(out, "counter", "vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", lb,
         static_cast<double>(s.preemptions));
  Scalar(out, "counter", "vllm:prompt_tokens_total", "Number of prefill tokens processed.", lb,
         static_cast<double>(counters.prompt_tokens));
  Scalar(out, "counter", "vllm:generation_tokens_total", "Number of generation tokens processed.", lb,
         static_cast<double>(counters.generation_tokens));
  out += "# HELP vllm:request_success_total Count of successfully processed requests.\n"
         "# TYPE vllm:request_success_total counter\n";
  for (const char* reason : {"stop", "length", "abort"}) {
    auto it = counters.success_by_reason.find(reason);
    out += fmt::format("vllm:request_success_total{{finished_reason=\"{}\",{}}} {}\n", reason, lb,
                       it == counters.success_by_reason.end() ? 0 : it->second);
  }
  ttft.Render(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", lb);
  itl.Render(out, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", lb);
  e2e.Render(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", lb);
  queue.Render(out, "vllm:request_queue_time_seconds",
               "Histogram of time spent in WAITING phase for request.", lb);
  Scalar(out, "counter", "infereng:requests_rejected_total", "Requests refused by admission control (429/503).",
         lb, static_cast<double>(counters.rejected));
  Scalar(out, "counter", "infereng:requests_aborted_total",
         "Requests aborted by a client disconnect or the request timeout.", lb,
         static_cast<double>(counters.aborted));
  lateness.Render(out, "infereng:emission_lateness_seconds",
                  "Socket write time minus the engine's scheduled emission time, per written chunk.", lb);
  return out;
}

}  // namespace infereng::serve
