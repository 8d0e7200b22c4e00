#include "fit/fit_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace infereng::fit {

namespace {

std::string Gb(double bytes) { return fmt::format("{:.2f}", bytes / 1e9); }
std::string Ms(double s) { return fmt::format("{:.3f}", s * 1e3); }

std::string WithCommas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return (v < 0 ? "-" : "") + s;
}

nlohmann::json StepJson(const StepCost& c) {
  return {{"total_ms", c.total_s * 1e3}, {"compute_ms", c.compute_s * 1e3}, {"memory_ms", c.memory_s * 1e3},
          {"comm_ms", c.comm_s * 1e3},   {"fixed_ms", c.fixed_s * 1e3},     {"flops", c.flops},
          {"bytes_per_gpu", c.bytes},    {"bound", c.memory_bound() ? "memory" : "compute"}};
}

std::string Bound(const StepCost& c) { return c.memory_bound() ? "memory-bound" : "compute-bound"; }

}  // namespace

Result<FitReport> EvaluateFit(const FitRequest& request) {
  INFERENG_RETURN_IF_ERROR(Validate(request.deployment));
  const MemoryOptions& o = request.memory;
  if (!(o.gpu_memory_utilization > 0 && o.gpu_memory_utilization <= 1)) {
    return Status::InvalidArgument("--gpu-memory-utilization must be in (0, 1], got " +
                                   fmt::format("{}", o.gpu_memory_utilization));
  }
  if (o.block_size < 1 || o.max_batched_tokens < 1 || o.max_num_seqs < 1) {
    return Status::InvalidArgument("--block-size, --max-batched-tokens and --max-num-seqs must be positive");
  }
  if (!(o.fragmentation >= 0 && o.fragmentation < 1)) {
    return Status::InvalidArgument("--fragmentation must be in [0, 1)");
  }
  if (request.context < 1 || request.context > 1'000'000'000) {
    return Status::InvalidArgument("--context must be between 1 and 1e9 tokens, got " + std::to_string(request.context));
  }
  if (request.batch < 1 || request.batch > 1'000'000) {
    return Status::InvalidArgument("--batch must be between 1 and 1e6, got " + std::to_string(request.batch));
  }
  if (o.max_batched_tokens > 100'000'000 || o.block_size > 1'000'000) {
    return Status::InvalidArgument("--max-batched-tokens or --block-size is implausibly large");
  }

  FitReport r;
  r.request = request;
  const Deployment& d = request.deployment;
  r.plan = PlanMemory(d, o, request.context, request.batch);
  const RooflineStepCost cost(d);
  const int64_t max_batch = std::max<int64_t>(1, std::min<int64_t>(r.plan.max_concurrent_sequences, o.max_num_seqs));
  r.roofline = Summarise(cost, request.batch, request.context, max_batch);
  r.price_per_hour_usd = d.accel.price_per_hour_usd * d.count;
  // Priced whenever one sequence fits: a --batch larger than the pool does not change the peak.
  if (r.roofline.peak_output_tokens_per_s > 0 && r.plan.max_concurrent_sequences >= 1) {
    r.usd_per_million_output_tokens = r.price_per_hour_usd / (r.roofline.peak_output_tokens_per_s * 3600) * 1e6;
  }
  return r;
}

nlohmann::json FitReportJson(const FitReport& r) {
  const Deployment& d = r.request.deployment;
  const MemoryPlan& p = r.plan;
  nlohmann::json items = nlohmann::json::array();
  for (const auto& it : p.items) {
    items.push_back({{"key", it.key}, {"label", it.label}, {"bytes", it.bytes}, {"basis", it.basis}, {"source", it.source}});
  }
  nlohmann::json accel_sources = nlohmann::json::object();
  for (const auto& [k, v] : d.accel.sources) accel_sources[k] = v;
  const catalog::ParamCounts params = catalog::CountParams(d.model);
  return {
      {"model", d.model.name},
      {"model_source", d.model.source},
      {"accelerator", d.accel.name},
      {"deployment",
       {{"count", d.count}, {"tp", d.tp}, {"pp", d.pp()}, {"ep", d.ep},
        {"precision", catalog::PrecisionName(d.weights)}, {"kv_precision", catalog::PrecisionName(d.kv)}}},
      {"context", r.request.context},
      {"batch", r.request.batch},
      {"params_total", params.total},
      {"params_active", params.active},
      {"weights_bytes", p.weights.total},
      {"weights_bytes_per_gpu", p.weights.per_gpu},
      {"kv_bytes_per_token", p.kv.bytes_per_token},
      {"kv_bytes_per_token_per_gpu", p.kv.bytes_per_token_per_gpu},
      {"kv_heads_per_rank", p.kv.heads_per_rank},
      {"kv_replicated", p.kv.replicated},
      {"device_bytes", p.device_bytes},
      {"gpu_memory_utilization", r.request.memory.gpu_memory_utilization},
      {"budget_bytes", p.budget_bytes},
      {"memory_items", items},
      {"used_bytes", p.used_bytes},
      {"kv_pool_bytes", p.kv_pool_bytes},
      {"kv_capacity_tokens", p.capacity.tokens},
      {"kv_capacity_blocks", p.capacity.blocks},
      {"block_size", p.capacity.block_size},
      {"blocks_per_sequence", p.blocks_per_seq},
      {"max_concurrent_sequences", p.max_concurrent_sequences},
      {"headroom_bytes", p.headroom_bytes},
      {"fits", p.verdict != Verdict::kDoesNotFit},
      {"verdict", VerdictName(p.verdict)},
      {"reason", p.reason},
      {"decode_step_ms", r.roofline.decode.total_s * 1e3},
      {"decode_step_batch1_ms", r.roofline.decode_batch1.total_s * 1e3},
      {"prefill_ms", r.roofline.prefill.total_s * 1e3},
      {"roofline",
       {{"decode", StepJson(r.roofline.decode)},
        {"decode_batch1", StepJson(r.roofline.decode_batch1)},
        {"prefill", StepJson(r.roofline.prefill)},
        {"ridge_flop_per_byte", r.roofline.ridge_flop_per_byte},
        {"compute_bound_batch", r.roofline.compute_bound_batch},
        {"output_tokens_per_s", r.roofline.output_tokens_per_s},
        {"peak_output_tokens_per_s", r.roofline.peak_output_tokens_per_s},
        {"peak_batch", r.roofline.peak_batch},
        {"efficiency",
         {{"flops", d.eff.flops}, {"bandwidth", d.eff.bandwidth}, {"interconnect", d.eff.interconnect},
          {"step_overhead_ms", d.eff.step_overhead_s * 1e3},
          {"layer_overhead_us", d.eff.layer_overhead_s * 1e6}}}}},
      {"price_per_hour_usd", r.price_per_hour_usd},
      {"usd_per_million_output_tokens", r.usd_per_million_output_tokens},
      {"accelerator_sources", accel_sources},
  };
}

std::string FitReportTable(const FitReport& r) {
  const Deployment& d = r.request.deployment;
  const MemoryPlan& p = r.plan;
  const MemoryOptions& o = r.request.memory;
  std::string s;
  auto line = [&](std::string_view label, const std::string& value, const std::string& note) {
    s += fmt::format("  {:<30} {:>10}  {}\n", label, value, note);
  };
  s += fmt::format("{} on {} x {} (TP{}{}{}), weights {}, KV {}, context {} tokens, batch {}\n\n",
                   d.model.display_name, d.count, d.accel.display_name, d.tp,
                   d.pp() > 1 ? fmt::format(", PP{}", d.pp()) : "", d.ep > 1 ? fmt::format(", EP{}", d.ep) : "",
                   catalog::PrecisionName(d.weights), catalog::PrecisionName(d.kv), WithCommas(r.request.context),
                   r.request.batch);

  s += fmt::format("Memory per GPU (GB = 1e9 B)\n");
  line("Device memory", Gb(p.device_bytes), d.accel.sources.count("memory") ? d.accel.sources.at("memory") : "");
  line(fmt::format("Usable (x{:.2f} cap)", o.gpu_memory_utilization), Gb(p.budget_bytes),
       "engine memory-utilisation cap (vLLM --gpu-memory-utilization, default 0.9)");
  for (const auto& it : p.items) line("- " + it.label, Gb(it.bytes), it.basis);
  line("= KV cache pool", Gb(p.kv_pool_bytes),
       fmt::format("{} tokens = {} blocks of {}", WithCommas(p.capacity.tokens), WithCommas(p.capacity.blocks),
                   p.capacity.block_size));
  std::string kv_note = d.model.IsMla()
                            ? fmt::format("MLA latent {} + RoPE {} per layer, replicated on every TP rank",
                                          d.model.kv_lora_rank, d.model.qk_rope_head_dim)
                            : fmt::format("{} of {} KV heads per rank{}", p.kv.heads_per_rank, d.model.kv_heads,
                                          p.kv.replicated ? " (replicated: TP > KV heads)" : "");
  line("KV bytes per token", WithCommas(static_cast<int64_t>(p.kv.bytes_per_token)),
       fmt::format("{} B per GPU; {}", WithCommas(static_cast<int64_t>(p.kv.bytes_per_token_per_gpu)), kv_note));
  line(fmt::format("Sequences at {} tokens", WithCommas(r.request.context)), WithCommas(p.max_concurrent_sequences),
       fmt::format("{} blocks each; engine cap max_num_seqs {}", WithCommas(p.blocks_per_seq), o.max_num_seqs));
  line(fmt::format("Headroom for batch {}", r.request.batch), Gb(p.headroom_bytes), "KV pool minus the batch's KV");

  std::string verdict(VerdictName(p.verdict));
  std::transform(verdict.begin(), verdict.end(), verdict.begin(), [](unsigned char c) { return std::toupper(c); });
  s += fmt::format("\nVerdict: {} - {}\n\n", verdict, p.reason);

  const RooflineSummary& f = r.roofline;
  s += fmt::format(
      "Roofline (efficiency: FLOPs {:.2f}, bandwidth {:.2f}, interconnect {:.2f}; overhead {} ms per step + {:.1f} us "
      "per layer)\n",
      d.eff.flops, d.eff.bandwidth, d.eff.interconnect, Ms(d.eff.step_overhead_s), d.eff.layer_overhead_s * 1e6);
  auto step = [&](std::string_view label, const StepCost& c) {
    line(label, Ms(c.total_s) + " ms",
         fmt::format("{}: compute {} + memory {} -> max, comm {}, fixed {} ms", Bound(c), Ms(c.compute_s),
                     Ms(c.memory_s), Ms(c.comm_s), Ms(c.fixed_s)));
  };
  step("Decode step, batch 1", f.decode_batch1);
  if (r.request.batch > 1) step(fmt::format("Decode step, batch {}", r.request.batch), f.decode);
  step(fmt::format("Prefill {} tokens", WithCommas(r.request.context)), f.prefill);
  line("Ridge point", fmt::format("{:.0f}", f.ridge_flop_per_byte),
       fmt::format("FLOP/byte (datasheet {} / bandwidth)", catalog::PrecisionName(d.weights)));
  line("Decode turns compute-bound at", f.compute_bound_batch > 0 ? WithCommas(f.compute_bound_batch) : "never",
       f.compute_bound_batch > 0 ? "sequences (at this context)" : "KV reads keep decode memory-bound at this context");
  line("Peak output", fmt::format("{:.0f}", f.peak_output_tokens_per_s),
       fmt::format("tokens/s at batch {} (bounded by KV capacity and max_num_seqs)", f.peak_batch));
  if (r.price_per_hour_usd > 0) {
    line("Price", fmt::format("${:.2f}/h", r.price_per_hour_usd),
         r.usd_per_million_output_tokens > 0 ? fmt::format("${:.3f} per 1M output tokens at peak",
                                                           r.usd_per_million_output_tokens)
                                             : "");
  }
  s += "\nSources\n";
  s += fmt::format("  model: {}\n", d.model.source);
  for (const auto& [k, v] : d.accel.sources) s += fmt::format("  {}.{}: {}\n", d.accel.name, k, v);
  for (const auto& it : p.items) s += fmt::format("  {}: {}\n", it.key, it.source);
  return s;
}

}  // namespace infereng::fit
