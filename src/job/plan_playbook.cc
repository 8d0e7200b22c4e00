// The playbook rows and the one place an experiment's overrides become a card + setup.
#include "job/plan_playbook.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>

#include "catalog/precision.h"
#include "twin/utilisation.h"

namespace infereng::job {
namespace {

using twin::EngineConfig;

std::string Num(double v) {
  std::string s = std::to_string(static_cast<long long>(v));
  return s;
}

// value / target of the card's objectives on `metrics` in the baseline (0 when none).
double WorstRatio(const metrics::Summary& s, std::initializer_list<std::string_view> metrics) {
  double worst = 0;
  for (const metrics::SloResult& r : s.slo) {
    if (r.threshold_ms <= 0 || r.samples == 0) continue;
    if (std::find(metrics.begin(), metrics.end(), r.metric) == metrics.end()) continue;
    worst = std::max(worst, r.value_ms / r.threshold_ms);
  }
  return worst;
}

std::string QualityEval(const card::WorkloadCard& card) {
  if (card.quality.eval_set.empty()) {
    return "the card has no quality.eval_set: add the product's eval set and a pass_threshold before accepting";
  }
  char t[32];
  std::snprintf(t, sizeof t, "%.0f%%", card.quality.pass_threshold * 100);
  return "eval set " + card.quality.eval_set + " must pass at >= " + t +
         " (quality.pass_threshold) on the changed deployment, paired with the load (bench --quality-every)";
}

Candidate Skipped(Candidate c, std::string why, CandidateState state = CandidateState::kSkipped) {
  c.state = state;
  c.skip_reason = std::move(why);
  c.overrides.clear();
  return c;
}

// The next lower precision the catalog knows ("" at the bottom).
std::string LowerPrecision(const std::string& p) {
  auto parsed = catalog::ParsePrecision(p);
  if (!parsed.ok()) return "";
  switch (*parsed) {
    case catalog::Precision::kBf16: return "fp8";
    case catalog::Precision::kFp8: return "int4";
    case catalog::Precision::kInt8: return "int4";
    default: return "";
  }
}

void Batching(const card::WorkloadCard&, const twin::TwinSetup& base, const twin::SimulationResult& b,
              std::vector<Candidate>& out) {
  const EngineConfig& e = base.settings.engine;
  const bool preempting = b.twin.preemptions > 0;
  const int32_t to = preempting ? std::max(1, e.max_num_seqs / 2) : e.max_num_seqs * 2;
  Candidate c{.id = "batching.max_num_seqs",
              .family = "batching",
              .title = "max_num_seqs " + Num(e.max_num_seqs) + " -> " + Num(to),
              .variable = "engine.max_num_seqs (sequences batched per step)",
              .overrides = {{"engine.max_num_seqs", Num(to)}},
              .risk = "low",
              .risk_reason = preempting ? "fewer sequences per step: lower throughput per replica, fewer preemptions"
                                        : "more sequences per step: more KV pressure and longer steps (ITL)",
              .watch = {"running", "waiting", "kv_usage", "preemptions"}};
  if (to == e.max_num_seqs) c = Skipped(c, "max_num_seqs is already 1");
  out.push_back(c);
}

void ChunkedPrefill(const card::WorkloadCard&, const twin::TwinSetup& base, const twin::SimulationResult& b,
                    std::vector<Candidate>& out) {
  const EngineConfig& e = base.settings.engine;
  Candidate c{.family = "chunked_prefill",
              .risk = "low",
              .watch = {"tokens_per_step", "prefill_time_s", "waiting"}};
  if (!e.enable_chunked_prefill) {
    c.id = "chunked_prefill.enable";
    c.title = "chunked prefill on";
    c.variable = "engine.enable_chunked_prefill";
    c.overrides = {{"engine.enable_chunked_prefill", "true"}};
    c.risk_reason = "long prefills are split across steps: steadier ITL, slightly later first tokens";
  } else {
    // Smaller chunks when the inter-token objective is the tighter one, larger otherwise.
    const bool itl_tighter = WorstRatio(b.summary, {"itl_ms", "tpot_ms"}) > WorstRatio(b.summary, {"ttft_ms"});
    const int32_t to = itl_tighter ? std::max(256, e.max_num_batched_tokens / 2) : e.max_num_batched_tokens * 2;
    c.id = "chunked_prefill.budget";
    c.title = "max_num_batched_tokens " + Num(e.max_num_batched_tokens) + " -> " + Num(to);
    c.variable = "engine.max_num_batched_tokens (the chunked-prefill token budget per step)";
    c.overrides = {{"engine.max_num_batched_tokens", Num(to)}};
    c.risk_reason = itl_tighter ? "smaller chunks: steadier ITL, longer TTFT for long prompts"
                                : "larger chunks: faster prefill (TTFT), decodes stall longer behind prefills (ITL)";
    if (to == e.max_num_batched_tokens) c = Skipped(c, "the token budget is already at its 256-token floor");
  }
  out.push_back(c);
}

void Quantisation(const card::WorkloadCard& card, const twin::TwinSetup&, const twin::SimulationResult&,
                  std::vector<Candidate>& out) {
  const std::string w = LowerPrecision(card.model.precision);
  Candidate c{.id = "quantisation.weights",
              .family = "quantisation",
              .title = "weights " + card.model.precision + " -> " + (w.empty() ? "?" : w),
              .variable = "model.precision (weights)",
              .overrides = {{"model.precision", w}},
              .risk = "high",
              .risk_reason = "task quality can drop (the twin cannot predict by how much on your data)",
              .quality_eval = QualityEval(card),
              .watch = {"kv_usage", "generation_tokens_per_s"}};
  if (w.empty()) c = Skipped(c, "weights are already " + card.model.precision + " (the lowest precision the catalog models)");
  out.push_back(c);
  Candidate k{.id = "quantisation.kv_cache",
              .family = "quantisation",
              .title = "KV cache " + card.model.kv_precision + " -> fp8",
              .variable = "model.kv_precision (KV cache)",
              .overrides = {{"model.kv_precision", "fp8"}},
              .risk = "medium",
              .risk_reason = "twice the KV capacity; long-context quality can drop",
              .quality_eval = QualityEval(card),
              .watch = {"kv_usage", "preemptions"}};
  if (LowerPrecision(card.model.kv_precision).empty() || card.model.kv_precision != "bf16") {
    k = Skipped(k, "KV cache is already " + card.model.kv_precision);
  }
  out.push_back(k);
}

void Speculative(const card::WorkloadCard&, const twin::TwinSetup& base, const twin::SimulationResult&,
                 std::vector<Candidate>& out) {
  const EngineConfig& e = base.settings.engine;
  Candidate c{.id = "speculative_decoding",
              .family = "speculative_decoding",
              .title = "speculative decoding, 4 draft tokens",
              .variable = "engine.spec_tokens (draft tokens per round)",
              .overrides = {{"engine.spec_tokens", "4"}},
              .risk = "medium",
              .risk_reason = "the twin assumes an acceptance of engine.spec_acceptance (" +
                             std::to_string(static_cast<int>(e.spec_acceptance * 100)) +
                             "%); the benefit shrinks or reverses at high concurrency or low acceptance",
              .quality_eval = "lossless with rejection sampling: spot-check the eval set, measure the acceptance rate",
              .watch = {"spec_acceptance", "generation_tokens_per_s", "running"}};
  if (e.spec_tokens > 0) c = Skipped(c, "already on (engine.spec_tokens " + Num(e.spec_tokens) + ")");
  out.push_back(c);
}

void Caching(const card::WorkloadCard& card, const twin::TwinSetup& base, const twin::SimulationResult&,
             std::vector<Candidate>& out) {
  const EngineConfig& e = base.settings.engine;
  const bool shared = card.traffic.prefix.share > 0 && card.traffic.prefix.tokens > 0;
  const std::string privacy = card.constraints.privacy.empty()
                                  ? "cache keys stay per tenant (engine.prefix_cache_shared false)"
                                  : "privacy (" + card.constraints.privacy + "): cache keys stay per tenant";
  Candidate c{.id = "prefix_caching",
              .family = "prefix_caching",
              .title = "prefix caching on",
              .variable = "engine.enable_prefix_caching",
              .overrides = {{"engine.enable_prefix_caching", "true"}},
              .risk = "low",
              .risk_reason = privacy,
              .watch = {"prefix_cache_hit_rate", "prompt_tokens_per_s", "kv_usage"}};
  if (!shared) c = Skipped(c, "the card's prompts share no prefixes (traffic.prefix.share 0)");
  else if (e.enable_prefix_caching) c = Skipped(c, "already on (engine.enable_prefix_caching)");
  out.push_back(c);
  const twin::ClusterConfig& cl = base.settings.cluster;
  Candidate r{.id = "routing.prefix_affinity",
              .family = "routing",
              .title = "cache-aware routing (prefix affinity)",
              .variable = "cluster.router",
              .overrides = {{"cluster.router", "prefix_affinity"}},
              .risk = "medium",
              .risk_reason = "a hot prefix can overload one replica; " + privacy,
              .watch = {"prefix_cache_hit_rate", "waiting"}};
  if (!shared) r = Skipped(r, "the card's prompts share no prefixes (traffic.prefix.share 0)");
  else if (cl.replicas < 2) r = Skipped(r, "one replica: there is nothing to route between");
  else if (cl.router == twin::RouterPolicy::kPrefixAffinity) r = Skipped(r, "already prefix_affinity");
  else if (!e.enable_prefix_caching) r = Skipped(r, "prefix caching is off: routing for cache hits needs it first");
  out.push_back(r);
}

void Scale(const card::WorkloadCard& card, const twin::TwinSetup& base, const twin::SimulationResult&,
           std::vector<Candidate>& out) {
  const int tp = card.deployment.tp, count = card.deployment.count;
  const int new_tp = tp * 2, new_count = count % new_tp == 0 ? count : count * 2;
  Candidate t{.id = "parallelism.tp",
              .family = "parallelism",
              .title = "tensor parallel " + Num(tp) + " -> " + Num(new_tp) + " (" + Num(new_count) + " accelerators per replica)",
              .variable = "deployment.tp (tensor-parallel degree; accelerators per replica follow it)",
              .overrides = {{"deployment.tp", Num(new_tp)}, {"deployment.count", Num(new_count)}},
              .risk = "medium",
              .risk_reason = "all-reduce on every layer: the gain depends on the interconnect; more accelerators to pay for",
              .watch = {"generation_tokens_per_s", "kv_usage"}};
  if (new_count > 8) t = Skipped(t, "more than 8 accelerators per replica (beyond one node)");
  out.push_back(t);
  const int replicas = base.settings.cluster.replicas;
  out.push_back(Candidate{.id = "replicas",
                          .family = "replicas",
                          .title = "replicas " + Num(replicas) + " -> " + Num(replicas + 1),
                          .variable = "cluster.replicas",
                          .overrides = {{"cluster.replicas", Num(replicas + 1)}},
                          .risk = "low",
                          .risk_reason = "no engine change; cost grows with the replica",
                          .watch = {"waiting", "running"}});
  bool any = false;
  for (const std::string& a : card.constraints.accelerators) {
    if (a == card.deployment.accelerator) continue;
    any = true;
    out.push_back(Candidate{.id = "hardware." + a,
                            .family = "hardware",
                            .title = "accelerator " + card.deployment.accelerator + " -> " + a,
                            .variable = "deployment.accelerator",
                            .overrides = {{"deployment.accelerator", a}},
                            .risk = "medium",
                            .risk_reason = "new hardware: kernels, drivers and the engine build change with it",
                            .watch = {"kv_usage", "generation_tokens_per_s", "preemptions"}});
  }
  if (!any) {
    out.push_back(Skipped(Candidate{.id = "hardware", .family = "hardware", .title = "another accelerator",
                                    .variable = "deployment.accelerator", .risk = "medium"},
                          "constraints.accelerators names no other accelerator"));
  }
}

// Prefill/decode disaggregation at the same number of replicas (so at the same cost): the
// split is rate-matched, prefill replicas = replicas x (a prefill replica's busy time per
// request) / (both pools' busy time per request), at least one in each pool.
void Disaggregation(const card::WorkloadCard& card, const twin::TwinSetup& base, const twin::SimulationResult& baseline,
                    std::vector<Candidate>& out) {
  const twin::ClusterConfig& cc = base.settings.cluster;
  const int replicas = cc.replicas;
  Candidate c{.id = "disaggregation",
              .family = "disaggregation",
              .title = "prefill/decode disaggregation",
              .variable = "cluster.prefill_replicas (serving topology: separate prefill and decode pools)",
              .risk = "high",
              .risk_reason = "KV transfer between pools, a second failure domain, more operations work",
              .watch = {"queue_time_s", "prefill_time_s", "decode_time_s"}};
  if (base.settings.engine.scheduler == twin::EngineScheduler::kLlamaCpp) {
    out.push_back(Skipped(c, "not evaluated by the twin for engine.scheduler=llamacpp (llama-server has no disaggregated mode)",
                          CandidateState::kNotEvaluated));
    return;
  }
  if (card.product.PrefillOnly()) {
    out.push_back(Skipped(c, card.product.modality + " requests are prefill only: there is no decode to separate"));
    return;
  }
  if (cc.Disaggregated()) {
    out.push_back(Skipped(c, "the card's cluster is already disaggregated (cluster.prefill_replicas " +
                                 Num(cc.prefill_replicas) + ")"));
    return;
  }
  if (cc.autoscale != twin::AutoscaleMetric::kNone) {
    out.push_back(Skipped(c, "the twin does not autoscale disaggregated pools (cluster.autoscale is set)"));
    return;
  }
  if (replicas < 2) {
    out.push_back(Skipped(c, "needs at least 2 replicas to split into a prefill and a decode pool at the same cost "
                             "(the card has 1; the replicas experiment adds one)"));
    return;
  }
  const twin::PoolSeconds ps = twin::PoolSecondsPerRequest(base.settings.engine, *base.cost, baseline.twin.mean_input_tokens,
                                                          baseline.twin.mean_output_tokens, baseline.twin.prefix_hit_rate);
  const double share = ps.prefill_s + ps.decode_s > 0 ? ps.prefill_s / (ps.prefill_s + ps.decode_s) : 0.5;
  const int prefill = std::clamp(static_cast<int>(std::lround(replicas * share)), 1, replicas - 1);
  char link[96];
  std::snprintf(link, sizeof link, "%.3g GB/s per accelerator + %.3g ms per transfer", cc.kv_transfer_gb_s,
                cc.kv_transfer_latency_s * 1e3);
  c.title = "disaggregate " + Num(replicas) + " replicas -> " + Num(prefill) + " prefill + " + Num(replicas - prefill) + " decode";
  c.overrides = {{"cluster.prefill_replicas", Num(prefill)}};
  c.risk_reason += std::string("; the twin prices the KV transfer at ") + link +
                   " (set cluster.kv_transfer_bandwidth / kv_transfer_latency to your link)";
  out.push_back(c);
}

}  // namespace

const char* CandidateStateName(CandidateState s) {
  switch (s) {
    case CandidateState::kEvaluate: return "evaluated";
    case CandidateState::kSkipped: return "skipped";
    case CandidateState::kNotEvaluated: return "not evaluated by the twin";
  }
  return "?";
}

std::vector<Candidate> PlaybookCandidates(const card::WorkloadCard& card, const twin::TwinSetup& base,
                                          const twin::SimulationResult& baseline) {
  std::vector<Candidate> out;
  Batching(card, base, baseline, out);
  ChunkedPrefill(card, base, baseline, out);
  Quantisation(card, base, baseline, out);
  Speculative(card, base, baseline, out);
  Caching(card, base, baseline, out);
  Scale(card, base, baseline, out);
  Disaggregation(card, base, baseline, out);
  return out;
}

Result<OverriddenCard> ApplyOverrides(const card::WorkloadCard& card, const std::vector<PlanOverride>& overrides) {
  OverriddenCard o{card, {}};
  for (const PlanOverride& p : overrides) {
    auto integer = [&p]() -> Result<int> {
      try {
        size_t used = 0;
        const int v = std::stoi(p.value, &used);
        if (used == p.value.size() && v >= 1) return v;
      } catch (const std::exception&) {
      }
      return Status::InvalidArgument(p.key + ": expected an integer >= 1, got \"" + p.value + "\"");
    };
    if (p.key == "model.precision") {
      o.card.model.precision = p.value;
    } else if (p.key == "model.kv_precision") {
      o.card.model.kv_precision = p.value;
    } else if (p.key == "deployment.accelerator") {
      o.card.deployment.accelerator = p.value;
      o.card.deployment.price_per_hour_usd.reset();  // the card's price was the old accelerator's
    } else if (p.key == "deployment.tp") {
      INFERENG_ASSIGN_OR_RETURN(o.card.deployment.tp, integer());
    } else if (p.key == "deployment.count") {
      INFERENG_ASSIGN_OR_RETURN(o.card.deployment.count, integer());
    } else if (p.key.starts_with("engine.") || p.key.starts_with("cluster.") || p.key.starts_with("cost.")) {
      o.setup.sets.push_back(p.key + "=" + p.value);
    } else {
      return Status::InvalidArgument("plan override: unknown key \"" + p.key + "\"");
    }
  }
  return o;
}

std::string OverrideText(const std::vector<PlanOverride>& overrides) {
  std::string out;
  for (const PlanOverride& p : overrides) {
    if (!out.empty()) out += " ";
    const bool knob = p.key.starts_with("engine.") || p.key.starts_with("cluster.") || p.key.starts_with("cost.");
    out += knob ? "--set " + p.key + "=" + p.value : "(card) " + p.key + ": " + p.value;
  }
  return out;
}

}  // namespace infereng::job
