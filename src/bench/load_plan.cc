#include "bench/load_plan.h"

namespace infereng::bench {

std::string ArrivalName(const card::ArrivalSpec& a) {
  using K = card::ArrivalSpec::Kind;
  switch (a.kind) {
    case K::kConstant: return "constant";
    case K::kPoisson: return "poisson";
    case K::kGamma: return "gamma";
    case K::kOnOff: return "on_off";
    case K::kDiurnal: return "diurnal";
    case K::kTrace: return "trace";
  }
  return "unknown";
}

Result<LoadPlan> ResolveLoadPlan(const BenchOptions& opt) {
  const card::WorkloadCard& c = opt.card;
  LoadPlan p;
  bool card_has_arrival = false;
  for (const auto& [path, meta] : c.fields) {
    if (path == "traffic.arrival" || path.starts_with("traffic.arrival.")) card_has_arrival = true;
  }
  if (opt.rate_rps) {
    if (!(*opt.rate_rps > 0)) return Status::InvalidArgument("--rate: must be > 0 requests/s");
    p.rate_rps = *opt.rate_rps;
    p.concurrency = opt.concurrency.value_or(0);
  } else if (opt.concurrency) {
    p.closed_loop = true;
    p.concurrency = *opt.concurrency;
  } else if (c.traffic.concurrency && !card_has_arrival) {
    p.closed_loop = true;
    p.concurrency = *c.traffic.concurrency;
  } else {
    p.concurrency = c.traffic.concurrency.value_or(0);
  }
  if (opt.concurrency && *opt.concurrency < 1) return Status::InvalidArgument("--concurrency: must be >= 1");
  if (p.closed_loop && p.concurrency < 1) return Status::InvalidArgument("closed loop: concurrency must be >= 1");
  p.arrival = p.closed_loop ? "closed" : ArrivalName(c.traffic.arrival);
  if (p.closed_loop) p.rate_scale = 0;

  if (opt.requests) {
    if (*opt.requests < 1) return Status::InvalidArgument("--requests: must be >= 1");
    p.requests = *opt.requests;
  } else if (opt.duration) {
    p.duration = *opt.duration;
  } else if (c.bench.requests) {
    p.requests = *c.bench.requests;
  } else {
    p.duration = SecondsToNanos(c.bench.duration_s);
  }
  if (p.requests < 0 && p.duration <= 0) return Status::InvalidArgument("--duration: must be > 0");
  p.warmup = opt.warmup.value_or(SecondsToNanos(c.bench.warmup_s));
  p.cooldown = opt.cooldown.value_or(SecondsToNanos(c.bench.cooldown_s));
  if (p.warmup < 0 || p.cooldown < 0) return Status::InvalidArgument("--warmup/--cooldown: must be >= 0");
  p.ramp = opt.ramp;
  p.trials = opt.trials.value_or(c.bench.trials);
  if (p.trials < 1) return Status::InvalidArgument("--trials: must be >= 1");
  p.seed = opt.seed.value_or(c.bench.seed);
  const std::string ep = opt.endpoint.value_or(c.bench.endpoint);
  if (ep == "chat") {
    p.endpoint = ApiEndpoint::kChat;
  } else if (ep == "completions") {
    p.endpoint = ApiEndpoint::kCompletions;
  } else {
    return Status::InvalidArgument("--endpoint " + ep + ": expected chat or completions");
  }
  if (opt.timeout) {
    p.timeout = *opt.timeout;
  } else if (c.product.timeout_s > 0) {
    p.timeout = SecondsToNanos(c.product.timeout_s);
  }
  if (p.timeout <= 0) return Status::InvalidArgument("--timeout: must be > 0");
  return p;
}

}  // namespace infereng::bench
