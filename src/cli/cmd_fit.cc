// `infereng fit`: does a model fit an accelerator setup, how much KV cache is left, and
// what the roofline says about step times. A workload card (--card) supplies the model,
// deployment, context and engine knobs; flags override it.
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "core/numeric.h"
#include "core/units.h"
#include "fit/fit_report.h"

namespace infereng::cli {

namespace {

struct FitFlags {
  std::string model, accelerator, card, precision, kv_precision, price, step_overhead, layer_overhead;
  std::string cuda_context, cuda_graphs, nccl, reserve;
  int count = 0;  // 0: same as --tp
  int tp = 1, ep = 1, batch = 1;
  int64_t context = 8192;
  int max_num_seqs = fit::MemoryOptions{}.max_num_seqs;
  int block_size = fit::MemoryOptions{}.block_size;
  int64_t max_batched_tokens = fit::MemoryOptions{}.max_batched_tokens;
  double util = fit::MemoryOptions{}.gpu_memory_utilization;
  double fragmentation = fit::MemoryOptions{}.fragmentation;
  double eff_flops = fit::Efficiency{}.flops;
  double eff_bw = fit::Efficiency{}.bandwidth;
  double eff_link = fit::Efficiency{}.interconnect;
  bool json = false;
};

Result<double> ParseBytesFlag(const std::string& flag, const std::string& text) {
  auto b = units::ParseBytes(text);
  if (!b.ok()) return b.status().WithContext(flag);
  return static_cast<double>(*b);
}

// Applies the card's model/deployment/context/engine fields where the flag was not given.
Status ApplyCard(const card::WorkloadCard& c, const CLI::App& app, FitFlags* f) {
  auto unset = [&](const char* name) { return app.get_option(name)->count() == 0; };
  // The parser resolved a config.json architecture relative to the card.
  if (unset("--model")) f->model = c.model.architecture.empty() ? c.model.id : c.model.architecture;
  if (unset("--accelerator")) f->accelerator = c.deployment.accelerator;
  if (unset("--count") && c.Has("deployment.count")) f->count = c.deployment.count;
  if (unset("--tp")) f->tp = c.deployment.tp;
  if (unset("--ep")) f->ep = c.deployment.ep;
  if (unset("--precision") && c.Has("model.precision")) f->precision = c.model.precision;
  if (unset("--kv-precision") && c.Has("model.kv_precision")) f->kv_precision = c.model.kv_precision;
  if (unset("--price-per-hour") && c.deployment.price_per_hour_usd) {
    f->price = std::to_string(*c.deployment.price_per_hour_usd);
  }
  if (unset("--context") && c.product.max_context_tokens > 0) f->context = c.product.max_context_tokens;
  if (unset("--batch") && c.traffic.concurrency) f->batch = *c.traffic.concurrency;
  auto engine_int = [&](const char* key, const char* flag, auto* out) -> Status {
    auto it = c.engine.find(key);
    if (it == c.engine.end() || !unset(flag)) return Status::Ok();
    using T = std::remove_reference_t<decltype(*out)>;
    auto v = units::ParseNumber(it->second);
    const auto n = infereng::InRange(v.ok() ? DoubleToInt64(*v) : std::nullopt, 1, std::numeric_limits<T>::max());
    if (!n) {
      return Status::InvalidArgument(c.source_path + ": engine." + key + ": expected a positive integer up to " +
                                     std::to_string(std::numeric_limits<T>::max()) + ", got \"" + it->second + "\"");
    }
    *out = static_cast<T>(*n);
    return Status::Ok();
  };
  INFERENG_RETURN_IF_ERROR(engine_int("max_num_seqs", "--max-num-seqs", &f->max_num_seqs));
  INFERENG_RETURN_IF_ERROR(engine_int("max_num_batched_tokens", "--max-batched-tokens", &f->max_batched_tokens));
  INFERENG_RETURN_IF_ERROR(engine_int("block_size", "--block-size", &f->block_size));
  if (auto it = c.engine.find("gpu_memory_utilization"); it != c.engine.end() && unset("--gpu-memory-utilization")) {
    auto v = units::ParseNumber(it->second);
    if (!v.ok()) {
      return Status::InvalidArgument(c.source_path + ": engine.gpu_memory_utilization: expected a number in (0, 1], got \"" +
                                     it->second + "\"");
    }
    f->util = *v;
  }
  return Status::Ok();
}

Result<fit::FitRequest> BuildRequest(const FitFlags& f, const CLI::App& app) {
  if (f.model.empty()) return Status::InvalidArgument("--model is required (a catalog name or a config.json path)");
  if (f.accelerator.empty()) return Status::InvalidArgument("--accelerator is required (see `infereng accelerators`)");
  const Result<catalog::Catalog>& loaded = catalog::Catalog::Default();
  if (!loaded.ok()) return loaded.status();
  const catalog::Catalog& cat = *loaded;
  fit::FitRequest req;
  fit::Deployment& d = req.deployment;
  INFERENG_ASSIGN_OR_RETURN(d.model, cat.ResolveModel(f.model));
  INFERENG_ASSIGN_OR_RETURN(d.accel, cat.FindAccelerator(f.accelerator));
  auto prec = catalog::ParsePrecision(f.precision.empty() ? d.model.default_precision : f.precision);
  if (!prec.ok()) return prec.status().WithContext("--precision");
  d.weights = *prec;
  auto kv = catalog::ParsePrecision(f.kv_precision.empty() ? "bf16" : f.kv_precision);
  if (!kv.ok()) return kv.status().WithContext("--kv-precision");
  if (*kv != catalog::Precision::kBf16 && *kv != catalog::Precision::kFp8) {
    return Status::InvalidArgument("--kv-precision: expected bf16 or fp8, got \"" + f.kv_precision + "\"");
  }
  d.kv = *kv;
  d.tp = f.tp;
  d.count = f.count > 0 ? f.count : f.tp;  // --count defaults to --tp
  d.ep = f.ep;
  d.eff.flops = f.eff_flops;
  d.eff.bandwidth = f.eff_bw;
  d.eff.interconnect = f.eff_link;
  if (!f.step_overhead.empty()) {
    auto s = units::ParseDurationSeconds(f.step_overhead, "ms");
    if (!s.ok()) return s.status().WithContext("--step-overhead");
    d.eff.step_overhead_s = *s;
  }
  if (!f.layer_overhead.empty()) {
    auto s = units::ParseDurationSeconds(f.layer_overhead, "us");
    if (!s.ok()) return s.status().WithContext("--layer-overhead");
    d.eff.layer_overhead_s = *s;
  }
  if (!f.price.empty()) {
    auto plain = units::ParseNumber(f.price);
    if (plain.ok()) {
      d.accel.price_per_hour_usd = *plain;
    } else {
      auto m = units::ParseMoney(f.price);
      if (!m.ok() || m->per != units::Money::Per::kHour) {
        return Status::InvalidArgument("--price-per-hour: expected a price like 2.99 or $2.99/h, got \"" + f.price + "\"");
      }
      d.accel.price_per_hour_usd = m->usd;
    }
    d.accel.sources["price_per_hour"] = "user setting";
  }
  fit::MemoryOptions& o = req.memory;
  o.gpu_memory_utilization = f.util;
  o.max_batched_tokens = f.max_batched_tokens;
  o.max_num_seqs = f.max_num_seqs;
  o.block_size = f.block_size;
  o.fragmentation = f.fragmentation;
  if (!f.cuda_context.empty()) { INFERENG_ASSIGN_OR_RETURN(o.cuda_context_bytes, ParseBytesFlag("--cuda-context", f.cuda_context)); }
  if (!f.cuda_graphs.empty()) { INFERENG_ASSIGN_OR_RETURN(o.cuda_graph_bytes, ParseBytesFlag("--cuda-graphs", f.cuda_graphs)); }
  if (!f.nccl.empty()) { INFERENG_ASSIGN_OR_RETURN(o.nccl_bytes, ParseBytesFlag("--nccl", f.nccl)); }
  if (!f.reserve.empty()) { INFERENG_ASSIGN_OR_RETURN(o.framework_reserve_bytes, ParseBytesFlag("--reserve", f.reserve)); }
  req.context = f.context;
  req.batch = f.batch;
  return req;
}

}  // namespace

int RunFit(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app(
      "Does a model fit an accelerator setup? Memory plan (weights, KV cache, every overhead as its own line "
      "item) and roofline step times.\nExit codes: 0 fits or marginal, 1 does not fit (or holds fewer than --batch\n"
      "sequences of --context tokens), 2 bad input.",
      argv[0]);
  FitFlags f;
  app.add_option("--model", f.model, "catalog name (see `infereng models`), HF id, or path to a HF config.json");
  app.add_option("--accelerator", f.accelerator, "catalog name (see `infereng accelerators`)");
  app.add_option("--card", f.card, "workload card: supplies model, deployment, context, engine knobs");
  app.add_option("--count", f.count, "accelerators per replica (0: the same as --tp)")->check(AtLeast(0));
  app.add_option("--tp", f.tp, "tensor-parallel degree")->check(AtLeast(1));
  app.add_option("--ep", f.ep, "expert-parallel degree (MoE)")->check(AtLeast(1));
  app.add_option("--precision", f.precision, "weights: bf16|fp8|int8|int4|fp4 (default: the checkpoint's)");
  app.add_option("--kv-precision", f.kv_precision, "KV cache: bf16|fp8 (default bf16)");
  app.add_option("--context", f.context, "tokens per sequence, prompt + output")->check(AtLeast(1));
  app.add_option("--batch", f.batch, "concurrent sequences wanted (fewer fit: does not fit, exit 1)")
      ->check(AtLeast(1));
  app.add_flag("--json", f.json, "print JSON instead of the table");
  app.add_option("--gpu-memory-utilization", f.util, "engine memory cap as a fraction (vLLM default 0.9)");
  app.add_option("--max-batched-tokens", f.max_batched_tokens, "engine max tokens per step; sets the activation peak");
  app.add_option("--max-num-seqs", f.max_num_seqs, "engine max concurrent sequences (default 256)");
  app.add_option("--block-size", f.block_size, "KV block size in tokens (default 16)");
  app.add_option("--cuda-context", f.cuda_context, "CUDA context size, e.g. 600MiB (default 0.5GiB)");
  app.add_option("--cuda-graphs", f.cuda_graphs, "CUDA graph memory, e.g. 1GiB or 0 (default 0.5GiB)");
  app.add_option("--nccl", f.nccl, "NCCL buffers (default 0.35GB with more than one GPU)");
  app.add_option("--reserve", f.reserve, "extra framework reserve, e.g. 3.5GiB (default 0)");
  app.add_option("--fragmentation", f.fragmentation, "allocator slack as a fraction of weights + activations (0.02)");
  app.add_option("--eff-flops", f.eff_flops, "achieved fraction of peak FLOPs (default 0.5)");
  app.add_option("--eff-bandwidth", f.eff_bw, "achieved fraction of peak memory bandwidth (default 0.8)");
  app.add_option("--eff-interconnect", f.eff_link, "achieved fraction of link bandwidth (default 0.8)");
  app.add_option("--step-overhead", f.step_overhead, "fixed CPU/scheduler time per engine step (default 1ms)");
  app.add_option("--layer-overhead", f.layer_overhead, "fixed time per layer per step, e.g. 5us (default 0)");
  app.add_option("--price-per-hour", f.price, "price per accelerator-hour, e.g. 2.49 or $2.49/h");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  if (!f.card.empty()) {
    auto c = LoadCard(f.card, io);
    if (!c.ok()) return ReportError(io, "fit", c.status());
    if (Status st = ApplyCard(*c, app, &f); !st.ok()) return ReportError(io, "fit", st);
  }
  auto req = BuildRequest(f, app);
  if (!req.ok()) return ReportError(io, "fit", req.status());
  auto report = fit::EvaluateFit(*req);
  if (!report.ok()) return ReportError(io, "fit", report.status());
  if (f.json) {
    io.out << fit::FitReportJson(*report).dump(2) << "\n";
  } else {
    io.out << fit::FitReportTable(*report);
  }
  return report->plan.verdict == fit::Verdict::kDoesNotFit ? kExitCheckFailed : kExitOk;
}

}  // namespace infereng::cli
