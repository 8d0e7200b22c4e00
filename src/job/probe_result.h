// The outcome of one `infereng probe` experiment, and probe.json.
//
// Every probe ends in a verdict (pass / fail / not applicable, typed: the exit code comes
// from it, never from a message), one sentence of finding, the reason the check matters
// for production, the evidence numbers it rests on (named, with units), a timeline of the
// events it saw (milliseconds from the probe's start) and what it spent (requests, time).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"

namespace infereng::job {

enum class Verdict { kPass, kFail, kNotApplicable };
std::string_view VerdictName(Verdict v);  // "pass" | "fail" | "n/a"

struct ProbeEvidence {  // not `Evidence`: diagnose_evidence.h owns that name in this namespace
  std::string name{};
  double value = 0;
  std::string unit{};  // "ms", "requests", "ratio", "" ...
};

struct TimelineEvent {
  double t_ms = 0;   // from the probe's start
  std::string what{};
};

struct ProbeResult {
  std::string name{};
  Verdict verdict = Verdict::kNotApplicable;
  std::string finding{};   // one sentence: what was seen
  std::string why{};       // why it matters in production
  std::vector<ProbeEvidence> evidence{};
  std::vector<TimelineEvent> timeline{};
  int64_t requests = 0;  // requests sent (health and metrics scrapes included)
  Nanos elapsed = 0;

  void Add(std::string n, double v, std::string unit = {}) { evidence.push_back({std::move(n), v, std::move(unit)}); }
  // The value of evidence `n`, or `fallback` when absent.
  double Get(std::string_view n, double fallback = -1) const;
};

nlohmann::json ToJson(const ProbeResult& r);

}  // namespace infereng::job
