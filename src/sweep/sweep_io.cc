#include "sweep/sweep_io.h"

#include "core/path_names.h"
#include "card/slo.h"
#include "sweep/search.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/numeric.h"

#include "core/units.h"

namespace infereng::sweep {
namespace {

using nlohmann::json;

json LatencyToJson(const Latency& l) {
  if (l.count == 0) return {{"p50", nullptr}, {"p90", nullptr}, {"p95", nullptr}, {"p99", nullptr}, {"count", 0}};
  return {{"p50", l.p50}, {"p90", l.p90}, {"p95", l.p95}, {"p99", l.p99}, {"count", l.count}};
}

Latency LatencyFromStats(const stats::SampleStats& s) {
  return {.p50 = s.p50, .p90 = s.p90, .p95 = s.p95, .p99 = s.p99, .count = s.count};
}

// Reads an optional number; null and absence keep `fallback`.
Status Num(const json& j, const char* key, double* out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number()) return Status::InvalidArgument(fmt::format("{}.{}: expected a number", where, key));
  *out = it->get<double>();
  return Status::Ok();
}

// Reads an optional whole number (a count); a fraction or a value beyond int64 is an
// error, never a cast (undefined for out-of-range doubles).
Status Int(const json& j, const char* key, int64_t* out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  std::optional<int64_t> v;
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) v = it->get<int64_t>();
  } else if (it->is_number_integer()) {
    v = it->get<int64_t>();
  } else if (it->is_number_float()) {
    v = DoubleToInt64(it->get<double>());
  }
  if (!v) return Status::InvalidArgument(fmt::format("{}.{}: expected a whole number, got {}", where, key, it->dump()));
  *out = *v;
  return Status::Ok();
}

Status Bool(const json& j, const char* key, bool* out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return Status::InvalidArgument(fmt::format("{}.{}: expected true or false", where, key));
  *out = it->get<bool>();
  return Status::Ok();
}

Status Str(const json& j, const char* key, std::string* out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Status::InvalidArgument(fmt::format("{}.{}: expected a string", where, key));
  *out = it->get<std::string>();
  return Status::Ok();
}

Status LatencyFromJson(const json& j, const char* key, Latency* out, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) return Status::InvalidArgument(fmt::format("{}.{}: expected an object", where, key));
  std::string w = where + "." + key;
  INFERENG_RETURN_IF_ERROR(Num(*it, "p50", &out->p50, w));
  INFERENG_RETURN_IF_ERROR(Num(*it, "p90", &out->p90, w));
  INFERENG_RETURN_IF_ERROR(Num(*it, "p95", &out->p95, w));
  INFERENG_RETURN_IF_ERROR(Num(*it, "p99", &out->p99, w));
  return Int(*it, "count", &out->count, w);
}

json SlosToJson(const std::vector<SloLine>& slos) {
  json a = json::array();
  for (const SloLine& s : slos) a.push_back({{"metric", s.metric}, {"percentile", s.percentile}, {"threshold_ms", s.threshold_ms}});
  return a;
}

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// Table numbers: 4 significant digits, never an exponent ("12345", not "1.234e+04").
std::string Sig(double v, int digits = 4) { return units::FormatSignificant(v, digits); }
std::string Cell(const Latency& l, double v) { return l.count > 0 ? Sig(v) : "-"; }

json ObjectivesToJson(const std::vector<ObjectiveCheck>& objectives) {
  json a = json::array();
  for (const ObjectiveCheck& o : objectives) {
    a.push_back({{"label", o.label}, {"value", o.value}, {"threshold", o.threshold}, {"floor", o.floor},
                 {"pass", o.pass}, {"samples", o.samples}});
  }
  return a;
}

Status ObjectivesFromJson(const json& j, const std::string& w, std::vector<ObjectiveCheck>* out) {
  auto it = j.find("objectives");
  if (it == j.end() || it->is_null()) return Status::Ok();  // sweeps before objectives were kept
  if (!it->is_array()) return Status::InvalidArgument(w + ".objectives: expected an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const std::string at = fmt::format("{}.objectives[{}]", w, i);
    const json& e = (*it)[i];
    if (!e.is_object()) return Status::InvalidArgument(at + ": expected an object");
    ObjectiveCheck o;
    INFERENG_RETURN_IF_ERROR(Str(e, "label", &o.label, at));
    INFERENG_RETURN_IF_ERROR(Num(e, "value", &o.value, at));
    INFERENG_RETURN_IF_ERROR(Num(e, "threshold", &o.threshold, at));
    INFERENG_RETURN_IF_ERROR(Bool(e, "floor", &o.floor, at));
    INFERENG_RETURN_IF_ERROR(Bool(e, "pass", &o.pass, at));
    INFERENG_RETURN_IF_ERROR(Int(e, "samples", &o.samples, at));
    out->push_back(std::move(o));
  }
  return Status::Ok();
}

}  // namespace

json PointToJson(const SweepPoint& p) {
  return {{"load", p.load},
          {"dir", p.dir},
          {"source", p.source},
          {"offered_rps", p.offered_rps},
          {"throughput_rps", p.throughput_rps},
          {"output_tok_s", p.output_tok_s},
          {"goodput_rps", p.goodput_rps},
          {"attainment", p.attainment},
          {"attainment_target", p.attainment_target},
          {"slo_pass", p.slo_pass},
          {"saturated", p.saturated},
          {"stopped_early", p.stopped_early},
          {"saturation_reason", p.saturation_reason},
          {"requests", p.requests},
          {"window_s", p.window_s},
          {"errors", p.errors},
          {"ttft_ms", LatencyToJson(p.ttft_ms)},
          {"itl_ms", LatencyToJson(p.itl_ms)},
          {"e2e_ms", LatencyToJson(p.e2e_ms)},
          {"tpot_ms", LatencyToJson(p.tpot_ms)},
          {"slo_met_share", p.slo_met_share},
          {"objectives", ObjectivesToJson(p.objectives)}};
}

Result<SweepPoint> PointFromJson(const json& j, const std::string& w) {
  if (!j.is_object()) return Status::InvalidArgument(w + ": expected an object");
  SweepPoint p;
  INFERENG_RETURN_IF_ERROR(Num(j, "load", &p.load, w));
  INFERENG_RETURN_IF_ERROR(Str(j, "dir", &p.dir, w));
  // The report writes into each point's folder: a dir leading out of the sweep is refused.
  if (!p.dir.empty()) {
    if (Status s = CheckRelativePathInside(p.dir); !s.ok()) return Status::InvalidArgument(w + ".dir: " + s.message());
  }
  INFERENG_RETURN_IF_ERROR(Str(j, "source", &p.source, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "offered_rps", &p.offered_rps, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "throughput_rps", &p.throughput_rps, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "output_tok_s", &p.output_tok_s, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "goodput_rps", &p.goodput_rps, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "attainment", &p.attainment, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "attainment_target", &p.attainment_target, w));
  INFERENG_RETURN_IF_ERROR(Bool(j, "slo_pass", &p.slo_pass, w));
  INFERENG_RETURN_IF_ERROR(Bool(j, "saturated", &p.saturated, w));
  INFERENG_RETURN_IF_ERROR(Bool(j, "stopped_early", &p.stopped_early, w));
  INFERENG_RETURN_IF_ERROR(Str(j, "saturation_reason", &p.saturation_reason, w));
  INFERENG_RETURN_IF_ERROR(Int(j, "requests", &p.requests, w));
  INFERENG_RETURN_IF_ERROR(Num(j, "window_s", &p.window_s, w));
  INFERENG_RETURN_IF_ERROR(Int(j, "errors", &p.errors, w));
  INFERENG_RETURN_IF_ERROR(LatencyFromJson(j, "ttft_ms", &p.ttft_ms, w));
  INFERENG_RETURN_IF_ERROR(LatencyFromJson(j, "itl_ms", &p.itl_ms, w));
  INFERENG_RETURN_IF_ERROR(LatencyFromJson(j, "e2e_ms", &p.e2e_ms, w));
  INFERENG_RETURN_IF_ERROR(LatencyFromJson(j, "tpot_ms", &p.tpot_ms, w));
  if (auto it = j.find("slo_met_share"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return Status::InvalidArgument(w + ".slo_met_share: expected an object");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_number()) return Status::InvalidArgument(fmt::format("{}.slo_met_share.{}: expected a number", w, k));
      p.slo_met_share[k] = v.get<double>();
    }
  }
  INFERENG_RETURN_IF_ERROR(ObjectivesFromJson(j, w, &p.objectives));
  if (!(p.load > 0)) return Status::InvalidArgument(w + ".load: expected a number > 0");
  return p;
}

json SweepToJson(const SweepFile& f) {
  const SweepResult& r = f.result;
  json points = json::array(), predicted = json::array();
  for (const SweepPoint& p : r.points) points.push_back(PointToJson(p));
  for (const SweepPoint& p : f.predicted) predicted.push_back(PointToJson(p));
  json mg = nullptr;
  if (r.max_goodput) {
    const SweepPoint& p = r.points[*r.max_goodput];
    mg = {{"load", p.load}, {"goodput_rps", p.goodput_rps}, {"binding_slo", r.binding_slo}};
  }
  return {{"schema", "infereng.sweep/1"},
          {"kind", LoadKindName(r.kind)},
          {"unit", LoadUnit(r.kind)},
          {"card", r.card_name},
          {"source", r.source},
          {"target", r.target},
          {"speedup", r.speedup},
          {"attainment_target", r.attainment_target},
          {"stop_reason", r.stop_reason},
          {"error", r.error},
          {"partial", r.partial},
          {"notes", r.notes},
          {"saturation_load", Opt(r.saturation_load)},
          {"knee_load", r.knee ? json(r.points[*r.knee].load) : json(nullptr)},
          {"max_throughput_rps", r.max_throughput_rps},
          {"max_goodput", mg},
          {"binding_slo", r.binding_slo},
          {"slos", SlosToJson(r.slos)},
          {"goodput_thresholds", r.goodput_thresholds},
          {"points", points},
          {"predicted", predicted}};
}

Result<SweepFile> SweepFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("sweep.json: expected an object");
  SweepFile f;
  SweepResult& r = f.result;
  std::string schema, kind = "rate";
  INFERENG_RETURN_IF_ERROR(Str(j, "schema", &schema, "sweep"));
  if (schema.rfind("infereng.sweep/", 0) != 0) {
    return Status::InvalidArgument(fmt::format("sweep.schema: expected \"infereng.sweep/1\", got \"{}\"", schema));
  }
  INFERENG_RETURN_IF_ERROR(Str(j, "kind", &kind, "sweep"));
  if (kind != "rate" && kind != "concurrency") {
    return Status::InvalidArgument(fmt::format("sweep.kind: expected rate or concurrency, got \"{}\"", kind));
  }
  r.kind = kind == "rate" ? LoadKind::kRate : LoadKind::kConcurrency;
  INFERENG_RETURN_IF_ERROR(Str(j, "card", &r.card_name, "sweep"));
  INFERENG_RETURN_IF_ERROR(Str(j, "source", &r.source, "sweep"));
  INFERENG_RETURN_IF_ERROR(Str(j, "target", &r.target, "sweep"));
  INFERENG_RETURN_IF_ERROR(Num(j, "attainment_target", &r.attainment_target, "sweep"));
  INFERENG_RETURN_IF_ERROR(Str(j, "goodput_thresholds", &r.goodput_thresholds, "sweep"));
  INFERENG_RETURN_IF_ERROR(Num(j, "speedup", &r.speedup, "sweep"));
  INFERENG_RETURN_IF_ERROR(Str(j, "stop_reason", &r.stop_reason, "sweep"));
  INFERENG_RETURN_IF_ERROR(Str(j, "error", &r.error, "sweep"));
  INFERENG_RETURN_IF_ERROR(Bool(j, "partial", &r.partial, "sweep"));
  if (auto it = j.find("notes"); it != j.end() && it->is_array()) {
    for (const auto& n : *it) {
      if (n.is_string()) r.notes.push_back(n.get<std::string>());
    }
  }
  if (auto it = j.find("slos"); it != j.end() && it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      std::string w = fmt::format("sweep.slos[{}]", i);
      SloLine s;
      INFERENG_RETURN_IF_ERROR(Str((*it)[i], "metric", &s.metric, w));
      INFERENG_RETURN_IF_ERROR(Num((*it)[i], "percentile", &s.percentile, w));
      INFERENG_RETURN_IF_ERROR(Num((*it)[i], "threshold_ms", &s.threshold_ms, w));
      r.slos.push_back(std::move(s));
    }
  }
  for (const char* key : {"points", "predicted"}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_array()) return Status::InvalidArgument(fmt::format("sweep.{}: expected an array", key));
    for (std::size_t i = 0; i < it->size(); ++i) {
      INFERENG_ASSIGN_OR_RETURN(SweepPoint p, PointFromJson((*it)[i], fmt::format("sweep.{}[{}]", key, i)));
      (std::string(key) == "points" ? r.points : f.predicted).push_back(std::move(p));
    }
  }
  // Conclusions are recomputed from the points, so a hand-edited file stays consistent.
  AnalyzeSweep(r);
  return f;
}

Status WriteSweepJson(const std::string& path, const SweepFile& f) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError(fmt::format("{}: cannot open for writing", path));
  out << SweepToJson(f).dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError(fmt::format("{}: write failed", path));
  return Status::Ok();
}

Result<SweepFile> ReadSweepJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open", path));
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(fmt::format("{}: not valid JSON", path));
  auto f = SweepFromJson(j);
  if (!f.ok()) return f.status().WithContext(path);
  return f;
}

Status WriteSweepCsv(const std::string& path, const SweepResult& r) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError(fmt::format("{}: cannot open for writing", path));
  out << "load,unit,offered_rps,throughput_rps,output_tok_s,goodput_rps,attainment,slo_pass,saturated,stopped_early,"
         "requests,errors,ttft_p50_ms,ttft_p99_ms,itl_p50_ms,itl_p99_ms,e2e_p50_ms,e2e_p99_ms,tpot_p50_ms,tpot_p99_ms,"
         "knee,max_goodput,dir\n";
  auto lat = [](const Latency& l, double v) { return l.count > 0 ? fmt::format("{}", v) : std::string(); };
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", p.load, LoadUnit(r.kind),
                       p.offered_rps, p.throughput_rps, p.output_tok_s, p.goodput_rps, p.attainment, p.slo_pass ? 1 : 0,
                       p.saturated ? 1 : 0, p.stopped_early ? 1 : 0, p.requests, p.errors, lat(p.ttft_ms, p.ttft_ms.p50),
                       lat(p.ttft_ms, p.ttft_ms.p99), lat(p.itl_ms, p.itl_ms.p50), lat(p.itl_ms, p.itl_ms.p99),
                       lat(p.e2e_ms, p.e2e_ms.p50), lat(p.e2e_ms, p.e2e_ms.p99), lat(p.tpot_ms, p.tpot_ms.p50),
                       lat(p.tpot_ms, p.tpot_ms.p99), r.knee == i ? 1 : 0, r.max_goodput == i ? 1 : 0,
                       p.dir.find_first_of(",\"\n") == std::string::npos ? p.dir : std::string("\"") + p.dir + "\"");
  }
  out.close();
  if (!out) return Status::IoError(fmt::format("{}: write failed", path));
  return Status::Ok();
}

std::string SloLabel(const metrics::SloResult& s) {
  return fmt::format("{} p{:g} <= {:g} ms", card::MetricShortName(s.metric), s.percentile, s.threshold_ms);
}

std::string ThresholdLabel(const card::RequestThreshold& t) {
  return fmt::format("{} <= {:g} ms per request", card::MetricShortName(t.metric), t.threshold_ms);
}

SweepPoint PointFromSummary(double load, const metrics::Summary& s) {
  SweepPoint p;
  p.load = load;
  p.source = s.source;
  p.offered_rps = s.offered_rps;
  p.throughput_rps = s.requests_per_s;
  p.output_tok_s = s.output_tokens_per_s;
  p.goodput_rps = s.goodput_rps;
  p.attainment = s.slo_attainment;
  p.attainment_target = s.slo_attainment_target;
  p.slo_pass = s.slo_pass;  // the objectives as written, not attainment alone
  p.ttft_ms = LatencyFromStats(s.open_loop ? s.ttft_incl_queue_ms : s.ttft_ms);
  p.itl_ms = LatencyFromStats(s.itl_ms);
  p.e2e_ms = LatencyFromStats(s.open_loop ? s.e2e_incl_queue_ms : s.e2e_ms);
  p.tpot_ms = LatencyFromStats(s.tpot_ms);
  p.requests = s.counts.in_window;
  p.window_s = s.rate_basis_s;
  p.errors = s.counts.failed;
  for (const metrics::ThresholdResult& t : s.goodput_thresholds) {
    if (t.requests_checked > 0) {
      p.slo_met_share[ThresholdLabel(t.threshold)] =
          static_cast<double>(t.requests_met) / static_cast<double>(t.requests_checked);
    }
  }
  for (const metrics::SloResult& slo : s.slo) {
    p.objectives.push_back({.label = SloLabel(slo), .value = slo.value_ms, .threshold = slo.threshold_ms,
                            .pass = slo.pass, .samples = slo.samples});
  }
  if (s.min_output_tokens_per_s) {
    p.objectives.push_back({.label = fmt::format("output >= {:g} tok/s", *s.min_output_tokens_per_s),
                            .value = s.output_tokens_per_s, .threshold = *s.min_output_tokens_per_s, .floor = true,
                            .pass = s.output_tokens_per_s >= *s.min_output_tokens_per_s});
  }
  return p;
}

std::string FormatPointLine(const SweepPoint& p, LoadKind kind) {
  return fmt::format("  {:>9} {:<10} -> {} req/s, {} tok/s, goodput {} req/s, attainment {:.1f}%, "
                     "TTFT p99 {} ms{}{}",
                     Sig(p.load), LoadUnit(kind), Sig(p.throughput_rps, 3), Sig(p.output_tok_s), Sig(p.goodput_rps, 3),
                     p.attainment * 100,
                     Cell(p.ttft_ms, p.ttft_ms.p99), p.slo_pass ? "  [SLO ok]" : "  [SLO miss]",
                     p.saturated ? (p.stopped_early ? "  [SATURATED, stopped early]" : "  [SATURATED]") : "");
}

std::string FormatSweepTable(const SweepResult& r) {
  std::ostringstream o;
  if (r.partial) o << "PARTIAL: the sweep was interrupted; the points below are the ones that finished\n";
  o << fmt::format("{:>12} {:>9} {:>9} {:>9} {:>8} {:>10} {:>10} {:>10} {:>8}  {}\n",
                   r.kind == LoadKind::kRate ? "offered/s" : "concurrency", "done/s", "tok/s", "goodput/s", "attain%",
                   "TTFT p99", "ITL p99", "E2E p99", "errors", "flags");
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const SweepPoint& p = r.points[i];
    std::string flags;
    if (r.knee == i) flags += "knee ";
    if (r.max_goodput == i) flags += "MAX-GOODPUT ";
    if (PointSaturated(p, r.kind, 0.10)) flags += p.stopped_early ? "saturated(stopped) " : "saturated ";
    if (!p.slo_pass) flags += "slo-miss ";
    o << fmt::format("{:>12} {:>9} {:>9} {:>9} {:>8.1f} {:>10} {:>10} {:>10} {:>8}  {}\n", Sig(p.load),
                     Sig(p.throughput_rps, 3), Sig(p.output_tok_s), Sig(p.goodput_rps, 3), p.attainment * 100,
                     Cell(p.ttft_ms, p.ttft_ms.p99),
                     Cell(p.itl_ms, p.itl_ms.p99), Cell(p.e2e_ms, p.e2e_ms.p99), p.errors, flags);
  }
  o << "\n";
  if (r.saturation_load) {
    o << fmt::format("Saturation: at {} {} (max throughput {} req/s", Sig(*r.saturation_load), LoadUnit(r.kind),
                     Sig(r.max_throughput_rps, 3));
    if (r.knee) o << fmt::format("; knee at {} {}", Sig(r.points[*r.knee].load), LoadUnit(r.kind));
    o << ")\n";
  } else {
    o << fmt::format("Saturation: not reached (max throughput seen {} req/s)\n", Sig(r.max_throughput_rps, 3));
  }
  if (r.max_goodput) {
    const SweepPoint& p = r.points[*r.max_goodput];
    o << fmt::format("Max goodput under SLO (every objective met, attainment >= {}%): {} req/s at {} {}",
                     Sig(r.attainment_target * 100), Sig(p.goodput_rps, 3), Sig(p.load), LoadUnit(r.kind));
    if (!r.binding_slo.empty()) o << "; binding: " << r.binding_slo;
    o << "\n";
  } else {
    o << fmt::format("Max goodput under SLO: none — no load met every objective and the attainment target ({:.4g}%)\n",
                     r.attainment_target * 100);
  }
  if (!r.goodput_thresholds.empty()) o << "Goodput thresholds (per request): " << r.goodput_thresholds << "\n";
  if (!r.stop_reason.empty()) o << "Stopped: " << r.stop_reason << "\n";
  for (const std::string& n : r.notes) o << "Note: " << n << "\n";
  if (!r.error.empty()) o << "Error: " << r.error << "\n";
  return o.str();
}

}  // namespace infereng::sweep
