#include "job/diagnose_facts.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "metrics/records_io.h"
#include "metrics/summary_json.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxGaps = 500'000;  // bounded memory on long runs: later gaps are not examined

struct Req {
  double t_sched_s = 0;
  double ttft_ms = 0;
  double prompt = 0;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

double Pearson(const std::vector<Req>& r) {
  if (r.size() < 8) return 0;
  double mx = 0, my = 0;
  for (const Req& q : r) mx += q.prompt, my += q.ttft_ms;
  mx /= static_cast<double>(r.size());
  my /= static_cast<double>(r.size());
  double sxy = 0, sxx = 0, syy = 0;
  for (const Req& q : r) {
    sxy += (q.prompt - mx) * (q.ttft_ms - my);
    sxx += (q.prompt - mx) * (q.prompt - mx);
    syy += (q.ttft_ms - my) * (q.ttft_ms - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

// Does any first-token time fall inside (a, b]?
bool AnyIn(const std::vector<double>& sorted, double a, double b) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), a);
  return it != sorted.end() && *it <= b;
}

std::string FirstExisting(const std::string& dir, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / n, ec)) return (fs::path(dir) / n).string();
  }
  return "";
}

Status ReadRecords(RunFacts& f) {
  const double w0 = f.summary.window_start_s, w1 = f.summary.window_end_s;
  std::vector<Req> reqs;
  std::vector<double> first_tokens;                // every request's first token (s), any window
  std::vector<std::pair<double, double>> gaps;     // (start, end) in s, in-window requests
  INFERENG_RETURN_IF_ERROR(metrics::ForEachRecordInFile(f.records_path, [&](metrics::RequestRecord&& r) {
    if (!r.chunks.empty()) first_tokens.push_back(NanosToSeconds(r.chunks.front().t));
    const double ts = NanosToSeconds(r.t_sched);
    if (!r.ok() || r.chunks.empty() || r.t_send < 0 || ts < w0 || (w1 > w0 && ts > w1)) return Status::Ok();
    Req q;
    q.t_sched_s = ts;
    q.ttft_ms = NanosToMillis(r.chunks.front().t - r.t_send);
    q.prompt = static_cast<double>(r.prompt_tokens >= 0 ? r.prompt_tokens : r.input_tokens_target);
    reqs.push_back(q);
    for (size_t i = 1; i < r.chunks.size() && gaps.size() < kMaxGaps; ++i) {
      gaps.emplace_back(NanosToSeconds(r.chunks[i - 1].t), NanosToSeconds(r.chunks[i].t));
    }
    return Status::Ok();
  }));
  f.requests_used = static_cast<int64_t>(reqs.size());
  if (reqs.empty()) return Status::Ok();
  for (const Req& q : reqs) f.prompt_tokens_mean += q.prompt;
  f.prompt_tokens_mean /= static_cast<double>(reqs.size());
  f.prompt_ttft_correlation = Pearson(reqs);
  if (reqs.size() >= 8) {
    std::vector<Req> by_prompt = reqs;
    std::sort(by_prompt.begin(), by_prompt.end(), [](const Req& a, const Req& b) { return a.prompt < b.prompt; });
    const size_t q = by_prompt.size() / 4;
    std::vector<double> shortest, longest;
    for (size_t i = 0; i < q; ++i) shortest.push_back(by_prompt[i].ttft_ms);
    for (size_t i = by_prompt.size() - q; i < by_prompt.size(); ++i) longest.push_back(by_prompt[i].ttft_ms);
    const double s = Median(shortest);
    if (s > 0 && by_prompt.back().prompt > by_prompt.front().prompt) f.ttft_long_over_short = Median(longest) / s;
  }
  // TTFT by send time: the first and last third of the window.
  const double third = (w1 - w0) / 3;
  double a = 0, b = 0;
  int64_t na = 0, nb = 0;
  for (const Req& q : reqs) {
    if (q.t_sched_s < w0 + third) a += q.ttft_ms, ++na;
    if (q.t_sched_s >= w1 - third) b += q.ttft_ms, ++nb;
  }
  if (na > 0) f.ttft_first_third_ms = a / static_cast<double>(na);
  if (nb > 0) f.ttft_last_third_ms = b / static_cast<double>(nb);
  // ITL spikes and other requests' prefills (a first token marks the end of a prefill).
  std::sort(first_tokens.begin(), first_tokens.end());
  std::vector<double> widths;
  widths.reserve(gaps.size());
  for (const auto& [s, e] : gaps) widths.push_back(e - s);
  const double median = Median(widths);
  int64_t with = 0, spikes = 0, spikes_with = 0;
  for (const auto& [s, e] : gaps) {
    const bool prefill = AnyIn(first_tokens, s, e);
    with += prefill;
    if (median > 0 && e - s > 3 * median) {
      ++spikes;
      spikes_with += prefill;
    }
  }
  f.itl_gaps = static_cast<int64_t>(gaps.size());
  f.itl_spikes = spikes;
  if (!gaps.empty()) f.gaps_with_prefill = static_cast<double>(with) / static_cast<double>(gaps.size());
  if (spikes > 0) f.spikes_with_prefill = static_cast<double>(spikes_with) / static_cast<double>(spikes);
  return Status::Ok();
}

Status ReadEngineSeries(RunFacts& f) {
  std::ifstream in(f.engine_path);
  if (!in) return Status::IoError(f.engine_path + ": cannot open");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json j = json::parse(line, nullptr, false);
    const std::string where = f.engine_path + ":" + std::to_string(n);
    if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(where + ": not a JSON object");
    if (!j.contains("t_s") || !j["t_s"].is_number()) return Status::InvalidArgument(where + ": t_s: expected a number");
    if (j.contains("error")) {
      ++f.engine_scrape_errors;
      continue;
    }
    if (j.contains("engine") && j["engine"].is_string()) f.engine = j["engine"].get<std::string>();
    if (j.contains("missing") && j["missing"].is_array()) {
      for (const json& m : j["missing"]) {
        if (m.is_string()) f.missing_signals.push_back(m.get<std::string>());
      }
    }
    if (!j.contains("signals") || !j["signals"].is_object()) {
      return Status::InvalidArgument(where + ": signals: expected an object");
    }
    const double t = j["t_s"].get<double>();
    for (const auto& [name, v] : j["signals"].items()) {
      if (!v.is_number()) continue;  // NaN is written as null
      SignalSeries& s = f.signals[name];
      s.t_s.push_back(t);
      s.v.push_back(v.get<double>());
    }
  }
  if (f.engine.empty()) f.engine = "unknown";
  return Status::Ok();
}

}  // namespace

double SignalSeries::Max() const { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
double SignalSeries::Sum() const {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double SignalSeries::Mean() const { return v.empty() ? 0 : Sum() / static_cast<double>(v.size()); }
double SignalSeries::MeanBetween(double from_s, double to_s) const {
  double s = 0;
  int64_t n = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (t_s[i] >= from_s && t_s[i] < to_s) s += v[i], ++n;
  }
  return n > 0 ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

const SignalSeries* RunFacts::Signal(const std::string& name) const {
  auto it = signals.find(name);
  return it == signals.end() || it->second.empty() ? nullptr : &it->second;
}

Result<RunFacts> LoadRunFacts(const std::string& dir) {
  RunFacts f;
  f.dir = dir;
  f.summary_path = (fs::path(dir) / "summary.json").string();
  std::error_code ec;
  if (!fs::exists(f.summary_path, ec)) {
    return Status::NotFound(f.summary_path + ": no summary.json (is " + dir + " a run directory?)");
  }
  INFERENG_ASSIGN_OR_RETURN(f.summary, metrics::ReadSummaryFile(f.summary_path));
  {
    std::ifstream in(f.summary_path);
    const json j = json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.contains("client") && j["client"].is_object() && j["client"].contains("cpu_s") &&
        j["client"]["cpu_s"].is_number()) {
      f.client_cpu_s = j["client"]["cpu_s"].get<double>();
    }
    if (!j.is_discarded() && j.contains("client") && j["client"].is_object() &&
        j["client"].contains("saturation") && j["client"]["saturation"].is_object()) {
      f.client_saturation = j["client"]["saturation"];
    }
  }
  f.records_path = FirstExisting(dir, {"requests.jsonl", "records.jsonl", "trial-1/requests.jsonl"});
  if (!f.records_path.empty()) INFERENG_RETURN_IF_ERROR(ReadRecords(f));
  f.engine_path = FirstExisting(dir, {"engine_metrics.jsonl", "trial-1/engine_metrics.jsonl"});
  if (!f.engine_path.empty()) INFERENG_RETURN_IF_ERROR(ReadEngineSeries(f));
  // Burstiness of the sends: coefficient of variation of sends per in-window bucket.
  std::vector<double> sent;
  for (const metrics::TimeBucket& b : f.summary.timeseries) {
    if (b.start_s >= f.summary.window_start_s && b.start_s + b.width_s <= f.summary.window_end_s) {
      sent.push_back(static_cast<double>(b.sent) / b.width_s);
    }
  }
  if (sent.size() >= 3) {
    double m = 0, v = 0;
    for (double x : sent) m += x;
    m /= static_cast<double>(sent.size());
    for (double x : sent) v += (x - m) * (x - m);
    if (m > 0) f.sent_cv = std::sqrt(v / static_cast<double>(sent.size())) / m;
  }
  return f;
}

}  // namespace infereng::job
