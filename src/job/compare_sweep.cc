// compare for two sweep directories: the shift of max goodput under the SLO and of the knee
// (sweep.json each, sweep/sweep_io.h), and what changed (the first point's manifest, whose
// load is left out: the points' loads are what the sweep varied).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "job/compare.h"
#include "sweep/sweep_io.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

nlohmann::json FirstPointManifest(const std::string& dir, const sweep::SweepResult& r) {
  for (const sweep::SweepPoint& p : r.points) {
    if (p.dir.empty()) continue;
    std::ifstream in(fs::path(dir) / p.dir / "manifest.json");
    if (!in) continue;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    j.erase("sweep");
    return j;
  }
  return nullptr;
}

std::optional<double> At(const sweep::SweepResult& r, const std::optional<std::size_t>& i, double sweep::SweepPoint::*f) {
  if (!i || *i >= r.points.size()) return std::nullopt;
  return r.points[*i].*f;
}

}  // namespace

Result<Comparison> CompareSweeps(const std::string& a_dir, const std::string& b_dir, const CompareOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(sweep::SweepFile fa, sweep::ReadSweepJson((fs::path(a_dir) / "sweep.json").string()));
  INFERENG_ASSIGN_OR_RETURN(sweep::SweepFile fb, sweep::ReadSweepJson((fs::path(b_dir) / "sweep.json").string()));
  const sweep::SweepResult& a = fa.result;
  const sweep::SweepResult& b = fb.result;
  if (a.kind != b.kind) {
    return Status::InvalidArgument(fmt::format("{} sweeps by {} and {} by {}: their loads cannot be compared", a_dir,
                                               sweep::LoadKindName(a.kind), b_dir, sweep::LoadKindName(b.kind)));
  }
  Comparison c;
  c.a_dir = a_dir;
  c.b_dir = b_dir;
  c.sweeps = true;
  c.bootstrap = options.bootstrap;
  c.manifest = DiffManifests(FirstPointManifest(a_dir, a), FirstPointManifest(b_dir, b));
  const std::string unit = sweep::LoadUnit(a.kind);
  c.sweep = {
      {"max goodput load", At(a, a.max_goodput, &sweep::SweepPoint::load), At(b, b.max_goodput, &sweep::SweepPoint::load), unit},
      {"max goodput", At(a, a.max_goodput, &sweep::SweepPoint::goodput_rps),
       At(b, b.max_goodput, &sweep::SweepPoint::goodput_rps), "req/s"},
      {"knee load", At(a, a.knee, &sweep::SweepPoint::load), At(b, b.knee, &sweep::SweepPoint::load), unit},
      {"knee throughput", At(a, a.knee, &sweep::SweepPoint::throughput_rps),
       At(b, b.knee, &sweep::SweepPoint::throughput_rps), "req/s"},
      {"max throughput", a.max_throughput_rps, b.max_throughput_rps, "req/s"},
      {"saturation load", a.saturation_load, b.saturation_load, unit},
  };
  if (!a.binding_slo.empty() || !b.binding_slo.empty()) {
    c.findings.push_back({FindingKind::kNote, false,
                          fmt::format("binding SLO: A {}, B {}", a.binding_slo.empty() ? "none" : a.binding_slo,
                                      b.binding_slo.empty() ? "none" : b.binding_slo)});
  }
  if (c.manifest.kind == ExperimentKind::kMultiVariable) {
    std::string vars;
    for (const std::string& v : c.manifest.variables) vars += (vars.empty() ? "" : ", ") + v;
    c.findings.insert(c.findings.begin(), {FindingKind::kNotOneVariable, true,
                                           fmt::format("NOT a one-variable experiment: {} variables changed ({})",
                                                       c.manifest.variables.size(), vars)});
  }
  for (const auto* r : {&a, &b}) {
    const char* side = r == &a ? "A" : "B";
    if (r->partial) c.findings.push_back({FindingKind::kPartialRun, true, fmt::format("sweep {} was interrupted (partial)", side)});
    if (!r->max_goodput) {
      c.findings.push_back({FindingKind::kNote, true, fmt::format("sweep {} found no load meeting the SLO", side)});
    }
  }
  c.findings.push_back({FindingKind::kNote, false,
                        "sweeps: one run per load, so the shifts carry no interval; compare two of the points (run "
                        "directories under points/) for intervals"});
  if (!options.accept.empty()) {
    return Status::InvalidArgument("--accept applies to two runs, not two sweeps (compare a point of each)");
  }
  return c;
}

}  // namespace infereng::job
