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

// kWarn: a risk, not a failure (the exit code stays 0), e.g. a long silence before the
// first token that a proxy's idle timeout would cut.
enum class Verdict { kPass, kFail, kNotApplicable, kWarn };
std::string_view VerdictName(Verdict v);  // "pass" | "fail" | "n/a" | "warn"

struct ProbeEvidence {  // not `Evidence`: diagnose_evidence.h owns that name in this namespace
  std::string name{};
  double value = 0;
  std::string unit{};  // "ms", "requests", "ratio", "" ...
};

struct TimelineEvent {
  double t_ms = 0;   // from the probe's start
  std::string what{};
};

// What a probe's requests and the engine did over time, for probe.html's timelines: every
// POST the probe sent (send time, latency, TTFT, status) and the engine's running / waiting
// counts and KV-cache usage from /metrics, scraped by ProbeClient every kSignalPollMs while
// a probe's requests are in flight and whenever a probe reads a gauge. Times are ms from
// the probe's start (the origin of `timeline`); a missing value is NaN (null in JSON).
struct ProbeRequestPoint {
  double t_ms = 0;        // send
  double latency_ms = 0;  // send to end (NaN: never ended)
  double ttft_ms = 0;     // NaN: no token
  int status = 0;         // HTTP status (0: no response)
  bool ok = false;
  bool cancelled = false;  // the probe walked away from it
};
struct ProbeSignalPoint {
  double t_ms = 0;
  double running = 0, waiting = 0, kv_usage = 0;  // kv_usage as a 0..1 ratio
};
struct ProbeTrace {
  std::vector<ProbeRequestPoint> requests{};
  std::vector<ProbeSignalPoint> signals{};
  int64_t scrapes = 0;  // /metrics GETs made for `signals` (not charged to the probe's budget)
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
  ProbeTrace trace{};

  void Add(std::string n, double v, std::string unit = {}) { evidence.push_back({std::move(n), v, std::move(unit)}); }
  // The value of evidence `n`, or `fallback` when absent.
  double Get(std::string_view n, double fallback = -1) const;
};

nlohmann::json ToJson(const ProbeResult& r);

}  // namespace infereng::job
