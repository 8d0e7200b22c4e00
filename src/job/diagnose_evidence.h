// What `diagnose` says, as data: a figure with where it came from, a validity check of the
// measurement, and a hypothesis about the bottleneck with its one-variable experiment.
// Written by diagnose_validity.cc and diagnose_rules.cc, ranked and printed by diagnose.cc.
#pragma once

#include <string>
#include <vector>

namespace infereng::job {

struct Evidence {
  std::string what;    // "schedule lag p99"
  double value = 0;
  std::string unit;    // "ms", "%", "x", "" ...
  std::string source;  // "summary.json schedule_lag_ms.p99", "engine_metrics.jsonl kv_usage"
};

enum class CheckStatus { kOk, kWarn, kFail, kNotAvailable };
const char* CheckStatusName(CheckStatus s);  // "ok", "warn", "fail", "n/a"

struct ValidityCheck {
  std::string id;      // "schedule_lag", "client_cpu", "achieved_rate", "errors", "warmup", "sample_size"
  std::string title;
  CheckStatus status = CheckStatus::kNotAvailable;
  std::string detail;  // one sentence: what it means for the numbers
  std::vector<Evidence> evidence;
};

struct Experiment {
  std::string variable;  // the one variable it changes
  std::string change;    // what to run
  std::string expect;    // what confirms the hypothesis
  std::string twin_set;  // the twin knob (`simulate CARD --set KEY=VALUE`), "" when none
};

struct Hypothesis {
  std::string id;
  std::string title;
  std::string seed_symptom;  // the seed's wording (seed.ko.txt, symptom table)
  std::string symptom;       // the same in English
  double score = 0;          // 0..1: how strongly the run shows it
  std::string confidence;    // "high" | "medium" | "low"
  std::vector<Evidence> evidence;
  std::string refute;        // what would refute it
  Experiment experiment;
};

}  // namespace infereng::job
