// SweepPoint and SweepResult: what a load sweep knows about each load point and what it
// concluded (the saturation point, max goodput under the SLO and the SLO that binds it).
//
// Plain values shared by the search (search.h), the runners (runner.h), the files
// (sweep_io.h: sweep.json / sweep.csv) and the report. Loads are "offered load" in the
// sweep's unit: requests/s for --by rate, concurrent requests for --by concurrency.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace infereng::sweep {

enum class LoadKind { kRate, kConcurrency };
const char* LoadKindName(LoadKind k);  // "rate" | "concurrency"
const char* LoadUnit(LoadKind k);      // "req/s" | "concurrent"

struct Latency {
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  int64_t count = 0;  // 0: no samples (p* meaningless)
};

// One objective of the card as judged at a point: a percentile objective ("ttft p99 <= 500
// ms": value = the run's P99) or the throughput floor ("output >= 1000 tok/s").
struct ObjectiveCheck {
  std::string label;   // "ttft p99 <= 500 ms"
  double value = 0;    // measured (ms, or tok/s for the floor)
  double threshold = 0;
  bool floor = false;  // true: value must be >= threshold (throughput); else <=
  bool pass = false;
  int64_t samples = -1;  // percentile objectives: the distribution's size (0: n/a); -1 unknown

  // > 1 fails: how far past its threshold the objective is.
  double Excess() const {
    if (floor) return value > 0 ? threshold / value : 1e300;
    return threshold > 0 ? (samples == 0 ? 1e300 : value / threshold) : 0;
  }
};

struct SweepPoint {
  double load = 0;              // offered load (rate or concurrency)
  std::string dir;              // relative to the sweep dir: "points/03-8.00"; "" when none
  std::string source = "measured";  // "measured" | "simulated"

  double offered_rps = 0;       // from the summary (rate basis)
  double throughput_rps = 0;    // successful completions per second
  double output_tok_s = 0;      // system-wide output tokens per second
  double goodput_rps = 0;
  double attainment = 0;        // 0..1 SLO attainment
  double attainment_target = 0.99;
  bool slo_pass = false;        // every objective as written, the attainment target and the floor

  Latency ttft_ms, itl_ms, e2e_ms, tpot_ms;  // TTFT incl. queue in open loop
  int64_t requests = 0;         // in window
  double window_s = 0;          // the summary's rate basis (0 = unknown)
  int64_t errors = 0;

  bool saturated = false;       // the in-point detector said so (or the runner gave up)
  bool stopped_early = false;   // the point was cut short because it was saturated
  std::string saturation_reason;

  // Per-request threshold (goodput, attainment): share of requests meeting it, keyed
  // "ttft <= 500 ms per request" (ThresholdLabel). Sweeps before 2026-12 keyed it by objective.
  std::map<std::string, double> slo_met_share;
  std::vector<ObjectiveCheck> objectives;  // percentile objectives and the floor, as judged here

  double Margin() const { return attainment - attainment_target; }
};

// A latency objective of the card, kept so charts can draw it.
struct SloLine {
  std::string metric;   // "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms"
  double percentile = 99;
  double threshold_ms = 0;
};

struct SweepResult {
  LoadKind kind = LoadKind::kRate;
  std::string card_name;
  std::string source = "measured";
  std::string target;              // URL or "embedded" / "twin"
  double speedup = 1;              // embedded engine: point files are in wall time, engine time ran this much faster
  std::vector<SweepPoint> points;  // sorted by load

  // The knee: the highest-throughput point before throughput stops growing (saturation).
  std::optional<std::size_t> knee;
  std::optional<double> saturation_load;   // lowest load seen saturated
  double max_throughput_rps = 0;           // highest achieved throughput of any point
  // Max goodput under the SLO: the highest load meeting the attainment target.
  std::optional<std::size_t> max_goodput;
  std::string binding_slo;                 // the objective (or attainment) that fails first above max_goodput
  std::string goodput_thresholds;          // the per-request thresholds, as DescribeGoodputThresholds says
  double attainment_target = 0.99;
  std::vector<SloLine> slos;
  std::string stop_reason;                 // why the search ended
  std::vector<std::string> notes;          // warnings (e.g. "no passing load found")
  std::string error;                       // a point failed to run: the sweep stopped there
  bool partial = false;                    // interrupted by the user: the finished points only
};

}  // namespace infereng::sweep
