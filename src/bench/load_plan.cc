#include "bench/load_plan.h"

#include <random>
#include <string>

#include "bench/load_runner.h"

namespace infereng::bench {

bool EndpointFitsCard(ApiEndpoint e, const card::ProductSpec& product) {
  if (product.Transcription()) return e == ApiEndpoint::kTranscriptions;
  const std::string want = product.ItemsEndpoint();  // "" for a text card
  return want.empty() ? !PrefillOnly(e) && e != ApiEndpoint::kTranscriptions : want == ApiEndpointName(e);
}

Result<LoadPlan> ResolveLoadPlan(const BenchOptions& opt) {
  const card::WorkloadCard& c = opt.card;
  LoadPlan p;
  // Closed loop / open loop / cap: the one rule the twin applies too (workload/client_load.h).
  INFERENG_ASSIGN_OR_RETURN(workload::ClientLoad load,
                            workload::ResolveClientLoad(c, {.rate_rps = opt.rate_rps, .concurrency = opt.concurrency, .ramp = opt.ramp}));
  if (load.concurrency > kMaxInFlight && load.closed_loop) {
    return Status::InvalidArgument("concurrency " + std::to_string(load.concurrency) + ": bench keeps at most " +
                                   std::to_string(kMaxInFlight) + " requests in flight (a connection each)");
  }
  p.closed_loop = load.closed_loop;
  p.concurrency = load.concurrency;
  p.rate_rps = load.rate_rps.value_or(0);
  p.rate_scale = p.closed_loop ? 0 : load.rate_scale;
  p.mean_rate_rps = load.mean_rate_rps;
  p.ramp = load.ramp;
  p.arrival = p.closed_loop ? "closed" : ArrivalName(c.traffic.arrival);

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
  p.trials = opt.trials.value_or(c.bench.trials);
  if (p.trials < 1) return Status::InvalidArgument("--trials: must be >= 1");
  p.seed = opt.seed.value_or(c.bench.seed);
  p.prompt_salt = opt.prompt_salt ? *opt.prompt_salt : (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  const std::string ep = opt.endpoint.value_or(c.bench.endpoint);
  INFERENG_ASSIGN_OR_RETURN(p.endpoint, ParseApiEndpoint(ep, "--endpoint"));
  // The card's traffic is batches of inputs, a query and documents, or generation
  // requests: the endpoint must match.
  if (!EndpointFitsCard(p.endpoint, c.product)) {
    const std::string want = c.product.Transcription() ? "transcriptions" : c.product.ItemsEndpoint();  // "" for a text card
    const std::string needs = ep == "rerank" ? "a rerank" : ep == "transcriptions" ? "a transcription" : "an embeddings";
    return Status::InvalidArgument("--endpoint " + ep + ": the card's product.modality is " + c.product.modality +
                                   (want.empty() ? " (" + ep + " needs " + needs + " card)" : " (use --endpoint " + want + ")"));
  }
  p.stream = c.product.streaming && !PrefillOnly(p.endpoint);
  if (opt.response_format != "json") {
    const std::string flag = "--response-format " + opt.response_format;
    if (opt.response_format != "verbose_json") return Status::InvalidArgument(flag + ": expected json or verbose_json");
    if (p.endpoint != ApiEndpoint::kTranscriptions) {
      return Status::InvalidArgument(flag + ": only for transcriptions (this run's endpoint is " +
                                     ApiEndpointName(p.endpoint) + ")");
    }
    if (p.stream) {
      return Status::InvalidArgument(flag + ": a streamed transcription is answered in json events; "
                                            "verbose_json needs product.streaming: false in the card");
    }
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
