// FitTableScale (calibrate_scale.h): each run's own schedule replayed through the twin, the
// measured table scaled until the simulated TPOT P50 is the run's.
#include "job/calibrate_scale.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

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

// Mooncake JSONL of the run's sent requests (ms from the first send); their count.
Result<int64_t> WriteTrace(const std::vector<metrics::RequestRecord>& records, const std::string& path) {
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
    INFERENG_ASSIGN_OR_RETURN(int64_t n, WriteTrace(records, trace));
    card::WorkloadCard c = card;
    c.traffic.arrival = card::ArrivalSpec{};
    c.traffic.arrival.kind = card::ArrivalSpec::Kind::kTrace;
    c.traffic.arrival.trace_file = trace;
    c.traffic.arrival.trace_format = "mooncake";
    c.bench.requests = n;
    c.bench.warmup_s = 0;
    twin::SimulationOptions so;
    so.warmup_s = 0;
    RunScale rs{.run = dir, .measured_tpot_ms = *measured};
    // k <- k x measured / simulated until the two bracket the run, then bisection (in log
    // k): the simulated TPOT moves in steps with k (whole scheduling events), so the plain
    // update can jump back and forth.
    double k = 1, lo = 0, hi = 0;  // lo/hi: a k simulated below / above the run (0: none yet)
    double best_k = 1, best_err = INFINITY, best_sim = 0;
    for (int round = 0; round < 12; ++round) {
      twin::TwinSetup s = setup;
      s.cost = std::make_shared<ScaledCostModel>(setup.cost, k);
      INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult r, twin::RunSimulation(c, s, so));
      const double sim = r.summary.tpot_ms.p50;
      if (!(sim > 0)) return Status::FailedPrecondition(dir + ": the twin's replay of this run has no TPOT");
      if (round == 0) rs.simulated_tpot_ms_before = sim;
      const double ratio = *measured / sim;
      if (std::abs(ratio - 1) < best_err) {
        best_err = std::abs(ratio - 1);
        best_k = k;
        best_sim = sim;
      }
      if (best_err < 0.005) break;
      (sim < *measured ? lo : hi) = k;
      k = lo > 0 && hi > 0 ? std::sqrt(lo * hi) : std::clamp(k * ratio, 0.05, 20.0);
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
