#include "job/diagnose_validity.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace infereng::job {
namespace {

ValidityCheck NewCheck(const char* id, const char* title) {
  ValidityCheck c;
  c.id = id;
  c.title = title;
  return c;
}

ValidityCheck ScheduleLag(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("schedule_lag", "client kept its schedule");
  const metrics::SampleStats& lag = f.summary.schedule_lag_ms;
  if (lag.empty()) {
    c.detail = "no schedule lag recorded";
    return c;
  }
  const double fail_ms = std::max(l.lag_fail_ms, 0.1 * f.summary.ttft_ms.p50);
  c.evidence.push_back({"schedule lag p99", lag.p99, "ms", "summary.json schedule_lag_ms.p99"});
  c.evidence.push_back({"schedule lag max", lag.max, "ms", "summary.json schedule_lag_ms.max"});
  if (lag.p99 > fail_ms) {
    c.status = CheckStatus::kFail;
    c.detail = fmt::format("requests left the client {:.1f} ms late at P99 (limit {:.1f} ms): the client, not the "
                           "engine, shaped this run's latency and rate",
                           lag.p99, fail_ms);
  } else if (lag.p99 > l.lag_warn_ms) {
    c.status = CheckStatus::kWarn;
    c.detail = fmt::format("schedule lag P99 {:.2f} ms is above {:.0f} ms: small beside TTFT, but the client was busy",
                           lag.p99, l.lag_warn_ms);
  } else {
    c.status = CheckStatus::kOk;
    c.detail = "requests left on time";
  }
  return c;
}

ValidityCheck ClientCpu(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("client_cpu", "client CPU headroom");
  const double span = f.summary.window_end_s;
  if (!f.client_cpu_s || span <= 0) {
    c.detail = "no client CPU figure (summary.json \"client\")";
    return c;
  }
  const double share = *f.client_cpu_s / span;
  c.evidence.push_back({"client CPU", *f.client_cpu_s, "s", "summary.json client.cpu_s"});
  c.evidence.push_back({"client CPU per second of run", share, "cores", "client.cpu_s / window.end_s"});
  c.status = share > l.cpu_warn_share ? CheckStatus::kWarn : CheckStatus::kOk;
  c.detail = share > l.cpu_warn_share
                 ? fmt::format("the client used {:.2f} cores: near one core's worth, it may lag", share)
                 : fmt::format("the client used {:.2f} cores", share);
  return c;
}

// The client's own verdict (job/client_saturation.h), written by bench into summary.json:
// stamp delay, io-thread CPU and steady-phase schedule lag against their stated limits.
// A client delay under this share of the TTFT P50 does not shape the latencies (see below).
constexpr double kMaterialShare = 0.05;

ValidityCheck ClientSaturationCheck(const RunFacts& f) {
  ValidityCheck c = NewCheck("client_saturation", "the client shaped these results");
  const nlohmann::json& j = f.client_saturation;
  if (!j.is_object() || !j.contains("client_shaped") || !j["client_shaped"].is_boolean()) {
    c.detail = "no saturation signals (summary.json client.saturation: written by bench since issue 17)";
    return c;
  }
  auto p99 = [&](const char* key) -> std::optional<double> {
    if (!j.contains(key) || !j[key].is_object() || !j[key].value("count", 0) || !j[key]["p99"].is_number()) {
      return std::nullopt;
    }
    return j[key]["p99"].get<double>();
  };
  if (auto v = p99("stamp_delay_ms")) {
    c.evidence.push_back({"client's own delay p99 (user - kernel stamp)", *v, "ms",
                          "summary.json client.saturation.stamp_delay_ms.p99"});
  }
  if (j.contains("io_cpu_share") && j["io_cpu_share"].is_number()) {
    c.evidence.push_back({"io thread busy", j["io_cpu_share"].get<double>() * 100, "%",
                          "summary.json client.saturation.io_cpu_share"});
  }
  if (auto v = p99("steady_schedule_lag_ms")) {
    c.evidence.push_back({"steady-phase schedule lag p99", *v, "ms",
                          "summary.json client.saturation.steady_schedule_lag_ms.p99"});
  }
  if (j["client_shaped"].get<bool>()) {
    c.status = CheckStatus::kFail;
    std::string reasons;
    if (j.contains("reasons") && j["reasons"].is_array()) {
      for (const auto& r : j["reasons"]) {
        if (r.is_string()) reasons += (reasons.empty() ? "" : "; ") + r.get<std::string>();
      }
    }
    c.detail = "the client, not the engine, shaped this run: " + (reasons.empty() ? "a limit was crossed" : reasons);
    // Immaterial beside the latencies quoted: a client a few ms late (its io thread not
    // saturated) does not shape a run whose TTFT is a second (llama.cpp on CPU: stamp delay
    // P99 3.9 ms, lag 2.6 ms, TTFT P50 1,093 ms). Event times are kernel stamps, so its read
    // delay does not move them; a late send moves TTFT by the lag at most.
    const double material_ms = kMaterialShare * f.summary.ttft_ms.p50;
    const double io_share = j.contains("io_cpu_share") && j["io_cpu_share"].is_number() ? j["io_cpu_share"].get<double>() : 1;
    const double worst = std::max(p99("stamp_delay_ms").value_or(1e300), p99("steady_schedule_lag_ms").value_or(0));
    if (f.summary.ttft_ms.count > 0 && io_share < 0.9 && worst < material_ms) {
      c.status = CheckStatus::kWarn;
      c.detail = fmt::format("the client crossed its own limits ({}), but its delays (at most {:.2f} ms at P99) are under "
                             "{:.0f}% of the TTFT P50 ({:.0f} ms): the latencies quoted are the engine's",
                             reasons.empty() ? "a limit" : reasons, worst, kMaterialShare * 100, f.summary.ttft_ms.p50);
    }
  } else {
    c.status = CheckStatus::kOk;
    c.detail = "the client kept up: stamp delay, io-thread CPU and steady-phase lag within their limits";
  }
  return c;
}

ValidityCheck AchievedRate(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("achieved_rate", "achieved vs offered rate");
  const metrics::Summary& s = f.summary;
  if (s.offered_rps <= 0 || !s.open_loop) {
    c.detail = s.open_loop ? "no offered rate (burst or too short)" : "closed loop: the rate is the engine's";
    return c;
  }
  const double ratio = s.achieved_rps / s.offered_rps;
  c.evidence.push_back({"offered rate", s.offered_rps, "req/s", "summary.json offered_rps"});
  c.evidence.push_back({"achieved rate", s.achieved_rps, "req/s", "summary.json achieved_rps"});
  c.status = ratio < l.achieved_fail ? CheckStatus::kFail : CheckStatus::kOk;
  c.detail = ratio < l.achieved_fail
                 ? fmt::format("the client sent {:.0f}% of the offered rate: the load was not what the card asked for",
                               ratio * 100)
                 : fmt::format("the client sent {:.1f}% of the offered rate", ratio * 100);
  return c;
}

ValidityCheck Errors(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("errors", "errors by class");
  const metrics::SummaryCounts& n = f.summary.counts;
  if (n.in_window <= 0) {
    c.detail = "no request in the window";
    return c;
  }
  const double rate = static_cast<double>(n.failed) / static_cast<double>(n.in_window);
  c.evidence.push_back({"failed share", rate * 100, "%", "summary.json counts.failed / counts.in_window"});
  std::string classes;
  for (const auto& [cls, count] : f.summary.errors) {
    c.evidence.push_back({"errors: " + cls, static_cast<double>(count), "", "summary.json errors." + cls});
    classes += (classes.empty() ? "" : ", ") + fmt::format("{} {}", count, cls);
  }
  c.status = rate >= l.error_fail ? CheckStatus::kFail : rate >= l.error_warn ? CheckStatus::kWarn : CheckStatus::kOk;
  c.detail = n.failed == 0 ? "no failed request"
                           : fmt::format("{} of {} requests failed ({}): latency percentiles cover the successes only",
                                         n.failed, n.in_window, classes);
  return c;
}

ValidityCheck Warmup(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("warmup", "warm-up adequacy");
  c.evidence.push_back({"warm-up", f.summary.window_start_s, "s", "summary.json window.start_s"});
  if (f.ttft_first_third_ms <= 0 || f.ttft_last_third_ms <= 0) {
    c.status = f.summary.window_start_s > 0 ? CheckStatus::kOk : CheckStatus::kWarn;
    c.detail = f.summary.window_start_s > 0 ? "warm-up excluded" : "no warm-up excluded";
    return c;
  }
  const double ratio = f.ttft_first_third_ms / f.ttft_last_third_ms;
  c.evidence.push_back({"mean TTFT, first third of the window", f.ttft_first_third_ms, "ms", "requests.jsonl"});
  c.evidence.push_back({"mean TTFT, last third of the window", f.ttft_last_third_ms, "ms", "requests.jsonl"});
  if (ratio > l.warmup_ratio_warn) {
    c.status = CheckStatus::kWarn;
    c.detail = fmt::format("the window's first third had {:.1f}x the TTFT of its last: the engine was still warming "
                           "up (lengthen --warmup)",
                           ratio);
  } else if (f.summary.window_start_s <= 0) {
    c.status = CheckStatus::kWarn;
    c.detail = "no warm-up was excluded (the first requests may include cold effects)";
  } else {
    c.status = CheckStatus::kOk;
    c.detail = "TTFT did not fall over the window: the warm-up was long enough";
  }
  return c;
}

ValidityCheck SampleSize(const RunFacts& f, const ValidityLimits& l) {
  ValidityCheck c = NewCheck("sample_size", "samples for the percentiles quoted");
  const int64_t n = f.summary.ttft_ms.count;
  c.evidence.push_back({"TTFT samples", static_cast<double>(n), "", "summary.json ttft_ms.count"});
  c.status = n >= l.p99_min_samples ? CheckStatus::kOk : CheckStatus::kWarn;
  c.detail = n >= l.p99_min_samples
                 ? fmt::format("{} samples: P99 rests on {} requests", n, std::max<int64_t>(1, n / 100))
                 : fmt::format("{} samples: a P99 needs at least {} (it is one request's value here)", n,
                               l.p99_min_samples);
  return c;
}

}  // namespace

const char* CheckStatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk: return "ok";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kNotAvailable: return "n/a";
  }
  return "n/a";
}

std::vector<ValidityCheck> CheckValidity(const RunFacts& f, const ValidityLimits& l) {
  return {ClientSaturationCheck(f), ScheduleLag(f, l), ClientCpu(f, l), AchievedRate(f, l),
          Errors(f, l),                Warmup(f, l),      SampleSize(f, l)};
}

bool ClientShaped(const std::vector<ValidityCheck>& checks) {
  // The client's own verdict, when the run has one, replaces the whole-window lag (which
  // counts the opening burst of sends and fired where the client kept up).
  bool own_verdict = false;
  for (const ValidityCheck& c : checks) {
    if (c.id == "client_saturation" && c.status != CheckStatus::kNotAvailable) own_verdict = true;
  }
  for (const ValidityCheck& c : checks) {
    if (c.status != CheckStatus::kFail) continue;
    if (c.id == "client_saturation" || c.id == "achieved_rate") return true;
    if (c.id == "schedule_lag" && !own_verdict) return true;
  }
  return false;
}

}  // namespace infereng::job
