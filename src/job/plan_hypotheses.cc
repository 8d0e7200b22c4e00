// One rule per hypothesis over the twin's prediction; the wording and the experiments
// follow diagnose's symptom table (diagnose_rules.cc), so a plan and a diagnosis agree.
#include "job/plan_hypotheses.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

namespace infereng::job {
namespace {

constexpr const char* kTwin = "twin prediction ";

double Objective(const metrics::Summary& s, std::initializer_list<std::string_view> metrics, double* value = nullptr) {
  double worst = 0;
  for (const metrics::SloResult& r : s.slo) {
    if (r.threshold_ms <= 0 || r.samples == 0) continue;
    if (std::find(metrics.begin(), metrics.end(), r.metric) == metrics.end()) continue;
    if (r.value_ms / r.threshold_ms > worst) {
      worst = r.value_ms / r.threshold_ms;
      if (value) *value = r.value_ms;
    }
  }
  return worst;
}

Hypothesis Make(std::string id, std::string title, std::string symptom, double score, std::vector<Evidence> ev,
                std::string refute, Experiment x) {
  Hypothesis h;
  h.id = std::move(id);
  h.title = std::move(title);
  h.symptom = std::move(symptom);
  h.score = score;
  h.confidence = score >= 0.45 ? "medium" : "low";
  h.evidence = std::move(ev);
  h.refute = std::move(refute);
  h.experiment = std::move(x);
  return h;
}

// Decode-bound (bandwidth) or prefill interference, when the inter-token objective is tight.
void InterToken(const metrics::Summary& s, double itl_ratio, std::vector<Hypothesis>* out) {
  if (itl_ratio >= 0.7) {
    const double spread = s.itl_ms.p50 > 0 ? s.itl_ms.p99 / s.itl_ms.p50 : 0;
    if (spread >= 3) {
      out->push_back(Make("prefill_interference", "Prefill interference: long prefills stall decodes",
                         "high ITL or ITL spikes while other requests' large prefills are in flight",
                         itl_ratio >= 1 ? 0.8 : 0.5,
                         {{"ITL P99 / P50", spread, "x", std::string(kTwin) + "itl_ms"},
                          {"ITL-side objective / target", itl_ratio, "x", std::string(kTwin) + "slo"}},
                         "ITL spikes no more frequent during other requests' prefills in a measured run",
                         {"chunked-prefill budget", "a smaller max_num_batched_tokens", "ITL P99 / P50 falls toward 1-2x",
                          "engine.max_num_batched_tokens"}));
    } else {
      out->push_back(Make("decode_bound", "Decode-bound: every token step is slow (memory bandwidth)",
                         "high ITL with steady steps: decode reads every weight and the KV cache per token",
                         itl_ratio >= 1 ? 0.8 : 0.5,
                         {{"ITL P50", s.itl_ms.p50, "ms", std::string(kTwin) + "itl_ms.p50"},
                          {"ITL-side objective / target", itl_ratio, "x", std::string(kTwin) + "slo"},
                          {"output throughput", s.output_tokens_per_s, "tok/s", std::string(kTwin) + "output_tokens_per_s"}},
                         "ITL P50 well under the target in a measured run",
                         {"bytes read per token", "fp8 weights or speculative decoding", "ITL P50 and P99 fall",
                          "engine.spec_tokens"}));
    }
  }
}

}  // namespace

std::vector<Hypothesis> TwinHypotheses(const card::WorkloadCard& card, const twin::SimulationResult& b) {
  const metrics::Summary& s = b.summary;
  const twin::TwinReport& t = b.twin;
  std::vector<Hypothesis> out;
  const double ttft_ratio = Objective(s, {"ttft_ms"});
  const double itl_ratio = Objective(s, {"itl_ms", "tpot_ms"});

  // Queueing / capacity.
  {
    const double q99 = s.queue_ms.p99, ttft99 = s.ttft_ms.p99;
    double score = 0;
    if (t.utilisation_estimate >= 1 || t.queue_growing) score = 0.9;
    else if (t.utilisation_estimate >= 0.9) score = 0.7;
    else if (t.utilisation_estimate >= 0.7 && ttft99 > 0 && q99 > 0.2 * ttft99) score = 0.4;
    if (score > 0) {
      out.push_back(Make("queueing", "Admission / queueing: the load is near the deployment's capacity",
                         "high TTFT with normal ITL and a growing engine queue", score,
                         {{"utilisation (offered / capacity)", t.utilisation_estimate, "", std::string(kTwin) + "twin.utilisation_estimate"},
                          {"capacity estimate", t.capacity_rps_estimate, "req/s", std::string(kTwin) + "twin.capacity_rps_estimate"},
                          {"engine queue P99", q99, "ms", std::string(kTwin) + "queue_ms.p99"},
                          {"TTFT P99", ttft99, "ms", std::string(kTwin) + "ttft_ms.p99"}},
                         "queue time a small share of TTFT when measured at this rate",
                         {"replicas", "measure at 70% of this rate (--rate-scale 0.7), then add a replica",
                          "queue time and TTFT fall far more than 30%", "cluster.replicas"}));
    }
  }
  // KV-cache starvation.
  if (t.preemptions > 0 || t.kv_usage_peak >= 0.95) {
    const double per_req = s.counts.in_window > 0 ? static_cast<double>(t.preemptions) / static_cast<double>(s.counts.in_window) : 0;
    out.push_back(Make("kv_starved", "KV-cache starved: preemptions", "KV-cache usage near full with preemptions: memory-bound",
                       std::min(0.9, (t.preemptions > 0 ? 0.5 : 0.35) + per_req),
                       {{"KV usage peak", t.kv_usage_peak * 100, "%", std::string(kTwin) + "twin.kv_usage_peak"},
                        {"preemptions", static_cast<double>(t.preemptions), "", std::string(kTwin) + "twin.preemptions"},
                        {"preemptions per request", per_req, "", std::string(kTwin) + "twin.preemptions / counts.in_window"}},
                       "no preemptions and KV usage below 90% in a measured run at this load",
                       {"KV-cache capacity", "fp8 KV cache (model.kv_precision) or fewer sequences (max_num_seqs)",
                        "preemptions fall to 0 and E2E P99 falls", "engine.kv_cache_tokens"}));
  }
  // Prefill-bound TTFT.
  if (s.prefill_ms.count > 0 && s.ttft_ms.p99 > 0) {
    const double share = s.prefill_ms.p99 / s.ttft_ms.p99;
    if (share >= 0.5 && ttft_ratio >= 0.5) {
      out.push_back(Make("prefill_bound", "Prefill-bound: TTFT is mostly prompt processing",
                         "TTFT that grows with prompt length", ttft_ratio >= 1 ? 0.8 : 0.5,
                         {{"prefill P99 / TTFT P99", share * 100, "%", std::string(kTwin) + "prefill_ms.p99 / ttft_ms.p99"},
                          {"TTFT P99 / target", ttft_ratio, "x", std::string(kTwin) + "slo"},
                          {"prefix-cache hit rate", t.prefix_hit_rate * 100, "%", std::string(kTwin) + "twin.prefix_hit_rate"}},
                         "measured TTFT flat across prompt lengths at the same load",
                         {"prompt processing cost", "prefix caching, a larger prefill chunk, or more compute (TP)",
                          "TTFT of long prompts falls", "engine.max_num_batched_tokens"}));
    }
  }
  InterToken(s, itl_ratio, &out);
  // Prefix cache unused although the card's prompts share prefixes.
  if (card.traffic.prefix.share >= 0.3 && card.traffic.prefix.tokens > 0 && t.prefix_hit_rate < 0.1) {
    out.push_back(Make("prefix_cache", "Prefix cache: shared prefixes are recomputed",
                       "low prefix-cache hit rate with shared prefixes in the card", 0.45,
                       {{"card prefix share", card.traffic.prefix.share * 100, "%", "card traffic.prefix.share"},
                        {"prefix-cache hit rate", t.prefix_hit_rate * 100, "%", std::string(kTwin) + "twin.prefix_hit_rate"}},
                       "a measured hit rate near the card's share",
                       {"prefix caching / routing", "prefix caching on and cache-aware routing", "hit rate rises, TTFT falls",
                        "engine.enable_prefix_caching"}));
  }
  // Overload: rejected or timed-out requests.
  if (s.counts.in_window > 0 && s.counts.failed > 0) {
    const double rate = static_cast<double>(s.counts.failed) / static_cast<double>(s.counts.in_window);
    if (rate >= 0.01) {
      out.push_back(Make("overload", "Overload behaviour: requests fail", "errors and timeouts under load",
                         std::min(0.9, 0.4 + rate * 5),
                         {{"failed share", rate * 100, "%", std::string(kTwin) + "counts.failed / counts.in_window"},
                          {"rejections", static_cast<double>(t.rejections), "", std::string(kTwin) + "twin.rejections"},
                          {"timeouts", static_cast<double>(t.timeouts), "", std::string(kTwin) + "twin.timeouts"}},
                         "the same errors at a low rate", {"offered rate", "measure at half this rate", "the failed share falls to ~0",
                                                           "engine.max_waiting_requests"}));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
  if (out.empty()) {
    out.push_back(Make("headroom", "No bottleneck at the card's load: the twin predicts headroom",
                       "every objective met below saturation", 0,
                       {{"utilisation (offered / capacity)", t.utilisation_estimate, "", std::string(kTwin) + "twin.utilisation_estimate"},
                        {"KV usage peak", t.kv_usage_peak * 100, "%", std::string(kTwin) + "twin.kv_usage_peak"},
                        {"worst objective / target", std::max(ttft_ratio, itl_ratio), "x", std::string(kTwin) + "slo"}},
                       "a measured run that misses an objective at this load",
                       {"offered load", "sweep the rate (infereng sweep CARD) to find the knee; cost, not latency, is the lever",
                        "the knee lies above the card's peak rate", ""}));
    out.back().confidence = "low";
  }
  return out;
}

}  // namespace infereng::job
