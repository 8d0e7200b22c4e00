// Files and terminal text of a sweep: sweep.json (the full result, re-read by `report`),
// sweep.csv (one row per point, for spreadsheets and plotting elsewhere) and the terminal
// table printed after each sweep. Also the SweepPoint view of a run's Summary.
//
// sweep.json schema "infereng.sweep/1":
//   {"schema", "kind": "rate"|"concurrency", "unit", "card", "source", "target",
//    "attainment_target", "stop_reason", "error", "notes": [...],
//    "saturation_load", "knee_load", "max_throughput_rps",
//    "max_goodput": {"load", "goodput_rps", "binding_slo"} | null,
//    "points": [point...], "predicted": [point...] (twin, optional)}
// A point: {"load", "dir", "source", "offered_rps", "throughput_rps", "output_tok_s",
//   "goodput_rps", "attainment", "attainment_target", "slo_pass", "saturated",
//   "stopped_early", "saturation_reason", "requests", "errors",
//   "ttft_ms"/"itl_ms"/"e2e_ms"/"tpot_ms": {"p50","p90","p99","count"},
//   "slo_met_share": {per-request threshold label: share},
//   "objectives": [{"label","value","threshold","floor","pass","samples"}]}
// Top level also has "goodput_thresholds" (text: the per-request thresholds goodput used).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "metrics/summary.h"
#include "sweep/point.h"

namespace infereng::sweep {

// A sweep result plus, optionally, the twin's prediction at the same loads.
struct SweepFile {
  SweepResult result;
  std::vector<SweepPoint> predicted;  // empty when not simulated alongside
};

nlohmann::json PointToJson(const SweepPoint& p);
Result<SweepPoint> PointFromJson(const nlohmann::json& j, const std::string& where);
nlohmann::json SweepToJson(const SweepFile& f);
Result<SweepFile> SweepFromJson(const nlohmann::json& j);

Status WriteSweepJson(const std::string& path, const SweepFile& f);
Result<SweepFile> ReadSweepJson(const std::string& path);
Status WriteSweepCsv(const std::string& path, const SweepResult& r);

// The point view of a run's summary (load is the caller's; saturation flags untouched).
SweepPoint PointFromSummary(double load, const metrics::Summary& s);

// "ttft p99 <= 500 ms" — the label of a percentile objective (SweepPoint::objectives).
std::string SloLabel(const metrics::SloResult& slo);
// "ttft <= 500 ms per request" — the key of SweepPoint::slo_met_share.
std::string ThresholdLabel(const card::RequestThreshold& t);

// The table printed after a sweep: one row per point, then the conclusions.
std::string FormatSweepTable(const SweepResult& r);
// One progress line for a finished point.
std::string FormatPointLine(const SweepPoint& p, LoadKind kind);

}  // namespace infereng::sweep
