// `infereng diagnose RUN_DIR`: why a run looks the way it does, with evidence. First the
// validity of the measurement itself (diagnose_validity.h: a client that shaped the result
// is the top finding), then the seed's symptom table (diagnose_rules.h) applied to the
// run's records and the engine's own time series (engine_metrics.jsonl), each hypothesis
// with its figures and where they came from, a confidence, what would refute it and the
// one-variable experiment that proves it; ranked by score (a client-shaped run puts
// client_bound first whatever the rest scores).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "job/diagnose_evidence.h"

namespace infereng::job {

struct Diagnosis {
  std::string dir;
  std::vector<ValidityCheck> validity;
  bool client_shaped = false;
  std::vector<Hypothesis> hypotheses;  // ranked, best first
  std::string engine;                  // from engine_metrics.jsonl ("" without one)
  std::vector<std::string> missing_signals;
  std::vector<std::string> notes;      // what could not be looked at, and why
};

// NotFound when DIR has no summary.json; InvalidArgument naming FILE:LINE for a bad line.
Result<Diagnosis> Diagnose(const std::string& dir);

// The JSON for machines (`diagnose --json`, DIR/diagnose.json): schema "infereng.diagnose/1".
nlohmann::json DiagnosisToJson(const Diagnosis& d);
// The Markdown for people (the terminal, and the report's "Diagnosis" section).
std::string DiagnosisToMarkdown(const Diagnosis& d);

}  // namespace infereng::job
