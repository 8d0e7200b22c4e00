#include "job/diagnose_rules.h"

#include <algorithm>
#include <cmath>

namespace infereng::job {
namespace {

constexpr const char* kEngineFile = "engine_metrics.jsonl ";

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

// Client-bound: the client could not send on time (seed: "GPU 사용률 낮음, 지연 시간 높음 →
// CPU/토큰화, … 스케줄링" — the host, here the load generator's).
double ClientBound(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::Summary& s = f.summary;
  const double lag = s.schedule_lag_ms.p99;
  const double limit = std::max(10.0, 0.1 * s.ttft_ms.p50);
  const double achieved = Ratio(s.achieved_rps, s.offered_rps);
  double score = 0;
  if (!s.schedule_lag_ms.empty()) {
    ev->push_back({"schedule lag p99", lag, "ms", "summary.json schedule_lag_ms.p99"});
    if (lag > limit) score = 0.95;
    else if (lag > 1) score = 0.3;
  }
  if (s.open_loop && s.offered_rps > 0) {
    ev->push_back({"achieved / offered rate", achieved * 100, "%", "summary.json achieved_rps / offered_rps"});
    if (achieved < 0.95) score = std::max(score, 0.9);
  }
  if (f.client_cpu_s && s.window_end_s > 0) {
    ev->push_back({"client CPU per second of run", *f.client_cpu_s / s.window_end_s, "cores", "summary.json client.cpu_s"});
  }
  return score;
}

// Admission / queueing (seed: "TTFT 높음, ITL 정상 → 큐 대기 …"; issue 12: "high TTFT with
// normal ITL and a growing queue").
double Queueing(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::Summary& s = f.summary;
  if (s.ttft_ms.empty()) return 0;
  double share = -1;
  if (const SignalSeries* q = f.Signal("queue_time_s")) {
    share = Ratio(q->Mean() * 1e3, s.ttft_ms.mean);
    ev->push_back({"engine queue time (mean)", q->Mean() * 1e3, "ms", std::string(kEngineFile) + "queue_time_s"});
  } else if (!s.queue_ms.empty()) {
    share = Ratio(s.queue_ms.mean, s.ttft_ms.mean);
    ev->push_back({"server queue time (mean)", s.queue_ms.mean, "ms", "summary.json queue_ms.mean"});
  }
  if (share >= 0) ev->push_back({"queue share of TTFT", std::min(share, 1.0) * 100, "%", "queue time / summary.json ttft_ms.mean"});
  ev->push_back({"TTFT p50", s.ttft_ms.p50, "ms", "summary.json ttft_ms.p50"});
  double waiting_mean = 0, waiting_growth = 0;
  if (const SignalSeries* w = f.Signal("waiting")) {
    waiting_mean = w->Mean();
    const double t0 = s.window_start_s, t1 = s.window_end_s, third = (t1 - t0) / 3;
    const double a = w->MeanBetween(t0, t0 + third), b = w->MeanBetween(t1 - third, t1 + 1e-9);
    if (std::isfinite(a) && std::isfinite(b)) waiting_growth = b - a;
    ev->push_back({"requests waiting in the engine (mean)", waiting_mean, "", std::string(kEngineFile) + "waiting"});
    ev->push_back({"requests waiting (max)", w->Max(), "", std::string(kEngineFile) + "waiting"});
  }
  // llama.cpp reports no queue time; its /slots say when every slot was busy, so that a new
  // arrival had to wait for one (client/llamacpp_slots.h: slots_busy, slots_total per scrape).
  double all_busy_share = -1;
  const SignalSeries* busy = f.Signal("slots_busy");
  const SignalSeries* total = f.Signal("slots_total");
  if (busy != nullptr && total != nullptr && busy->v.size() == total->v.size()) {
    int full = 0;
    for (std::size_t i = 0; i < busy->v.size(); ++i) full += total->v[i] > 0 && busy->v[i] >= total->v[i] ? 1 : 0;
    all_busy_share = Ratio(full, static_cast<double>(busy->v.size()));
    ev->push_back({"scrapes with every slot busy", all_busy_share * 100, "%", std::string(kEngineFile) + "slots_busy, slots_total"});
  }
  const double ttft_growth = Ratio(f.ttft_last_third_ms, f.ttft_first_third_ms);
  if (ttft_growth > 0) ev->push_back({"TTFT last third / first third", ttft_growth, "x", "requests.jsonl"});
  const double itl_ratio = Ratio(s.itl_ms.p99, s.itl_ms.p50);
  ev->push_back({"ITL p99 / p50", itl_ratio, "x", "summary.json itl_ms"});
  double score = 0;
  if (share >= 0.8) score += 0.55;
  else if (share >= 0.5) score += 0.45;
  else if (share >= 0.3) score += 0.2;
  if (waiting_mean >= 1) score += 0.2;
  if (all_busy_share >= 0.8) score += 0.2;  // no free slot on most scrapes: arrivals wait
  if (ttft_growth >= 1.5 || waiting_growth >= 2) score += 0.25;
  if (score > 0 && itl_ratio >= 5) score -= 0.15;  // ITL is not normal: interference explains part of it
  return std::clamp(score, 0.0, 1.0);
}

// KV-cache pressure (seed: "TTFT 정상, ITL 낮음 → … KV-캐시 압력"; "동시성 증가에 따라 둘 다
// 악화 → … 메모리 용량"; issue 12: "KV usage near full with preemptions → memory-bound").
double KvStarved(const RunFacts& f, std::vector<Evidence>* ev) {
  const SignalSeries* kv = f.Signal("kv_usage");
  const SignalSeries* pre = f.Signal("preemptions");
  if (kv == nullptr && pre == nullptr) return 0;
  double score = 0;
  if (kv != nullptr) {
    ev->push_back({"KV-cache usage (max)", kv->Max() * 100, "%", std::string(kEngineFile) + "kv_usage"});
    ev->push_back({"KV-cache usage (mean)", kv->Mean() * 100, "%", std::string(kEngineFile) + "kv_usage"});
    if (kv->Max() >= 0.9) score += 0.35;
  }
  if (pre != nullptr) {
    const double n = pre->Sum();
    ev->push_back({"preemptions during the run", n, "", std::string(kEngineFile) + "preemptions"});
    if (n > 0) score += 0.45;
    const double per_req = Ratio(n, static_cast<double>(f.summary.counts.records));
    if (per_req >= 0.05) score += 0.15;
    ev->push_back({"preemptions per request", per_req, "", "preemptions / summary.json counts.records"});
  }
  return score >= 0.45 ? std::min(score, 1.0) : 0;  // usage alone is a full cache, not a starved one
}

// Prefill interference (issue 12: "high ITL or ITL spikes with large prefills in flight";
// seed: "TTFT 정상, ITL 낮음 → … 배치 경합").
double PrefillInterference(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::Summary& s = f.summary;
  const double ratio = Ratio(s.itl_ms.p99, s.itl_ms.p50);
  ev->push_back({"ITL p99 / p50", ratio, "x", "summary.json itl_ms"});
  ev->push_back({"ITL spikes (> 3x the median gap)", static_cast<double>(f.itl_spikes), "", "requests.jsonl chunks"});
  ev->push_back({"spikes during another request's prefill", f.spikes_with_prefill * 100, "%", "requests.jsonl chunks"});
  ev->push_back({"all gaps during another request's prefill", f.gaps_with_prefill * 100, "%", "requests.jsonl chunks"});
  ev->push_back({"mean prompt length", f.prompt_tokens_mean, "tokens", "requests.jsonl prompt_tokens"});
  if (ratio < 3 || f.itl_spikes < 10 || f.spikes_with_prefill < 0.5 || f.spikes_with_prefill < 1.5 * f.gaps_with_prefill) {
    return 0;
  }
  double score = 0.55;
  if (ratio >= 5) score += 0.15;
  if (f.prompt_tokens_mean >= 1000) score += 0.15;
  if (f.spikes_with_prefill >= 0.8) score += 0.1;
  return std::min(score, 1.0);
}

// Prefill-bound (issue 12: "TTFT that grows with prompt length → prefill-bound"; seed:
// "TTFT 높음, ITL 정상 → … 긴 프롬프트, 프리필 컴퓨팅").
double PrefillBound(const RunFacts& f, std::vector<Evidence>* ev) {
  ev->push_back({"correlation of TTFT with prompt length", f.prompt_ttft_correlation, "r", "requests.jsonl"});
  ev->push_back({"median TTFT, longest / shortest prompt quartile", f.ttft_long_over_short, "x", "requests.jsonl"});
  if (const SignalSeries* p = f.Signal("prefill_time_s")) {
    ev->push_back({"engine prefill time (mean)", p->Mean() * 1e3, "ms", std::string(kEngineFile) + "prefill_time_s"});
  }
  if (f.prompt_ttft_correlation < 0.5 || f.ttft_long_over_short < 1.5) return 0;
  double score = 0.45;
  if (f.prompt_ttft_correlation >= 0.8) score += 0.2;
  if (f.ttft_long_over_short >= 3) score += 0.1;
  return score;
}

// Saturation (issue 12: "throughput plateau while latency keeps rising"; seed: "동시성 증가에
// 따라 둘 다 악화 → … 포화").
double Saturation(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::Summary& s = f.summary;
  int64_t sent = 0, done = 0;
  double first = 0, last = 0;
  int nf = 0, nl = 0;
  const double t0 = s.window_start_s, t1 = s.window_end_s, third = (t1 - t0) / 3;
  for (const metrics::TimeBucket& b : s.timeseries) {
    if (b.start_s < t0 || b.start_s + b.width_s > t1) continue;
    sent += b.sent;
    done += b.completed + b.errors;
    if (b.start_s < t0 + third) first += b.in_flight, ++nf;
    if (b.start_s >= t1 - third) last += b.in_flight, ++nl;
  }
  if (nf == 0 || nl == 0 || sent == 0) return 0;
  first /= nf;
  last /= nl;
  ev->push_back({"completed / sent in the window", Ratio(static_cast<double>(done), static_cast<double>(sent)) * 100, "%",
                 "summary.json timeseries"});
  ev->push_back({"requests in flight, first third", first, "", "summary.json timeseries in_flight"});
  ev->push_back({"requests in flight, last third", last, "", "summary.json timeseries in_flight"});
  if (done >= 0.9 * static_cast<double>(sent) || last < 2 * std::max(first, 0.5)) return 0;
  return 0.5;
}

// Bursts (issue 12: "P99 far above P90 with bursty arrivals → burst headroom/autoscaling").
double Bursts(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::Summary& s = f.summary;
  const double tail = Ratio(s.ttft_ms.p99, s.ttft_ms.p90);
  ev->push_back({"TTFT p99 / p90", tail, "x", "summary.json ttft_ms"});
  ev->push_back({"sends per second, coefficient of variation", f.sent_cv, "", "summary.json timeseries sent"});
  if (tail < 2 || f.sent_cv < 0.5) return 0;
  return tail >= 3 ? 0.6 : 0.4;
}

// Overload behaviour (issue 12: "errors/timeouts → overload behaviour").
double Overload(const RunFacts& f, std::vector<Evidence>* ev) {
  const metrics::SummaryCounts& n = f.summary.counts;
  if (n.in_window <= 0 || n.failed <= 0) return 0;
  const double rate = static_cast<double>(n.failed) / static_cast<double>(n.in_window);
  ev->push_back({"failed share", rate * 100, "%", "summary.json counts.failed / counts.in_window"});
  for (const auto& [cls, count] : f.summary.errors) {
    ev->push_back({"errors: " + cls, static_cast<double>(count), "", "summary.json errors." + cls});
  }
  if (rate < 0.01) return 0;
  return std::min(1.0, 0.4 + rate * 5);
}

// Prefix cache (issue 12: "low prefix-cache hit rate with shared prefixes → routing/cache config").
double PrefixCache(const RunFacts& f, std::vector<Evidence>* ev) {
  const SignalSeries* h = f.Signal("prefix_cache_hit_rate");
  if (h == nullptr) return 0;
  ev->push_back({"prefix-cache hit rate (mean)", h->Mean() * 100, "%", std::string(kEngineFile) + "prefix_cache_hit_rate"});
  ev->push_back({"mean prompt length", f.prompt_tokens_mean, "tokens", "requests.jsonl prompt_tokens"});
  if (h->Mean() >= 0.1 || f.prompt_tokens_mean < 500) return 0;
  return 0.2;  // low on its own: whether the prompts share prefixes is the card's to say
}

const std::vector<SymptomRule> kRules = {
    {"client_bound", "The client shaped the measurement",
     "GPU 사용률 낮음, 지연 시간 높음 → CPU/토큰화, 데이터 전송, 동기화, 네트워크, 스케줄링",
     "high latency the engine did not cause: the load generator sent late (CPU, scheduling)",
     "schedule lag P99 under 1 ms and achieved rate within 5% of offered on a rerun with the same result",
     "load generator capacity", "rerun the same card from a less loaded machine (or with fewer client threads busy)",
     "schedule lag P99 < 1 ms; if TTFT/E2E change, the first run's numbers were the client's", "", ClientBound},
    {"queueing", "Admission / queueing: more load than capacity",
     "TTFT 높음, ITL 정상 → 큐 대기, 긴 프롬프트, 프리필 컴퓨팅, 콜드 스타트, 전처리",
     "high TTFT with normal ITL and a growing engine queue",
     "queue time a small share of TTFT, and TTFT unchanged at a lower rate",
     "offered rate", "rerun at 70% of this rate (--rate-scale 0.7), nothing else changed",
     "queue time and TTFT fall far more than 30%; if they do not, look at prefill", "engine.max_num_seqs", Queueing},
    {"kv_starved", "KV-cache starved: preemptions",
     "TTFT 정상, ITL 낮음 → 디코드 대역폭, 배치 경합, KV-캐시 압력, 커널 효율성",
     "KV-cache usage near full with preemptions: memory-bound",
     "no preemptions and KV usage below 90% at the same load",
     "KV-cache capacity", "rerun with more KV-cache blocks (gpu_memory_utilization up, or fp8 KV cache), or max_num_seqs down",
     "preemptions fall to 0 and E2E P99 falls", "engine.kv_cache_tokens", KvStarved},
    {"prefill_interference", "Prefill interference: long prefills stall decodes",
     "TTFT 정상, ITL 낮음 → 디코드 대역폭, 배치 경합, KV-캐시 압력, 커널 효율성",
     "high ITL or ITL spikes while other requests' large prefills are in flight",
     "ITL spikes no more frequent during other requests' prefills than at other times",
     "chunked-prefill budget", "rerun with chunked prefill on (or a smaller max_num_batched_tokens)",
     "ITL P99 / P50 falls toward 1-2x; TTFT may rise a little", "engine.enable_chunked_prefill", PrefillInterference},
    {"prefill_bound", "Prefill-bound: TTFT grows with prompt length",
     "TTFT 높음, ITL 정상 → 큐 대기, 긴 프롬프트, 프리필 컴퓨팅, 콜드 스타트, 전처리",
     "TTFT that grows with prompt length",
     "TTFT flat across prompt lengths at the same load",
     "prompt processing cost", "rerun with prefix caching on (shared prefixes) or a larger prefill chunk",
     "TTFT of long prompts falls; the correlation with prompt length weakens", "engine.enable_prefix_caching",
     PrefillBound},
    {"saturation", "Saturation: completions fall behind sends",
     "동시성 증가에 따라 둘 다 악화 → 큐잉, 메모리 용량, 배치 정책, 승인 제어, 포화",
     "throughput plateau while latency and the backlog keep rising",
     "completions keep pace with sends and the backlog stays flat",
     "offered load", "sweep the rate (infereng sweep CARD) to find the knee and the max goodput under the SLO",
     "below the knee, completions match sends and TTFT is flat", "", Saturation},
    {"bursts", "Bursts: tail latency from arrival bursts",
     "처리량 증가하지만 꼬리 지연 시간이 SLO 위반 → 배치/동시성 정책, 큐 한도, 워크로드 격리",
     "P99 far above P90 with bursty arrivals",
     "the same P99 / P90 with smooth (Poisson or constant) arrivals at the same mean rate",
     "arrival burstiness", "rerun at the same mean rate with Poisson arrivals (traffic.arrival: poisson)",
     "P99 / P90 falls below 2: the tail is burst headroom (autoscaling or a queue limit)", "", Bursts},
    {"overload", "Overload behaviour: requests fail",
     "동시성 증가에 따라 둘 다 악화 → 큐잉, 메모리 용량, 배치 정책, 승인 제어, 포화",
     "errors and timeouts under load",
     "the same errors at a low rate (then they are not overload)",
     "offered rate", "rerun at half this rate",
     "the failed share falls to ~0: the engine sheds load here (check its queue limit and timeout)",
     "engine.max_waiting_requests", Overload},
    {"prefix_cache", "Prefix cache: low hit rate",
     "KV 및 접두사 캐싱: 적중률, 절약된 프리필 작업, … 라우팅 지역성을 측정하세요",
     "low prefix-cache hit rate with long prompts",
     "the card's prompts share no prefixes (then a low hit rate is expected)",
     "prefix caching / routing", "rerun with prefix caching on and cache-aware routing",
     "hit rate rises and TTFT falls for prompts with shared prefixes", "engine.enable_prefix_caching", PrefixCache},
};

bool HasEngineEvidence(const std::vector<Evidence>& ev) {
  return std::any_of(ev.begin(), ev.end(), [](const Evidence& e) { return e.source.starts_with(kEngineFile); });
}
bool HasClientEvidence(const std::vector<Evidence>& ev) {
  return std::any_of(ev.begin(), ev.end(), [](const Evidence& e) { return !e.source.starts_with(kEngineFile); });
}

}  // namespace

const std::vector<SymptomRule>& SymptomRules() { return kRules; }

std::vector<Hypothesis> ApplySymptomRules(const RunFacts& f) {
  std::vector<Hypothesis> out;
  for (const SymptomRule& r : kRules) {
    std::vector<Evidence> ev;
    const double score = r.score(f, &ev);
    if (score <= 0) continue;
    Hypothesis h;
    h.id = r.id;
    h.title = r.title;
    h.seed_symptom = r.seed_symptom;
    h.symptom = r.symptom;
    h.score = score;
    // Two independent views (the client's records and the engine's own series) agreeing, or
    // a client-side finding (it needs no engine view), earn "high".
    const bool corroborated = (HasEngineEvidence(ev) && HasClientEvidence(ev)) || r.id == std::string_view("client_bound");
    h.confidence = score >= 0.75 && corroborated ? "high" : score >= 0.45 ? "medium" : "low";
    h.evidence = std::move(ev);
    h.refute = r.refute;
    h.experiment = {std::string(r.variable), std::string(r.change), std::string(r.expect), std::string(r.twin_set)};
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace infereng::job
