// Which variables changed between two runs: the first thing `compare` says, because a
// difference in latency means something only when one thing changed.
//
// Sources, both flattened to dotted keys and diffed value by value:
//  - manifest.json (tool version and commit, host, target, model, engine and version,
//    seed, load shape, prompts, the embedded server's settings, a simulated point's --set
//    knobs, the card's hash);
//  - the card itself, when the manifest's card.path still holds the file whose SHA-256 the
//    manifest recorded (so an edited card is never mistaken for the one that ran); else,
//    with different hashes, "card" changed and which fields cannot be said.
// Every key maps to one variable (engine knob KEY, model, precision, hardware, load, seed,
// SLO, quality eval, engine, target, client, source, card); a variable seen in several
// places (the card's bench.seed and the manifest's seed) counts once. Keys that describe
// rather than change the experiment (start time, card path, name, notes) are left out.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infereng::job {

enum class VariableKind {
  kEngineKnob,   // engine.max_num_seqs, --set engine.KEY, the embedded server's faults
  kEngine,       // engine name/version, the embedded engine's model of it, its speed-up
  kModel,        // model id, revision, architecture
  kPrecision,    // weights or KV precision
  kHardware,     // deployment: accelerator, count, TP, replicas, cluster settings
  kTarget,       // the URL measured
  kLoad,         // arrival process, rate, concurrency, lengths, duration, warm-up, prompts
  kSeed,         // the workload seed
  kSlo,          // objectives and thresholds (changes goodput and attainment, not the system)
  kQualityEval,  // the eval set or how often it is sent
  kClient,       // infereng version/commit, the client host
  kSource,       // measured vs simulated
  kCard,         // the card changed and its fields cannot be read back
};
const char* VariableKindName(VariableKind k);  // "engine knob", "model", ...

struct ManifestChange {
  VariableKind kind;
  std::string key;   // dotted, as found: "card.engine.max_num_seqs", "manifest.seed"
  std::string a, b;  // values as JSON text ("(absent)" when one side has none)
  std::string variable;  // what counts once: "engine knob max_num_seqs", "seed", "load"
};

enum class ExperimentKind {
  kIdentical,      // nothing changed (the same run twice, or a re-run of one config and seed)
  kReplicate,      // only the seed changed: a replicate, any difference is noise
  kOneVariable,    // one variable changed (the seed may have too)
  kMultiVariable,  // more than one: not a one-variable experiment
};
const char* ExperimentKindName(ExperimentKind k);  // "identical", "replicate", ...

struct ManifestDiff {
  std::vector<ManifestChange> changes;
  std::vector<std::string> variables;  // distinct, in first-seen order
  ExperimentKind kind = ExperimentKind::kIdentical;
  std::vector<std::string> notes;      // "card file not readable: ...", "A has no manifest.json"
};

// Diffs two manifests (null: the run has none). Reads the cards the manifests name.
ManifestDiff DiffManifests(const nlohmann::json& a, const nlohmann::json& b);

// Flattens a JSON object to dotted keys -> JSON text of scalars (arrays as one value).
void FlattenJson(const nlohmann::json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>* out);

}  // namespace infereng::job
