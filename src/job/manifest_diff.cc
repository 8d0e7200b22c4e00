// Manifest and card diff (see manifest_diff.h for what is compared and how keys map to
// variables).
#include "job/manifest_diff.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "card/card_parser.h"

namespace infereng::job {
namespace {

using Flat = std::map<std::string, std::string>;
constexpr const char* kAbsent = "(absent)";

struct Classified {
  bool keep = false;
  VariableKind kind = VariableKind::kCard;
  std::string variable;
};

Classified Keep(VariableKind k, std::string variable = "") {
  return {true, k, variable.empty() ? VariableKindName(k) : std::move(variable)};
}
Classified Skip() { return {}; }

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A card field (dotted path inside the card, e.g. "engine.max_num_seqs").
Classified ClassifyCardKey(const std::string& k) {
  if (StartsWith(k, "engine.")) return Keep(VariableKind::kEngineKnob, "engine knob " + k.substr(7));
  if (k == "model.precision" || k == "model.kv_precision") return Keep(VariableKind::kPrecision);
  if (StartsWith(k, "model.")) return Keep(VariableKind::kModel);
  if (StartsWith(k, "deployment.") || StartsWith(k, "cluster.")) return Keep(VariableKind::kHardware);
  if (StartsWith(k, "traffic.")) return Keep(VariableKind::kLoad);
  if (k == "bench.seed") return Keep(VariableKind::kSeed);
  if (StartsWith(k, "bench.")) return Keep(VariableKind::kLoad);
  if (StartsWith(k, "slo.")) return Keep(VariableKind::kSlo);
  if (StartsWith(k, "quality.")) return Keep(VariableKind::kQualityEval);
  if (k == "name" || k == "description" || StartsWith(k, "product.") || StartsWith(k, "constraints.") ||
      StartsWith(k, "baseline.") || StartsWith(k, "cost.")) {
    return Skip();  // describes the experiment or its price, does not change what ran
  }
  return Keep(VariableKind::kCard, "card field " + k);
}

// A manifest key (dotted, without the "manifest." prefix). `both_embedded`: both ran on an
// embedded engine, whose URL is a fresh loopback port each time (not a variable).
Classified ClassifyManifestKey(const std::string& k, bool both_embedded) {
  if (StartsWith(k, "tool.") || k == "host" || k == "embedded_server.transport") return Keep(VariableKind::kClient);
  if (k == "target") return both_embedded ? Skip() : Keep(VariableKind::kTarget);  // a fresh port each run
  if (k == "model.id" || k == "model.revision" || k == "embedded_server.model_name") return Keep(VariableKind::kModel);
  if (k == "engine.name" || k == "engine.version" || k == "embedded_server.speedup") return Keep(VariableKind::kEngine);
  if (k == "embedded_server.engine") return Keep(VariableKind::kEngine);
  if (k == "embedded_server.faults") return Keep(VariableKind::kEngineKnob, "engine knob faults");
  // prompts.salt: drawn fresh per run (bench --prompt-salt), a sampling detail like the seed.
  if (k == "seed" || k == "embedded_server.seed" || k == "prompts.salt") return Keep(VariableKind::kSeed);
  if (StartsWith(k, "load.") || StartsWith(k, "prompts.") || k == "output_length_control" || k == "sweep.load") {
    return Keep(VariableKind::kLoad);
  }
  if (StartsWith(k, "shard.")) {
    // When a shard started and ended describes the run (a canary's two paired runs share
    // the start but not the nanosecond); which share of the stream it sent is the load.
    static const char* const kWhen[] = {"t0_unix_ns", "t0_utc", "start_lateness_ms", "window_end_ns", "partial",
                                        "start_at_utc", "start_at_unix_ns", "clock_uncertainty_ms"};
    for (const char* w : kWhen) {
      if (k.substr(6) == w) return Skip();
    }
    return Keep(VariableKind::kLoad);
  }
  if (StartsWith(k, "quality.")) return Keep(VariableKind::kQualityEval);
  if (k == "source") return Keep(VariableKind::kSource);
  if (StartsWith(k, "sets.")) return ClassifyCardKey(k.substr(5));  // --set engine.KEY=VALUE
  if (StartsWith(k, "card.synthesised_from_flags.")) {
    const std::string f = k.substr(28);
    if (f == "model") return Keep(VariableKind::kModel);
    if (f == "seed") return Keep(VariableKind::kSeed);
    return Keep(VariableKind::kLoad);
  }
  if (StartsWith(k, "card.") || k == "schema" || k == "clock" || k == "start_time_utc" || k == "api_key" ||
      StartsWith(k, "twin.") || k == "twin" || StartsWith(k, "sweep.") || k == "notes" || StartsWith(k, "notes.") ||
      StartsWith(k, "engine.")) {
    // card.*: handled through the card itself; engine.probes/tokenize/metrics: what the
    // server answered, not a setting; twin: a simulated point's results.
    return Skip();
  }
  return Keep(VariableKind::kCard, "manifest " + k);
}

void FlattenYaml(const YAML::Node& n, const std::string& prefix, Flat* out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>("?");
      FlattenYaml(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  std::stringstream ss;
  if (n.IsScalar()) {
    ss << n.Scalar();
  } else if (n.IsNull()) {
    ss << "null";
  } else {
    YAML::Emitter e;
    e.SetSeqFormat(YAML::Flow);
    e.SetMapFormat(YAML::Flow);
    e << n;
    ss << e.c_str();
  }
  (*out)[prefix] = ss.str();
}

// The card a manifest names, flattened, when its file still has the recorded hash.
std::optional<Flat> ReadCard(const nlohmann::json& manifest, std::string* why) {
  const nlohmann::json* card = manifest.is_object() && manifest.contains("card") ? &manifest["card"] : nullptr;
  if (!card || !card->is_object() || !card->contains("path") || !(*card)["path"].is_string()) {
    *why = "no card path in manifest.json";
    return std::nullopt;
  }
  const std::string path = (*card)["path"].get<std::string>();
  if (path.empty()) {
    *why = "no card path in manifest.json";
    return std::nullopt;
  }
  Result<card::WorkloadCard> parsed = card::LoadCardFile(path);
  if (!parsed.ok()) {
    *why = path + ": " + parsed.status().message();
    return std::nullopt;
  }
  const std::string hash = card->contains("sha256") && (*card)["sha256"].is_string() ? (*card)["sha256"].get<std::string>() : "";
  if (parsed->content_hash != hash) {
    *why = path + " changed since the run (its SHA-256 is not the manifest's)";
    return std::nullopt;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Flat flat;
  try {
    FlattenYaml(YAML::Load(text.str()), "", &flat);
  } catch (const YAML::Exception& e) {
    *why = path + ": " + e.what();
    return std::nullopt;
  }
  return flat;
}

Flat FlattenManifest(const nlohmann::json& m) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (m.is_object()) {
    nlohmann::json copy = m;
    // --set knobs: "engine.KEY=VALUE" strings, one key each.
    if (copy.contains("sets") && copy["sets"].is_array()) {
      for (const auto& s : copy["sets"]) {
        if (!s.is_string()) continue;
        const std::string text = s.get<std::string>();
        const auto eq = text.find('=');
        pairs.emplace_back("sets." + text.substr(0, eq), eq == std::string::npos ? "" : text.substr(eq + 1));
      }
      copy.erase("sets");
    }
    if (!copy.contains("source")) copy["source"] = "measured";
    FlattenJson(copy, "", &pairs);
  }
  return Flat(pairs.begin(), pairs.end());
}

std::string Get(const nlohmann::json& m, const char* a, const char* b) {
  if (!m.is_object() || !m.contains(a) || !m[a].is_object() || !m[a].contains(b)) return "";
  return m[a][b].is_string() ? m[a][b].get<std::string>() : m[a][b].dump();
}

void DiffFlat(const Flat& a, const Flat& b, const std::string& prefix,
              const std::function<Classified(const std::string&)>& classify, ManifestDiff* out) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  for (const std::string& k : keys) {
    auto ia = a.find(k), ib = b.find(k);
    const std::string va = ia == a.end() ? kAbsent : ia->second;
    const std::string vb = ib == b.end() ? kAbsent : ib->second;
    if (va == vb) continue;
    Classified c = classify(k);
    if (!c.keep) continue;
    out->changes.push_back({c.kind, prefix + k, va, vb, c.variable});
  }
}

}  // namespace

const char* VariableKindName(VariableKind k) {
  switch (k) {
    case VariableKind::kEngineKnob: return "engine knob";
    case VariableKind::kEngine: return "engine";
    case VariableKind::kModel: return "model";
    case VariableKind::kPrecision: return "precision";
    case VariableKind::kHardware: return "hardware";
    case VariableKind::kTarget: return "target";
    case VariableKind::kLoad: return "load";
    case VariableKind::kSeed: return "seed";
    case VariableKind::kSlo: return "slo";
    case VariableKind::kQualityEval: return "quality eval";
    case VariableKind::kClient: return "client version";
    case VariableKind::kSource: return "source";
    case VariableKind::kCard: return "card";
  }
  return "?";
}

const char* ExperimentKindName(ExperimentKind k) {
  switch (k) {
    case ExperimentKind::kIdentical: return "identical";
    case ExperimentKind::kReplicate: return "replicate";
    case ExperimentKind::kOneVariable: return "one variable";
    case ExperimentKind::kMultiVariable: return "not a one-variable experiment";
  }
  return "?";
}

void FlattenJson(const nlohmann::json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>* out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) FlattenJson(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  out->emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
}

ManifestDiff DiffManifests(const nlohmann::json& a, const nlohmann::json& b) {
  ManifestDiff d;
  if (a.is_null()) d.notes.push_back("A has no manifest.json: what changed cannot be said");
  if (b.is_null()) d.notes.push_back("B has no manifest.json: what changed cannot be said");
  const bool both_embedded = a.is_object() && b.is_object() && a.contains("embedded_server") && b.contains("embedded_server");

  const std::string hash_a = Get(a, "card", "sha256"), hash_b = Get(b, "card", "sha256");
  const bool cards_differ = hash_a != hash_b;
  if (cards_differ) {
    std::string why_a, why_b;
    std::optional<Flat> ca = ReadCard(a, &why_a), cb = ReadCard(b, &why_b);
    if (ca && cb) {
      DiffFlat(*ca, *cb, "card.", ClassifyCardKey, &d);
    } else {
      d.changes.push_back({VariableKind::kCard, "manifest.card.sha256", hash_a.empty() ? kAbsent : hash_a,
                           hash_b.empty() ? kAbsent : hash_b, "card"});
      d.notes.push_back("the cards differ and which fields changed cannot be said: " + (ca ? why_b : why_a));
    }
  }
  DiffFlat(FlattenManifest(a), FlattenManifest(b), "manifest.",
           [&](const std::string& k) {
             // The embedded engine's description follows from the card: counted only when
             // the card did not change (then it is the twin itself that changed).
             if (k == "embedded_server.engine" && cards_differ) return Skip();
             return ClassifyManifestKey(k, both_embedded);
           },
           &d);

  for (const ManifestChange& c : d.changes) {
    if (std::find(d.variables.begin(), d.variables.end(), c.variable) == d.variables.end()) d.variables.push_back(c.variable);
  }
  const bool seed = std::find(d.variables.begin(), d.variables.end(), "seed") != d.variables.end();
  const std::size_t others = d.variables.size() - (seed ? 1 : 0);
  if (d.variables.empty()) {
    d.kind = ExperimentKind::kIdentical;
  } else if (others == 0) {
    d.kind = ExperimentKind::kReplicate;
  } else if (others == 1) {
    d.kind = ExperimentKind::kOneVariable;
  } else {
    d.kind = ExperimentKind::kMultiVariable;
  }
  return d;
}

}  // namespace infereng::job
