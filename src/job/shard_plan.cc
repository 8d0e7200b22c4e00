#include "job/shard_plan.h"

#include "workload/client_load.h"
#include "workload/generator.h"

namespace infereng::job {

Result<std::optional<ShardPlan>> PlanShard(const bench::BenchOptions& opt, bench::LoadPlan* plan) {
  if (!opt.shard) {
    if (opt.start_at_unix_ns) return Status::InvalidArgument("--start-at is for sharded runs: pass --shard K/N too");
    return std::optional<ShardPlan>();
  }
  ShardPlan sp;
  sp.shard = *opt.shard;
  const std::string name = "--shard " + std::to_string(sp.shard.k) + "/" + std::to_string(sp.shard.n);
  if (plan->trials > 1) return Status::InvalidArgument(name + ": a shard runs one trial (--trials 1)");
  if (opt.cold_start_requests > 0) return Status::InvalidArgument(name + ": --cold-start is not sharded; run it apart");
  if (plan->concurrency > 0) {
    const int share = bench::ShardShare(sp.shard, plan->concurrency);
    if (share == 0) {
      return Status::InvalidArgument(name + ": concurrency " + std::to_string(plan->concurrency) +
                                     " leaves this shard no users (use at most " + std::to_string(plan->concurrency) +
                                     " shards)");
    }
    plan->concurrency = share;
  }
  if (plan->requests >= 0 && plan->closed_loop) {
    sp.max_requests = bench::ShardCount(sp.shard, 0, plan->requests);
  } else if (plan->requests >= 0) {
    // The measured requests of one client: R in a row from the first intended at or after
    // the warm-up. Walk the same stream to find the last one's intended send.
    workload::GeneratorOptions go;
    go.seed = plan->seed;
    go.rate_scale = plan->rate_scale;
    INFERENG_ASSIGN_OR_RETURN(workload::Generator gen, workload::Generator::FromCard(opt.card, go));
    int64_t measured = 0;
    while (std::optional<workload::RequestSpec> spec = gen.Next()) {
      const Nanos offset = workload::RampedOffset(spec->t_arrival, plan->ramp);
      if (offset < plan->warmup) continue;
      sp.last_measured_offset = offset;
      if (++measured == plan->requests) break;
    }
    INFERENG_RETURN_IF_ERROR(gen.status());
  }
  return std::optional<ShardPlan>(sp);
}

void ApplyShardPlan(const ShardPlan& sp, const bench::LoadPlan& plan, bench::RunnerOptions* ro, Nanos* planned) {
  if (sp.last_measured_offset) {
    // Requests mode as one client runs it, in time: measured up to the last measured
    // request's intended send, then the cool-down after it.
    ro->max_requests = -1;
    ro->cooldown = 0;
    ro->measure_until = *sp.last_measured_offset + 1;
    ro->stop_after = *sp.last_measured_offset + std::max<Nanos>(plan.cooldown, 1);
    *planned = ro->stop_after;
  } else if (sp.max_requests >= 0) {
    ro->max_requests = sp.max_requests;
  }
}

Result<nlohmann::json> MeasureShardClock(const bench::BenchOptions& opt, bench::ClockExchange exchange) {
  if (opt.clock_ref.empty()) return nlohmann::json();
  if (!opt.shard) return Status::InvalidArgument("--clock-ref is for sharded runs: pass --shard K/N too");
  Result<bench::Target> ref = bench::ParseTarget(opt.clock_ref);
  if (!ref.ok()) return ref.status().WithContext("--clock-ref");
  if (!exchange) exchange = bench::HttpClockExchange(opt.clock_ref, bench::WallNowUnixNs);
  Result<bench::ClockOffset> c = bench::MeasureClockOffset(exchange);
  if (!c.ok()) return Status::Unavailable("--clock-ref " + ref->display + ": " + c.status().message());
  c->reference = ref->display;
  return bench::ClockOffsetToJson(*c);
}

nlohmann::json ShardManifest(const bench::BenchOptions& opt, const bench::LoadPlan& plan) {
  using nlohmann::json;
  const bench::Shard& s = *opt.shard;
  return json{
      {"k", s.k},
      {"n", s.n},
      {"rule", "request index % n == k of the one schedule (same card, seed, rate); users split C/n"},
      {"concurrency_share", plan.concurrency > 0 ? json(plan.concurrency) : json(nullptr)},
      {"start_at_utc", opt.start_at_unix_ns ? json(bench::UnixNsIso8601(*opt.start_at_unix_ns)) : json(nullptr)},
      {"start_at_unix_ns", opt.start_at_unix_ns ? json(*opt.start_at_unix_ns) : json(nullptr)},
      {"warmup_ns", plan.warmup},
      {"clock_uncertainty_ms", opt.clock_uncertainty_ms ? json(*opt.clock_uncertainty_ms) : json(nullptr)},
  };
}

}  // namespace infereng::job
