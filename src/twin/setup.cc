#include "twin/setup.h"

#include <algorithm>
#include <cctype>

#include "card/card_parser.h"
#include "fit/memory_plan.h"
#include "twin/cost_caveats.h"
#include "twin/roofline_cost.h"

namespace infereng::twin {

namespace {

// The weights' precision as the card spells it when it is a 16-bit alias: fp16 and bf16
// cost the same (one 16-bit parse), but the description must not rename the user's fp16.
std::string WeightsLabel(const std::string& card_text, catalog::Precision p) {
  std::string t;
  for (char c : card_text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (p == catalog::Precision::kBf16 && (t == "fp16" || t == "float16" || t == "half")) return "fp16";
  return std::string(catalog::PrecisionName(p));
}

// Names a card field in errors: "FILE:LINE: path" for a card read from a file, "card path"
// for one built from flags (serve --model).
std::string CardField(const card::WorkloadCard& card, const std::string& path) {
  return card.source_path.empty() ? "card " + path : card::FieldLocation(card, path) + ": " + path;
}

Result<catalog::ModelSpec> ResolveModel(const card::WorkloadCard& card, const catalog::Catalog& cat) {
  if (!card.model.architecture.empty()) {
    auto m = cat.ResolveModel(card.model.architecture);
    if (!m.ok()) return m.status().WithContext(CardField(card, "model.architecture"));
    return m;
  }
  if (card.model.id.empty()) {
    return Status::InvalidArgument(
        CardField(card, "model") + ": the twin needs model.architecture (a catalog name like "
        "llama-3.1-8b or a path to a config.json); model.id is empty too");
  }
  for (const catalog::ModelSpec& m : cat.models()) {
    std::string a = m.hf_id, b = card.model.id;
    std::transform(a.begin(), a.end(), a.begin(), ::tolower);
    std::transform(b.begin(), b.end(), b.begin(), ::tolower);
    if (!a.empty() && a == b) return m;
  }
  auto m = cat.ResolveModel(card.model.id);
  if (!m.ok()) {
    return Status::InvalidArgument(CardField(card, "model.id") + ": \"" + card.model.id +
                                   "\" is not in the catalog and model.architecture is not set; set it");
  }
  return m;
}

// ResolveTwin's body. `*deployment_failed` tells a failure of the deployment (fit
// validation, no memory left for the KV cache) from one of the input.
Result<TwinSetup> Resolve(const card::WorkloadCard& card, const SetupOptions& options, const catalog::Catalog& cat,
                          bool* deployment_failed);

}  // namespace

void TwinSetup::UseMeasuredCost(std::shared_ptr<const CostModel> measured, const std::string& label) {
  cost = std::move(measured);
  description += ", " + label;
  cost_caveats.clear();
}

TwinSetup ManualTwin(TwinSettings settings, std::shared_ptr<const CostModel> cost,
                     double price_per_replica_hour) {
  TwinSetup s;
  s.settings = std::move(settings);
  s.cost = std::move(cost);
  s.price_per_accelerator_hour = price_per_replica_hour;
  s.accelerators_per_replica = 1;
  s.kv_tokens_from_fit = s.settings.engine.kv_cache_tokens;
  s.description = "manual cost model";
  return s;
}

Result<TwinSetup> ResolveTwin(const card::WorkloadCard& card, const SetupOptions& options,
                              const catalog::Catalog& cat) {
  bool deployment_failed = false;
  return Resolve(card, options, cat, &deployment_failed);
}

Result<CandidateSetup> ResolveCandidate(const card::WorkloadCard& card, const SetupOptions& options,
                                        const catalog::Catalog& cat) {
  bool deployment_failed = false;
  Result<TwinSetup> s = Resolve(card, options, cat, &deployment_failed);
  CandidateSetup c;
  if (s.ok()) {
    c.setup = std::move(s).value();
  } else if (deployment_failed) {
    c.does_not_fit = s.status().message();
  } else {
    return s.status();
  }
  return c;
}

namespace {

Result<TwinSetup> Resolve(const card::WorkloadCard& card, const SetupOptions& options, const catalog::Catalog& cat,
                          bool* deployment_failed) {
  TwinSetup out;
  TwinSettings& st = out.settings;
  st.cluster.replicas = std::max(1, card.deployment.replicas);
  INFERENG_RETURN_IF_ERROR(ApplyEngineMap(st, card.engine, [&card](const std::string& path) {
    return card.source_path.empty() ? std::string("card") : card::FieldLocation(card, path);
  }));
  for (const std::string& a : options.sets) INFERENG_RETURN_IF_ERROR(ApplyTwinAssignment(st, a));
  if (options.replicas) {
    if (*options.replicas < 1) return Status::InvalidArgument("--replicas must be >= 1");
    st.cluster.replicas = *options.replicas;
  }

  fit::Deployment d;
  INFERENG_ASSIGN_OR_RETURN(d.model, ResolveModel(card, cat));
  const std::string accel_name = options.accelerator.value_or(card.deployment.accelerator);
  if (accel_name.empty()) {
    return Status::InvalidArgument(CardField(card, "deployment") +
                                   ": the twin needs deployment.accelerator (e.g. h100-sxm)");
  }
  {
    auto a = cat.FindAccelerator(accel_name);
    if (!a.ok()) {
      return options.accelerator ? a.status() : a.status().WithContext(CardField(card, "deployment.accelerator"));
    }
    d.accel = *a;
  }
  {
    auto w = catalog::ParsePrecision(card.model.precision);
    if (!w.ok()) return w.status().WithContext(CardField(card, "model.precision"));
    d.weights = *w;
    auto k = catalog::ParsePrecision(card.model.kv_precision);
    if (!k.ok()) return k.status().WithContext(CardField(card, "model.kv_precision"));
    d.kv = *k;
  }
  d.count = options.count.value_or(card.deployment.count);
  d.tp = options.tp.value_or(options.count ? *options.count : card.deployment.tp);
  d.ep = options.count ? 1 : card.deployment.ep;
  if (st.cost.eff_flops > 0) d.eff.flops = st.cost.eff_flops;
  if (st.cost.eff_bandwidth > 0) d.eff.bandwidth = st.cost.eff_bandwidth;
  if (st.cost.eff_interconnect > 0) d.eff.interconnect = st.cost.eff_interconnect;
  if (st.cost.step_overhead_s >= 0) d.eff.step_overhead_s = st.cost.step_overhead_s;
  if (st.cost.layer_overhead_s >= 0) d.eff.layer_overhead_s = st.cost.layer_overhead_s;
  if (st.cost.interconnect_latency_s >= 0) d.accel.interconnect_latency_s = st.cost.interconnect_latency_s;
  if (st.cost.collective_launch_s >= 0) d.eff.collective_launch_s = st.cost.collective_launch_s;
  {
    Status v = fit::Validate(d);
    if (!v.ok()) {
      *deployment_failed = true;
      return options.count || options.tp ? v : v.WithContext(CardField(card, "deployment"));
    }
  }

  fit::MemoryOptions mo;
  mo.gpu_memory_utilization = st.engine.gpu_memory_utilization;
  mo.max_batched_tokens = st.engine.max_num_batched_tokens;
  mo.max_num_seqs = st.engine.max_num_seqs;
  mo.block_size = st.engine.block_size;
  const fit::KvCapacity cap = fit::ComputeKvCapacity(d, mo);
  out.kv_tokens_from_fit = cap.tokens;
  out.kv_bytes_per_token = fit::ComputeKv(d).bytes_per_token;
  if (st.engine.kv_cache_tokens == 0) {
    if (cap.tokens < st.engine.block_size) {
      *deployment_failed = true;
      return Status::FailedPrecondition(
          d.model.name + " does not fit on " + std::to_string(d.count) + "x " + d.accel.name +
          " (tp " + std::to_string(d.tp) + "): no memory left for the KV cache (see `infereng fit`)");
    }
    st.engine.kv_cache_tokens = cap.tokens;
  }
  if (st.engine.max_model_len == 0) st.engine.max_model_len = static_cast<int32_t>(d.model.max_context);
  INFERENG_RETURN_IF_ERROR(ValidateEngineConfig(st.engine));
  INFERENG_RETURN_IF_ERROR(ValidateClusterConfig(st.cluster));

  out.price_per_accelerator_hour = card.deployment.price_per_hour_usd.value_or(d.accel.price_per_hour_usd);
  out.accelerators_per_replica = d.count;
  out.description = d.model.name + " on " + std::to_string(d.count) + "x " + d.accel.name + " (tp " +
                    std::to_string(d.tp) + ", " + WeightsLabel(card.model.precision, d.weights) + ")";
  // Which engine ran, unless the default: a prediction must not hide a different scheduler.
  if (st.engine.scheduler != EngineScheduler::kVllm) {
    out.description += ", " + std::string(EngineSchedulerName(st.engine.scheduler)) + " scheduler";
    if (st.engine.scheduler == EngineScheduler::kLlamaCpp) {
      out.description += " (" + std::to_string(st.engine.max_num_seqs) + " slots of " +
                         std::to_string(st.engine.kv_cache_tokens / st.engine.max_num_seqs) + " tokens)";
    }
  }
  out.cost = std::make_shared<RooflineCostModel>(d);
  out.cost_caveats = CostCaveats(d, st.cost);
  out.deployment = std::move(d);
  out.front_end = ResolveFrontEnd(card.product, st.cost, std::nullopt, st.engine.scheduler);
  out.vision = card.model.vision;
  out.audio = card.model.audio;
  if (card.traffic.audio) out.transcript_tokens_per_s = card.traffic.audio->transcript_tokens_per_s;
  return out;
}

}  // namespace
}  // namespace infereng::twin
