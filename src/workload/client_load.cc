#include "workload/client_load.h"
#include "card/limits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "workload/generator.h"

#include "core/units.h"

namespace infereng::workload {

LoadMode ClientLoad::mode() const {
  if (closed_loop) return LoadMode::kClosedLoop;
  return concurrency > 0 ? LoadMode::kOpenLoopCapped : LoadMode::kOpenLoop;
}

const char* ClientLoad::ModeName() const {
  switch (mode()) {
    case LoadMode::kClosedLoop: return "closed_loop";
    case LoadMode::kOpenLoopCapped: return "open_loop_capped";
    case LoadMode::kOpenLoop: return "open_loop";
  }
  return "open_loop";
}

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

bool CardHasArrival(const card::WorkloadCard& card) {
  for (const auto& [path, meta] : card.fields) {
    if (path == "traffic.arrival" || path.starts_with("traffic.arrival.")) return true;
  }
  return false;
}

Result<ClientLoad> ResolveClientLoad(const card::WorkloadCard& card, const LoadOverrides& o) {
  ClientLoad l;
  // The card's limits (card.h): a flag cannot ask for what a card may not.
  if (o.rate_rps && !(*o.rate_rps <= card::kMaxRateRps)) {
    return Status::InvalidArgument("--rate: must be <= 1e6 requests/s (the card's limit), got " +
                                   units::FormatNumber(*o.rate_rps));
  }
  if (o.concurrency && *o.concurrency > card::kMaxConcurrency) {
    return Status::InvalidArgument("--concurrency: must be <= 1000000 (the card's limit), got " +
                                   std::to_string(*o.concurrency));
  }
  if (o.rate_rps) {
    if (!(*o.rate_rps > 0)) return Status::InvalidArgument("--rate: must be > 0 requests/s");
    l.rate_rps = *o.rate_rps;
    l.concurrency = o.concurrency.value_or(0);
  } else if (o.concurrency) {
    l.closed_loop = true;
    l.concurrency = *o.concurrency;
  } else if (card.traffic.concurrency && !CardHasArrival(card)) {
    l.closed_loop = true;
    l.concurrency = *card.traffic.concurrency;
  } else {
    l.concurrency = card.traffic.concurrency.value_or(0);
  }
  if (o.concurrency && *o.concurrency < 1) return Status::InvalidArgument("--concurrency: must be >= 1");
  if (l.closed_loop && l.concurrency < 1) return Status::InvalidArgument("closed loop: concurrency must be >= 1");
  if (!(o.ramp >= 0)) return Status::InvalidArgument("--ramp: must be >= 0");
  l.ramp = o.ramp;
  if (!(o.rate_scale > 0) || !std::isfinite(o.rate_scale)) return Status::InvalidArgument("--rate-scale: must be > 0");
  if (l.closed_loop) {
    if (o.rate_scale != 1.0) {
      return Status::InvalidArgument("--rate-scale: a closed loop (concurrency " + std::to_string(l.concurrency) +
                                     ") has no arrival rate to scale; pass a rate for open loop");
    }
    return l;
  }
  // The card's mean rate (times --rate-scale) turns a requested rate into a factor on its
  // arrival process; a requested rate is absolute, so the extra multiplier cancels out.
  // The mean rate does not depend on the seed.
  GeneratorOptions go;
  go.seed = card.bench.seed;
  go.rate_scale = o.rate_scale;
  INFERENG_ASSIGN_OR_RETURN(Generator card_rate, Generator::FromCard(card, go));
  const double base = card_rate.MeanRate();
  l.rate_scale = o.rate_scale;
  l.mean_rate_rps = base;
  if (l.rate_rps) {
    if (!(base > 0)) return Status::InvalidArgument("--rate: the card's arrival process has no mean rate to scale");
    l.rate_scale = *l.rate_rps / base * o.rate_scale;
    l.mean_rate_rps = base / o.rate_scale * l.rate_scale;
  }
  return l;
}

Nanos RampedOffset(Nanos arrival_offset, Nanos ramp) {
  if (ramp <= 0 || arrival_offset <= 0) return std::max<Nanos>(arrival_offset, 0);
  const double a = static_cast<double>(arrival_offset);
  const double r = static_cast<double>(ramp);
  if (a < r / 2) return static_cast<Nanos>(std::sqrt(2 * r * a));
  return arrival_offset + ramp / 2;
}

int RampedConcurrency(int target, Nanos elapsed, Nanos ramp) {
  if (ramp <= 0 || elapsed >= ramp) return target;
  if (elapsed <= 0) return 1;
  const double frac = static_cast<double>(elapsed) / static_cast<double>(ramp);
  return std::clamp(static_cast<int>(std::ceil(frac * target)), 1, target);
}

Nanos RampedConcurrencyRisesAt(int target, int limit, Nanos ramp) {
  if (limit >= target) return std::numeric_limits<Nanos>::max();
  if (ramp <= 0) return 0;
  // ceil(e/R * C) > L  <=>  e > L*R/C; start just below and step to the exact nanosecond
  // RampedConcurrency (floating point) agrees on.
  Nanos t = std::max<Nanos>(1, static_cast<Nanos>(static_cast<double>(limit) * static_cast<double>(ramp) / target) - 2);
  while (t > 1 && RampedConcurrency(target, t - 1, ramp) > limit) --t;
  while (RampedConcurrency(target, t, ramp) <= limit) ++t;
  return t;
}

}  // namespace infereng::workload
