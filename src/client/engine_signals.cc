#include "client/engine_signals.h"

#include <algorithm>

namespace infereng::client {
namespace {

using nlohmann::json;
using R = SignalRule;

// Each engine's rows were checked against its documentation (2026-12):
//   vLLM:      https://docs.vllm.ai/en/stable/usage/metrics/ and vllm docs/design/metrics.md
//              (V1 names; `gpu_*` rows are the pre-V1 names, tried second)
//   SGLang:    https://docs.sglang.io/references/production_metrics.html (--enable-metrics)
//   TGI:       https://huggingface.co/docs/text-generation-inference/reference/metrics
//   llama.cpp: tools/server/README.md "Available metrics" (github.com/ggml-org/llama.cpp,
//              --metrics; kv_cache_usage_ratio exists in older builds only, e.g. b4748 in
//              client/testdata)
//   TRT-LLM:   https://nvidia.github.io/TensorRT-LLM/examples/prometheus_metrics.html
//              (served at /prometheus/metrics; names as in docs/engines.md §3)
// The embedded engine (`infereng serve`) exports vLLM's names (serve/prom_metrics.h).
// Signals an engine does not export have no row: they are listed as missing.
const std::vector<SignalRow> kRows = {
    {"vllm", "running", R::kGauge, "vllm:num_requests_running", {}},
    {"vllm", "waiting", R::kGauge, "vllm:num_requests_waiting", {}},
    {"vllm", "kv_usage", R::kGauge, "vllm:kv_cache_usage_perc", {}},
    {"vllm", "kv_usage", R::kGauge, "vllm:gpu_cache_usage_perc", {}},
    {"vllm", "preemptions", R::kCounterDelta, "vllm:num_preemptions_total", {}},
    {"vllm", "prefix_cache_hit_rate", R::kCounterRatio, "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"},
    {"vllm", "prefix_cache_hit_rate", R::kCounterRatio, "vllm:gpu_prefix_cache_hits_total",
     "vllm:gpu_prefix_cache_queries_total"},
    {"vllm", "prompt_tokens_per_s", R::kCounterRate, "vllm:prompt_tokens_total", {}},
    {"vllm", "generation_tokens_per_s", R::kCounterRate, "vllm:generation_tokens_total", {}},
    {"vllm", "batch_size", R::kGauge, "vllm:num_requests_running", {}},
    {"vllm", "tokens_per_step", R::kHistogramMean, "vllm:iteration_tokens_total", {}},
    {"vllm", "spec_acceptance", R::kCounterRatio, "vllm:spec_decode_num_accepted_tokens_total",
     "vllm:spec_decode_num_draft_tokens_total"},
    {"vllm", "queue_time_s", R::kHistogramMean, "vllm:request_queue_time_seconds", {}},
    {"vllm", "prefill_time_s", R::kHistogramMean, "vllm:request_prefill_time_seconds", {}},
    {"vllm", "decode_time_s", R::kHistogramMean, "vllm:request_decode_time_seconds", {}},

    {"sglang", "running", R::kGauge, "sglang:num_running_reqs", {}},
    {"sglang", "waiting", R::kGauge, "sglang:num_queue_reqs", {}},
    {"sglang", "kv_usage", R::kGauge, "sglang:token_usage", {}},
    // Requests retracted (SGLang's preemption) in the last logging interval: a gauge.
    {"sglang", "preemptions", R::kGauge, "sglang:num_retracted_reqs", {}},
    {"sglang", "prefix_cache_hit_rate", R::kGauge, "sglang:cache_hit_rate", {}},
    {"sglang", "prompt_tokens_per_s", R::kCounterRate, "sglang:prompt_tokens_total", {}},
    {"sglang", "generation_tokens_per_s", R::kCounterRate, "sglang:generation_tokens_total", {}},
    {"sglang", "generation_tokens_per_s", R::kGauge, "sglang:gen_throughput", {}},
    {"sglang", "batch_size", R::kGauge, "sglang:num_running_reqs", {}},
    {"sglang", "queue_time_s", R::kHistogramMean, "sglang:queue_time_seconds", {}},

    {"tgi", "running", R::kGauge, "tgi_batch_current_size", {}},
    {"tgi", "waiting", R::kGauge, "tgi_queue_size", {}},
    {"tgi", "batch_size", R::kGauge, "tgi_batch_current_size", {}},
    {"tgi", "queue_time_s", R::kHistogramMean, "tgi_request_queue_duration", {}},
    // TGI times whole batches, not requests: the mean prefill forward pass is the nearest.
    {"tgi", "prefill_time_s", R::kHistogramMean, "tgi_batch_forward_duration", {}, 1, "method=prefill"},

    {"llamacpp", "running", R::kGauge, "llamacpp:requests_processing", {}},
    {"llamacpp", "waiting", R::kGauge, "llamacpp:requests_deferred", {}},
    {"llamacpp", "kv_usage", R::kGauge, "llamacpp:kv_cache_usage_ratio", {}},
    {"llamacpp", "prompt_tokens_per_s", R::kCounterRate, "llamacpp:prompt_tokens_total", {}},
    {"llamacpp", "generation_tokens_per_s", R::kCounterRate, "llamacpp:tokens_predicted_total", {}},
    // Busy slots per llama_decode() call: the batch size. Typed counter, but an average since
    // the server started (b4748 server.cpp: n_busy_slots_total / n_decode_total), so the
    // interval's mean is recovered from it and the decode count.
    {"llamacpp", "batch_size", R::kCumulativeMean, "llamacpp:n_busy_slots_per_decode", "llamacpp:n_decode_total"},
    {"llamacpp", "batch_size", R::kGauge, "llamacpp:requests_processing", {}},

    {"trtllm", "running", R::kGauge, "trtllm_num_requests_running", {}},
    {"trtllm", "waiting", R::kGauge, "trtllm_num_requests_waiting", {}},
    {"trtllm", "kv_usage", R::kGauge, "trtllm_kv_cache_utilization", {}},
    {"trtllm", "prefix_cache_hit_rate", R::kGauge, "trtllm_kv_cache_hit_rate", {}},
    {"trtllm", "queue_time_s", R::kHistogramMean, "trtllm_request_queue_time_seconds", {}},
};

std::vector<Label> MatchOf(const SignalRow& row) {
  if (row.label.empty()) return {};
  const size_t eq = row.label.find('=');
  return {Label{std::string(row.label.substr(0, eq)), std::string(row.label.substr(eq + 1))}};
}

std::string KeyOf(std::string_view name, std::string_view label) {
  return label.empty() ? std::string(name) : std::string(name) + "{" + std::string(label) + "}";
}

bool Exported(const SignalRow& row, const Scrape& scrape) {
  const std::vector<Label> match = MatchOf(row);
  if (row.rule == R::kHistogramMean) return scrape.Histogram(row.name, match).ok();
  if (!scrape.Value(row.name, match)) return false;
  if (row.rule != R::kCounterRatio && row.rule != R::kCumulativeMean) return true;
  return scrape.Value(row.denominator, match).has_value();
}

// Growth of a cumulative value; a drop (the engine restarted) counts from zero.
double Growth(double now, double before) { return now >= before ? now - before : now; }

}  // namespace

const std::vector<SignalRow>& SignalMap() { return kRows; }

std::vector<std::string_view> MetricNames(std::string_view signal, SignalRule rule) {
  std::vector<std::string_view> out;
  for (const SignalRow& row : kRows) {
    if (row.signal != signal || row.rule != rule || !row.label.empty()) continue;
    if (std::find(out.begin(), out.end(), row.name) == out.end()) out.push_back(row.name);
  }
  return out;
}

std::string DetectEngine(const Scrape& scrape) {
  static constexpr std::pair<std::string_view, std::string_view> kPrefixes[] = {
      {"vllm:", "vllm"}, {"sglang:", "sglang"}, {"tgi_", "tgi"}, {"llamacpp:", "llamacpp"}, {"trtllm_", "trtllm"}};
  for (const auto& [prefix, engine] : kPrefixes) {
    for (const auto& [name, family] : scrape.families()) {
      if (name.starts_with(prefix)) return std::string(engine);
    }
    for (const Sample& s : scrape.samples()) {
      if (s.name.starts_with(prefix)) return std::string(engine);
    }
  }
  return "unknown";
}

std::string EngineName(const Scrape& scrape) {
  for (const Sample& s : scrape.samples()) {
    if (s.name.starts_with("infereng:")) return "infereng";
  }
  return DetectEngine(scrape);
}

std::optional<double> SignalSampler::Evaluate(const SignalRow& row, const Scrape& scrape, double dt_s,
                                              std::map<std::string, Cumulative>& next) const {
  const std::vector<Label> match = MatchOf(row);
  const std::string key = KeyOf(row.name, row.label);
  const auto prev = last_.find(key);
  const bool has_prev = prev != last_.end() && dt_s > 0;
  switch (row.rule) {
    case R::kGauge:
      return scrape.Value(row.name, match).value() * row.scale;
    case R::kCounterRate:
    case R::kCounterDelta: {
      const double v = scrape.Value(row.name, match).value();
      next[key] = {v, 0};
      if (!has_prev) return std::nullopt;
      const double d = Growth(v, prev->second.value) * row.scale;
      return row.rule == R::kCounterRate ? d / dt_s : d;
    }
    case R::kCounterRatio: {
      const double num = scrape.Value(row.name, match).value();
      const double den = scrape.Value(row.denominator, match).value();
      next[key] = {num, den};
      if (!has_prev) return std::nullopt;
      const double dd = Growth(den, prev->second.count);
      if (dd <= 0) return std::nullopt;  // nothing queried in the interval: no rate
      return Growth(num, prev->second.value) / dd;
    }
    case R::kCumulativeMean: {
      const double mean = scrape.Value(row.name, match).value();
      const double count = scrape.Value(row.denominator, match).value();
      next[key] = {mean * count, count};  // the total behind the mean
      if (!has_prev) return std::nullopt;
      const double dc = Growth(count, prev->second.count);
      if (dc <= 0) return std::nullopt;  // no decode in the interval
      const double total_before = count >= prev->second.count ? prev->second.value : 0;
      return std::max(0.0, mean * count - total_before) / dc;
    }
    case R::kHistogramMean: {
      const HistogramData h = scrape.Histogram(row.name, match).value();
      next[key] = {h.sum, h.count};
      if (!has_prev) return std::nullopt;
      const double dc = Growth(h.count, prev->second.count);
      if (dc <= 0) return std::nullopt;  // nothing observed in the interval
      return Growth(h.sum, prev->second.value) / dc * row.scale;
    }
  }
  return std::nullopt;
}

json SignalSampler::Sample(const Scrape& scrape, double t_s) {
  json line = {{"t_s", t_s}};
  if (first_) engine_ = DetectEngine(scrape);
  const double dt_s = first_ ? 0 : t_s - last_t_s_;
  std::map<std::string, Cumulative> next;
  json signals = json::object();
  json missing = json::array();
  for (std::string_view signal : kCanonicalSignals) {
    bool found = false;
    for (const SignalRow& row : kRows) {
      if (row.engine != engine_ || row.signal != signal || !Exported(row, scrape)) continue;
      found = true;
      if (std::optional<double> v = Evaluate(row, scrape, dt_s, next)) signals[std::string(signal)] = *v;
      break;
    }
    if (!found) missing.push_back(signal);
  }
  line["signals"] = std::move(signals);
  if (first_) {
    line["engine"] = EngineName(scrape);
    line["missing"] = std::move(missing);
  }
  if (engine_ == "unknown") {
    // No mapping: keep the raw series (histogram buckets left out), summed over label sets.
    json raw = json::object();
    for (const auto& s : scrape.samples()) {
      if (s.name.ends_with("_bucket")) continue;
      if (!raw.contains(s.name) && raw.size() >= kMaxRawSeries) continue;
      raw[s.name] = raw.value(s.name, 0.0) + s.value;
    }
    line["raw"] = std::move(raw);
  }
  last_ = std::move(next);
  last_t_s_ = t_s;
  first_ = false;
  return line;
}

}  // namespace infereng::client
