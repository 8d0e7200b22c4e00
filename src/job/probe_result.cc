#include "job/probe_result.h"

#include <cmath>

namespace infereng::job {

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kFail: return "fail";
    case Verdict::kNotApplicable: return "n/a";
    case Verdict::kWarn: return "warn";
  }
  return "n/a";
}

double ProbeResult::Get(std::string_view n, double fallback) const {
  for (const ProbeEvidence& e : evidence) {
    if (e.name == n) return e.value;
  }
  return fallback;
}

namespace {

nlohmann::json Num(double v, double scale = 10) {
  return std::isfinite(v) ? nlohmann::json(std::round(v * scale) / scale) : nlohmann::json(nullptr);
}

nlohmann::json TraceJson(const ProbeTrace& t) {
  nlohmann::json requests = nlohmann::json::array(), signals = nlohmann::json::array();
  for (const ProbeRequestPoint& p : t.requests) {
    requests.push_back({{"t_ms", Num(p.t_ms)}, {"latency_ms", Num(p.latency_ms)}, {"ttft_ms", Num(p.ttft_ms)},
                        {"status", p.status}, {"ok", p.ok}, {"cancelled", p.cancelled}});
  }
  for (const ProbeSignalPoint& p : t.signals) {
    signals.push_back({{"t_ms", Num(p.t_ms)}, {"running", Num(p.running)}, {"waiting", Num(p.waiting)},
                       {"kv_usage", Num(p.kv_usage, 1e4)}});
  }
  return {{"requests", std::move(requests)}, {"engine_signals", std::move(signals)}, {"signal_scrapes", t.scrapes}};
}

}  // namespace

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
          {"elapsed_ms", std::round(NanosToMillis(r.elapsed) * 10) / 10},
          {"trace", TraceJson(r.trace)}};
}

}  // namespace infereng::job
