#include "job/history.h"

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/units.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"
#include "sweep/sweep_io.h"

namespace infereng::job {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The percentiles and scalars an entry keeps of a summary (the names `history trend` takes).
constexpr const char* kFields[] = {"p50", "p90", "p99", "mean"};
constexpr const char* kScalars[] = {"output_tokens_per_s", "requests_per_s", "goodput_rps", "slo_attainment",
                                    "offered_rps", "achieved_rps"};
constexpr const char* kDistributions[] = {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_incl_queue_ms",
                                          "e2e_incl_queue_ms", "schedule_lag_ms"};

Result<json> ReadJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path.string() + ": cannot be read");
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(path.string() + ": not a JSON object");
  return j;
}

std::string Str(const json& j, const json::json_pointer& p) {
  if (!j.contains(p)) return "";
  const json& v = j.at(p);
  return v.is_string() ? v.get<std::string>() : "";
}

// The trials' CI of a metric from summary.json's extras ("trials"), if the run had trials.
void AddCi(const json& summary, const std::string& dist, const std::string& field, store::MetricValue* m) {
  const json::json_pointer p = dist.empty() ? json::json_pointer("/trials/scalars/" + field)
                                            : json::json_pointer("/trials/distributions/" + dist + "/" + field);
  if (!summary.contains(p)) return;
  const json& ci = summary.at(p);
  if (ci.contains("ci_low") && ci["ci_low"].is_number()) m->ci_low = ci["ci_low"].get<double>();
  if (ci.contains("ci_high") && ci["ci_high"].is_number()) m->ci_high = ci["ci_high"].get<double>();
}

void AddSummaryFacts(const metrics::Summary& s, const json& summary_json, store::RunEntry* e) {
  for (const char* d : kDistributions) {
    const metrics::DistributionField* field = nullptr;
    for (const metrics::DistributionField& f : metrics::SummaryDistributions()) {
      if (f.key == std::string_view(d)) field = &f;
    }
    if (field == nullptr) continue;
    const stats::SampleStats& st = s.*(field->member);
    if (st.count == 0) continue;
    const double values[] = {st.p50, st.p90, st.p99, st.mean};
    for (size_t i = 0; i < std::size(kFields); ++i) {
      store::MetricValue m{std::string(d) + "." + kFields[i], values[i], std::nullopt, std::nullopt};
      AddCi(summary_json, d, kFields[i], &m);
      e->metrics.push_back(std::move(m));
    }
  }
  const double scalars[] = {s.output_tokens_per_s, s.requests_per_s, s.goodput_rps, s.slo_attainment,
                            s.offered_rps, s.achieved_rps};
  for (size_t i = 0; i < std::size(kScalars); ++i) {
    store::MetricValue m{kScalars[i], scalars[i], std::nullopt, std::nullopt};
    AddCi(summary_json, "", kScalars[i], &m);
    e->metrics.push_back(std::move(m));
  }
  // Runs whose unit is not a token stream: embeddings or rerank (items, input tokens) and sessions or
  // agent tasks (summary.json's "sessions" block), under the same names as in summary.json.
  auto add = [e](const char* name, double value) { e->metrics.push_back({name, value, std::nullopt, std::nullopt}); };
  if (s.embeddings) {  // rerank runs under "rerank." (summary.json's key), items = documents
    const bool rerank = s.embeddings->rerank;
    add(rerank ? "rerank.items_per_s" : "embeddings.items_per_s", s.embeddings->items_per_s);
    add(rerank ? "rerank.input_tokens_per_s" : "embeddings.input_tokens_per_s", s.embeddings->input_tokens_per_s);
  }
  if (s.sessions) {
    const metrics::SessionSummary& ss = *s.sessions;
    add("sessions.per_s", ss.per_s);
    add("sessions.goodput_per_s", ss.goodput_per_s);
    add("sessions.success_rate", ss.success_rate);
    if (ss.latency_ms.count > 0) {
      add("sessions.latency_ms.p50", ss.latency_ms.p50);
      add("sessions.latency_ms.p99", ss.latency_ms.p99);
    }
    if (ss.prefix_hit_rate >= 0) add("sessions.prefix_hit_rate", ss.prefix_hit_rate);
  }
  e->metrics.push_back({"requests", static_cast<double>(s.counts.in_window), std::nullopt, std::nullopt});
  e->metrics.push_back({"failed", static_cast<double>(s.counts.failed), std::nullopt, std::nullopt});
  const bool has_slos = !s.slo.empty() || !s.goodput_thresholds.empty() || s.min_output_tokens_per_s.has_value();
  if (has_slos) e->slo_pass = s.slo_pass;
  for (const metrics::SloResult& r : s.slo) {
    e->slos.push_back({sweep::SloLabel(r), r.pass, r.samples > 0 ? std::optional<double>(r.value_ms) : std::nullopt});
  }
  if (!s.goodput_thresholds.empty()) {
    e->slos.push_back({"attainment >= " + units::FormatNumber(s.slo_attainment_target), s.slo_attainment_pass, s.slo_attainment});
  }
  if (s.min_output_tokens_per_s) {
    e->slos.push_back({"output tok/s >= " + units::FormatNumber(*s.min_output_tokens_per_s),
                       s.output_tokens_per_s >= *s.min_output_tokens_per_s, s.output_tokens_per_s});
  }
  e->partial = e->partial || s.partial;
}

std::string AbsoluteDir(const std::string& dir) {
  if (dir.empty()) return "";
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  return (ec ? fs::absolute(dir) : p).lexically_normal().string();
}

Result<store::RunEntry> EntryFromSweepDir(const fs::path& dir) {
  INFERENG_ASSIGN_OR_RETURN(json j, ReadJson(dir / "sweep.json"));
  INFERENG_ASSIGN_OR_RETURN(sweep::SweepFile f, sweep::SweepFromJson(j));
  store::RunEntry e;
  e.kind = "sweep";
  e.dir = AbsoluteDir(dir.string());
  e.card_name = f.result.card_name;
  e.target = f.result.target;
  e.partial = j.value("partial", false);
  e.load = json{{"kind", j.value("kind", "")}, {"points", f.result.points.size()}}.dump();
  // What ran comes from the first point's manifest (every point ran the same card and engine).
  for (const sweep::SweepPoint& p : f.result.points) {
    if (p.dir.empty()) continue;
    if (Result<json> m = ReadJson(dir / p.dir / "manifest.json"); m.ok()) {
      e.card_sha256 = Str(*m, json::json_pointer("/card/sha256"));
      e.model = Str(*m, json::json_pointer("/model/id"));
      e.engine = Str(*m, json::json_pointer("/engine/name"));
      e.engine_version = Str(*m, json::json_pointer("/engine/version"));
      e.tool_version = Str(*m, json::json_pointer("/tool/version"));
      e.git_commit = Str(*m, json::json_pointer("/tool/git_commit"));
      e.hardware = Str(*m, json::json_pointer("/host"));
      e.started_at = Str(*m, json::json_pointer("/start_time_utc"));
      if (m->contains("seed") && (*m)["seed"].is_number_integer()) e.seed = (*m)["seed"].get<int64_t>();
      break;
    }
  }
  const sweep::SweepResult& r = f.result;
  e.slo_pass = r.max_goodput.has_value();
  if (r.max_goodput && *r.max_goodput < r.points.size()) {
    const sweep::SweepPoint& p = r.points[*r.max_goodput];
    e.metrics.push_back({"max_goodput_load", p.load, std::nullopt, std::nullopt});
    e.metrics.push_back({"max_goodput_rps", p.goodput_rps, std::nullopt, std::nullopt});
  }
  if (r.saturation_load) e.metrics.push_back({"saturation_load", *r.saturation_load, std::nullopt, std::nullopt});
  if (r.knee && *r.knee < r.points.size()) {
    e.metrics.push_back({"knee_load", r.points[*r.knee].load, std::nullopt, std::nullopt});
  }
  e.metrics.push_back({"max_throughput_rps", r.max_throughput_rps, std::nullopt, std::nullopt});
  return e;
}

}  // namespace

Result<std::string> ResolveHistoryPath(const HistoryLocation& loc, const EnvLookup& env) {
  if (loc.disabled) return std::string();
  if (!loc.path.empty()) return loc.path;
  const EnvLookup get = env ? env : [](const char* n) { return static_cast<const char*>(std::getenv(n)); };
  if (const char* v = get("INFERENG_HISTORY"); v != nullptr && *v != '\0') {
    const std::string s = v;
    return s == "off" || s == "none" ? std::string() : s;
  }
  if (const char* x = get("XDG_DATA_HOME"); x != nullptr && *x == '/') {
    return (fs::path(x) / "infereng" / "history.db").string();
  }
  if (const char* h = get("HOME"); h != nullptr && *h != '\0') {
    return (fs::path(h) / ".local" / "share" / "infereng" / "history.db").string();
  }
  return Status::InvalidArgument("history: no place for the database ($HOME is not set): pass --history PATH, "
                                 "set INFERENG_HISTORY, or --no-history");
}

Result<store::RunEntry> EntryFromRun(std::string_view kind, const json& manifest, const json& summary,
                                     const std::string& dir) {
  INFERENG_ASSIGN_OR_RETURN(metrics::Summary s, metrics::SummaryFromJson(summary));
  store::RunEntry e;
  e.kind = kind;
  e.dir = AbsoluteDir(dir);
  e.started_at = Str(manifest, json::json_pointer("/start_time_utc"));
  e.card_name = Str(manifest, json::json_pointer("/card/name"));
  e.card_sha256 = Str(manifest, json::json_pointer("/card/sha256"));
  e.target = Str(manifest, json::json_pointer("/target"));
  e.model = Str(manifest, json::json_pointer("/model/id"));
  e.model_revision = Str(manifest, json::json_pointer("/model/revision"));
  e.engine = Str(manifest, json::json_pointer("/engine/name"));
  e.engine_version = Str(manifest, json::json_pointer("/engine/version"));
  e.hardware = Str(manifest, json::json_pointer("/host"));
  e.tool_version = Str(manifest, json::json_pointer("/tool/version"));
  e.git_commit = Str(manifest, json::json_pointer("/tool/git_commit"));
  if (manifest.contains("seed") && manifest["seed"].is_number_integer()) e.seed = manifest["seed"].get<int64_t>();
  e.load = manifest.contains("load") ? manifest["load"].dump() : "{}";
  e.partial = manifest.value("partial", false);
  e.manifest = manifest.dump();
  AddSummaryFacts(s, summary, &e);
  return e;
}

// A canary directory (canary.json): the candidate's run of the last step gives what ran
// and its headline metrics; the verdict is the entry's pass (go) and a "canary" block in
// its manifest (baseline, candidate, verdict, reasons).
Result<store::RunEntry> EntryFromCanaryDir(const fs::path& dir) {
  INFERENG_ASSIGN_OR_RETURN(json c, ReadJson(dir / "canary.json"));
  if (!c.is_object() || !c.contains("steps") || !c["steps"].is_array()) {
    return Status::InvalidArgument((dir / "canary.json").string() + ": not a canary result (no \"steps\")");
  }
  store::RunEntry e;
  json reasons = json::array();
  if (!c["steps"].empty()) {
    const json& last = c["steps"].back();
    // The step's run folders, found from this directory (canary.json may hold relative paths).
    const fs::path step = c.value("gradual", false) ? dir / fs::path(last.value("dir", "")).filename() : dir;
    std::error_code ec;
    if (fs::exists(step / "candidate" / "summary.json", ec)) {
      Result<store::RunEntry> run = EntryFromRunDir((step / "candidate").string(), "canary");
      if (run.ok()) e = std::move(*run);
    }
    if (last.contains("reasons")) reasons = last["reasons"];
  }
  e.kind = "canary";
  e.dir = AbsoluteDir(dir.string());
  e.target = c.value("candidate", e.target);
  e.partial = c.value("interrupted", false);
  e.slo_pass = c.value("go", false);
  json manifest = e.manifest.empty() ? json::object() : json::parse(e.manifest, nullptr, false);
  if (!manifest.is_object()) manifest = json::object();
  manifest["canary"] = {{"verdict", c.value("verdict", "")}, {"baseline", c.value("baseline", "")},
                        {"candidate", c.value("candidate", "")}, {"steps", c["steps"].size()},
                        {"reasons", reasons}};
  e.manifest = manifest.dump();
  e.metrics.push_back({"canary_go", c.value("go", false) ? 1.0 : 0.0, std::nullopt, std::nullopt});
  return e;
}

// A probe directory (probe.json): one verdict per probe (an SLO-like row each: pass unless
// the probe failed; n/a passes), pass when none failed, partial when the suite stopped early.
Result<store::RunEntry> EntryFromProbeDir(const fs::path& dir) {
  INFERENG_ASSIGN_OR_RETURN(json p, ReadJson(dir / "probe.json"));
  if (!p.is_object() || !p.contains("probes") || !p["probes"].is_array()) {
    return Status::InvalidArgument((dir / "probe.json").string() + ": not a probe result (no \"probes\")");
  }
  store::RunEntry e;
  e.kind = "probe";
  e.dir = AbsoluteDir(dir.string());
  e.target = p.value("target", "");
  e.partial = !p.value("complete", false);
  e.load = "{}";
  int fail = 0, pass = 0;
  json verdicts = json::object();
  for (const json& r : p["probes"]) {
    const std::string name = r.value("name", ""), verdict = r.value("verdict", "");
    fail += verdict == "fail" ? 1 : 0;
    pass += verdict == "pass" ? 1 : 0;
    e.slos.push_back({.objective = "probe " + name + ": " + verdict, .pass = verdict != "fail", .value = std::nullopt});
    verdicts[name] = verdict;
  }
  e.slo_pass = fail == 0;
  e.metrics.push_back({"probes_failed", static_cast<double>(fail), std::nullopt, std::nullopt});
  e.metrics.push_back({"probes_passed", static_cast<double>(pass), std::nullopt, std::nullopt});
  e.manifest = json{{"target", e.target}, {"probe", {{"complete", !e.partial}, {"verdicts", verdicts}}}}.dump();
  return e;
}

Result<store::RunEntry> EntryFromRunDir(const std::string& dir, std::string_view kind) {
  const fs::path d(dir);
  std::error_code ec;
  if (!fs::is_directory(d, ec)) return Status::NotFound(dir + ": not a directory");
  if (fs::exists(d / "sweep.json", ec)) return EntryFromSweepDir(d);
  if (fs::exists(d / "canary.json", ec)) return EntryFromCanaryDir(d);
  if (fs::exists(d / "probe.json", ec)) return EntryFromProbeDir(d);
  if (!fs::exists(d / "summary.json", ec)) {
    return Status::InvalidArgument(dir + ": not a run directory (no summary.json, sweep.json, canary.json or probe.json)");
  }
  INFERENG_ASSIGN_OR_RETURN(json summary, ReadJson(d / "summary.json"));
  json manifest = json::object();
  if (fs::exists(d / "manifest.json", ec)) {
    INFERENG_ASSIGN_OR_RETURN(manifest, ReadJson(d / "manifest.json"));
  }
  std::string k(kind);
  if (k.empty()) k = manifest.contains("merge") ? "merge" : manifest.contains("embedded") ? "run" : "bench";
  Result<store::RunEntry> e = EntryFromRun(k, manifest, summary, dir);
  if (!e.ok()) return e.status().WithContext(dir + "/summary.json");
  return e;
}

Result<store::RunEntry> EntryFromSimulation(const card::WorkloadCard& card, uint64_t seed, const json& summary) {
  json manifest = {{"card", {{"name", card.name}, {"path", card.source_path}, {"sha256", card.content_hash}}},
                   {"seed", seed},
                   {"target", "twin"},
                   {"model", {{"id", card.model.id}}}};
  return EntryFromRun("simulate", manifest, summary, "");
}

Result<Registered> RegisterEntry(store::HistoryDb& db, const store::RunEntry& entry) {
  if (!entry.dir.empty()) {
    INFERENG_ASSIGN_OR_RETURN(std::optional<int64_t> id, db.FindRun(entry.dir, entry.started_at));
    if (id) return Registered{*id, true};
  }
  INFERENG_ASSIGN_OR_RETURN(int64_t id, db.Insert(entry));
  return Registered{id, false};
}

Result<Registered> RegisterEntry(const std::string& db_path, const store::RunEntry& entry) {
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<store::HistoryDb> db, store::HistoryDb::Open(db_path));
  return RegisterEntry(*db, entry);
}

Result<store::RunEntry> FindBaseline(store::HistoryDb& db, std::string_view ref, const store::ListFilter& f) {
  if (ref == "latest-passing") return db.LatestPassing(f);
  std::string_view digits = ref.starts_with('#') ? ref.substr(1) : ref;
  int64_t id = 0;
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Status::InvalidArgument("baseline \"" + std::string(ref) + "\": expected a run id (e.g. 42) or latest-passing");
  }
  for (char c : digits) id = id * 10 + (c - '0');
  return db.Get(id);
}

Result<std::string> ParseSince(std::string_view since, std::string_view now_iso) {
  const std::string s(since);
  auto digits = [](std::string_view v) { return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos; };
  if (s.size() >= 2 && (s.back() == 'd' || s.back() == 'h') && digits(std::string_view(s).substr(0, s.size() - 1))) {
    std::tm tm{};
    if (now_iso.size() < 19 || strptime(std::string(now_iso).c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) {
      return Status::Internal("history: bad current time " + std::string(now_iso));
    }
    const long n = std::stol(s.substr(0, s.size() - 1));
    if (n > 100000) return Status::InvalidArgument("--since " + s + ": too far back");
    const std::time_t t = timegm(&tm) - n * (s.back() == 'd' ? 86400 : 3600);
    std::tm out{};
    gmtime_r(&t, &out);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &out);
    return std::string(buf);
  }
  std::tm tm{};
  const char* end = strptime(s.c_str(), "%Y-%m-%d", &tm);
  if (end == nullptr || (*end != '\0' && *end != 'T' && *end != ' ')) {
    return Status::InvalidArgument("--since \"" + s + "\": expected a date (2026-12-01), a UTC time "
                                   "(2026-12-01T10:00:00Z) or an age (7d, 12h)");
  }
  return s;
}

}  // namespace infereng::job
