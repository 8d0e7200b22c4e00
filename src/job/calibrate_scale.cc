// FitTableScale (calibrate_scale.h): each run's own schedule replayed through the twin, the
// measured table scaled until the simulated TPOT P50 is the run's.
#include "job/calibrate_scale.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "twin/simulation.h"

namespace infereng::job {

namespace {

// The run's TPOT P50 from its summary.json (ms), nullopt when absent.
std::optional<double> SummaryTpotP50(const std::string& dir) {
  std::ifstream in(dir + "/summary.json");
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("tpot_ms") || !j["tpot_ms"].is_object() || !j["tpot_ms"].contains("p50") ||
      !j["tpot_ms"]["p50"].is_number()) {
    return std::nullopt;
  }
  const double v = j["tpot_ms"]["p50"].get<double>();
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

// A request's TPOT in ms as every report derives it (metrics/derive.h); NaN when it failed
// or has none (fewer than 2 tokens or output events).
double RequestTpotMs(const metrics::RequestRecord& r) {
  if (!r.ok()) return NAN;
  return metrics::DeriveRequest(r, {.want_itl = false}).tpot_ms.value_or(NAN);
}

// The median of sim_i / measured_i over the requests both sides decoded (`measured` indexed
// as the trace's lines, `sim` the twin's records, id = trace line); NaN when none pairs.
double MedianTpotRatio(const std::vector<double>& measured, const std::vector<metrics::RequestRecord>& sim) {
  std::vector<double> ratios;
  for (const metrics::RequestRecord& r : sim) {
    if (r.id >= measured.size() || !(measured[r.id] > 0)) continue;
    const double t = RequestTpotMs(r);
    if (t > 0) ratios.push_back(t / measured[r.id]);
  }
  if (ratios.empty()) return NAN;
  const size_t m = ratios.size() / 2;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(m), ratios.end());
  if (ratios.size() % 2) return ratios[m];
  const double upper = ratios[m];
  return (*std::max_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(m)) + upper) / 2;
}

// Mooncake JSONL of the run's sent requests (ms from the first send); their count. Each
// written request's TPOT (NaN where it has none) goes to `tpot_ms`, in trace order.
Result<int64_t> WriteTrace(const std::vector<metrics::RequestRecord>& records, const std::string& path,
                           std::vector<double>* tpot_ms) {
  std::vector<const metrics::RequestRecord*> sent;
  for (const metrics::RequestRecord& r : records) {
    if (r.t_send >= 0) sent.push_back(&r);
  }
  std::sort(sent.begin(), sent.end(), [](auto* a, auto* b) { return a->t_send < b->t_send; });
  std::ofstream out(path);
  if (!out) return Status::IoError(path + ": cannot write the replay trace");
  int64_t next_hash = 0, n = 0;
  for (const metrics::RequestRecord* r : sent) {
    const int64_t prompt = r->prompt_tokens > 0 ? r->prompt_tokens : r->input_tokens_target;
    const int64_t output = r->completion_tokens > 0 ? r->completion_tokens : r->output_tokens_target;
    if (prompt <= 0 || output <= 0) continue;
    tpot_ms->push_back(RequestTpotMs(*r));
    nlohmann::json ids = nlohmann::json::array();
    for (int64_t b = 0; b < (prompt + 511) / 512; ++b) ids.push_back(next_hash++);
    out << nlohmann::json{{"timestamp", static_cast<double>(r->t_send - sent.front()->t_send) / 1e6},
                          {"input_length", prompt},
                          {"output_length", output},
                          {"hash_ids", ids}}
               .dump()
        << "\n";
    ++n;
  }
  if (!out) return Status::IoError(path + ": cannot write the replay trace");
  return n;
}

}  // namespace

void ScaleTable(twin::MeasuredTable* table, double scale) {
  for (double& y : table->tokens.y) y *= scale;
  for (double& y : table->context.y) y *= scale;
  for (auto& row : table->occupancy.seconds) {
    for (double& v : row) v *= scale;
  }
}

Result<TableScaleFit> FitTableScale(const card::WorkloadCard& card, const twin::TwinSetup& setup,
                                    const std::vector<std::string>& run_dirs, const std::string& tmp_dir) {
  TableScaleFit fit;
  std::error_code ec;
  std::filesystem::create_directories(tmp_dir, ec);
  double log_sum = 0;
  for (std::size_t i = 0; i < run_dirs.size(); ++i) {
    const std::string& dir = run_dirs[i];
    INFERENG_ASSIGN_OR_RETURN(std::vector<metrics::RequestRecord> records,
                              metrics::ReadRecordsFile(dir + "/requests.jsonl"));
    int decoded = 0;
    for (const metrics::RequestRecord& r : records) decoded += r.ok() && r.completion_tokens >= 2 ? 1 : 0;
    const std::optional<double> measured = SummaryTpotP50(dir);
    if (decoded < 5 || !measured) {
      fit.notes.push_back("table scale: " + dir + " skipped (" +
                          (measured ? std::to_string(decoded) + " requests with 2+ output tokens, 5 needed"
                                    : std::string("no tpot_ms.p50 in its summary.json")) + ")");
      continue;
    }
    const std::string trace = tmp_dir + "/replay-" + std::to_string(i) + ".jsonl";
    std::vector<double> measured_tpot;
    INFERENG_ASSIGN_OR_RETURN(int64_t n, WriteTrace(records, trace, &measured_tpot));
    card::WorkloadCard c = card;
    c.traffic.arrival = card::ArrivalSpec{};
    c.traffic.arrival.kind = card::ArrivalSpec::Kind::kTrace;
    c.traffic.arrival.trace_file = trace;
    c.traffic.arrival.trace_format = "mooncake";
    c.bench.requests = n;
    c.bench.warmup_s = 0;
    twin::SimulationOptions so;
    so.warmup_s = 0;
    so.keep_records = true;
    RunScale rs{.run = dir, .measured_tpot_ms = *measured};
    // The target: the median over requests of (twin's TPOT / run's TPOT) = 1, request by
    // request (the replay sends the same requests at the same times). Not the TPOT P50: with
    // a few dozen requests, some decoding alone and some beside another's prefill, the P50 is
    // one request's, and a 4% change of k moved it by 24% on llama.cpp (FIDELITY.md (b5)).
    // k <- k / ratio until two k's bracket 1, then bisection (in log k): the ratios still
    // move in small steps with k (whole scheduling events).
    double k = 1, lo = 0, hi = 0;  // lo/hi: a k simulated below / above the run (0: none yet)
    double best_k = 1, best_err = INFINITY, best_sim = 0;
    for (int round = 0; round < 12; ++round) {
      twin::TwinSetup s = setup;
      s.cost = std::make_shared<ScaledCostModel>(setup.cost, k);
      INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult r, twin::RunSimulation(c, s, so));
      const double sim = r.summary.tpot_ms.p50;
      const double ratio = MedianTpotRatio(measured_tpot, r.records);  // twin / run
      if (!(sim > 0) || !(ratio > 0)) {
        return Status::FailedPrecondition(dir + ": the twin's replay of this run has no TPOT to pair with the run's");
      }
      if (round == 0) rs.simulated_tpot_ms_before = sim;
      if (std::abs(ratio - 1) < best_err) {
        best_err = std::abs(ratio - 1);
        best_k = k;
        best_sim = sim;
      }
      if (best_err < 0.005) break;
      (ratio < 1 ? lo : hi) = k;
      k = lo > 0 && hi > 0 ? std::sqrt(lo * hi) : std::clamp(k / ratio, 0.05, 20.0);
    }
    k = best_k;
    rs.simulated_tpot_ms_after = best_sim;
    rs.scale = k;
    log_sum += std::log(k);
    fit.runs.push_back(rs);
  }
  if (fit.runs.empty()) return fit;
  fit.ok = true;
  fit.scale = std::exp(log_sum / static_cast<double>(fit.runs.size()));
  for (const RunScale& r : fit.runs) fit.spread = std::max(fit.spread, std::abs(std::log(r.scale / fit.scale)));
  return fit;
}

}  // namespace infereng::job
