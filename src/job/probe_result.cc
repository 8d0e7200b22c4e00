#include "job/probe_result.h"

#include <cmath>

namespace infereng::job {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kNotApplicable: return "n/a";
  }
  return "n/a";
}

double ProbeResult::Get(std::string_view n, double fallback) const {
  for (const ProbeEvidence& e : evidence) {
    if (e.name == n) return e.value;
  }
  return fallback;
}

nlohmann::json ToJson(const ProbeResult& r) {
  nlohmann::json evidence = nlohmann::json::object();
  for (const ProbeEvidence& e : r.evidence) {
    nlohmann::json v = std::isfinite(e.value) ? nlohmann::json(e.value) : nlohmann::json(nullptr);
    evidence[e.name] = e.unit.empty() ? v : nlohmann::json{{"value", v}, {"unit", e.unit}};
  }
  nlohmann::json timeline = nlohmann::json::array();
  for (const TimelineEvent& t : r.timeline) timeline.push_back({{"t_ms", std::round(t.t_ms * 10) / 10}, {"event", t.what}});
  return {{"name", r.name},
          {"verdict", VerdictName(r.verdict)},
          {"finding", r.finding},
          {"why", r.why},
          {"evidence", evidence},
          {"timeline", timeline},
          {"requests", r.requests},
          {"elapsed_ms", std::round(NanosToMillis(r.elapsed) * 10) / 10}};
}

}  // namespace infereng::job
