// Hand-made run and sweep directories for the report tests (header-only, test use only):
// synthetic records written with the real writers (records_io, summary_json), so the
// tests follow the file formats wherever they go.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "sweep/search.h"
#include "sweep/sweep_io.h"

namespace infereng::report::testing {

struct SyntheticRun {
  int requests = 120;
  double interval_ms = 50;      // open-loop spacing
  double ttft_ms = 80;          // base
  double queue_growth_ms = 0;   // added per request (a saturating run)
  double itl_ms = 12;
  int tokens = 20;
  bool server_breakdown = true; // twin-style t_server_scheduled / t_prefill_done
  bool reported_phases = false; // a measured engine's `timings` (server_queue / _prefill / _decode)
  int error_every = 0;          // every Nth request fails (0 = none)
  bool all_errors = false;
  std::string error_message = "HTTP 503: overloaded";
};

inline std::vector<metrics::RequestRecord> MakeRecords(const SyntheticRun& s) {
  std::vector<metrics::RequestRecord> out;
  for (int i = 0; i < s.requests; ++i) {
    metrics::RequestRecord r;
    r.id = static_cast<uint64_t>(i);
    r.t_sched = MillisToNanos(i * s.interval_ms);
    r.t_send = r.t_sched + 50'000;
    r.t_first_byte = r.t_send + MillisToNanos(2);
    r.input_tokens_target = 200;
    r.output_tokens_target = s.tokens;
    bool fail = s.all_errors || (s.error_every > 0 && i % s.error_every == s.error_every - 1);
    if (fail) {
      r.error = metrics::ErrorClass::kHttp5xx;
      r.http_status = 503;
      r.error_message = s.error_message;
      r.t_end = r.t_send + MillisToNanos(5);
      out.push_back(std::move(r));
      continue;
    }
    double queue = 5 + i * s.queue_growth_ms;
    Nanos first = r.t_send + MillisToNanos(s.ttft_ms + queue + (i % 7) * 3);
    if (s.server_breakdown) {
      r.t_server_scheduled = r.t_send + MillisToNanos(queue);
      r.t_prefill_done = first - MillisToNanos(1);
      r.token_source = metrics::TokenSource::kSimulated;
    }
    if (s.reported_phases) {
      r.server_queue = MillisToNanos(queue);
      r.server_prefill = first - r.t_send - r.server_queue - MillisToNanos(2);  // 2 ms client+network
      r.server_decode = MillisToNanos(s.itl_ms * (s.tokens - 1));
    }
    Nanos t = first;
    for (int k = 0; k < s.tokens; ++k) {
      r.chunks.push_back({t, 1, false});
      t += MillisToNanos(s.itl_ms + (k % 3));
    }
    r.t_end = r.chunks.back().t + MillisToNanos(1);
    r.http_status = 200;
    r.finish_reason = "length";
    r.completion_tokens = s.tokens;
    r.prompt_tokens = 200;
    out.push_back(std::move(r));
  }
  return out;
}

inline card::SloSpec TestSlos() {
  card::SloSpec slo;
  slo.latency.push_back({.metric = "ttft_ms", .percentile = 99, .threshold_ms = 300});
  slo.latency.push_back({.metric = "itl_ms", .percentile = 99, .threshold_ms = 50});
  slo.attainment = 0.95;
  return slo;
}

// Writes requests.jsonl, summary.json and manifest.json into `dir` (created).
inline void WriteRunDir(const std::string& dir, const std::vector<metrics::RequestRecord>& records,
                        const nlohmann::json& manifest = {{"card", {{"name", "test-card"}}}, {"seed", 42}},
                        const std::string& source = "measured") {
  std::filesystem::create_directories(dir);
  auto w = metrics::RecordWriter::Open(dir + "/requests.jsonl", 0);
  if (w.ok()) {
    for (const auto& r : records) (void)(*w)->Write(r);
    (void)(*w)->Close();
  }
  metrics::AccumulatorOptions o;
  o.source = source;
  o.warmup = MillisToNanos(500);
  o.slo = TestSlos();
  (void)metrics::WriteSummaryFile(dir + "/summary.json", metrics::Summarize(records, o));
  std::ofstream(dir + "/manifest.json") << manifest.dump(2);
}

inline int Count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline sweep::SweepFile MakeSweep(const std::string& dir, std::vector<double> loads, bool with_dirs) {
  sweep::SweepFile f;
  f.result.card_name = "sweep-card";
  f.result.target = "embedded";
  f.result.slos = {{"ttft_ms", 99, 300}, {"itl_ms", 99, 50}};
  f.result.attainment_target = 0.95;
  for (std::size_t i = 0; i < loads.size(); ++i) {
    double l = loads[i];
    sweep::SweepPoint p;
    p.load = l;
    p.offered_rps = l;
    p.throughput_rps = std::min(l, 10.0);
    p.output_tok_s = p.throughput_rps * 20;
    p.attainment = l <= 6 ? 1.0 : 0.5;
    p.attainment_target = 0.95;
    p.slo_pass = p.attainment >= 0.95;
    p.goodput_rps = p.throughput_rps * p.attainment;
    p.saturated = l > 10;
    p.ttft_ms = {.p50 = 80 + l * 5, .p90 = 90 + l * 5, .p99 = l > 10 ? 5000 : 120 + l * 20, .count = 100};
    p.itl_ms = {.p50 = 12, .p90 = 14, .p99 = 20 + l, .count = 2000};
    p.e2e_ms = {.p50 = 400 + l * 10, .p90 = 500, .p99 = l > 10 ? 9000 : 700 + l * 30, .count = 100};
    p.requests = 100;
    p.slo_met_share = {{"ttft p99 <= 300 ms", p.attainment}};
    if (with_dirs) {
      p.dir = fmt::format("points/{:02}-{}", i, l);
      WriteRunDir(dir + "/" + p.dir, MakeRecords({.interval_ms = 1000 / l, .queue_growth_ms = l > 10 ? 20.0 : 0.0}));
    }
    f.result.points.push_back(p);
  }
  sweep::AnalyzeSweep(f.result);
  return f;
}

// A fresh empty directory under the system temp dir.
inline std::string FreshDir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("infereng-report-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace infereng::report::testing
