// Generator: arrivals x lengths x prefixes -> RequestSpec stream (see generator.h).
#include "workload/generator.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/numeric.h"
#include "workload/arrivals.h"
#include "workload/lengths.h"
#include "workload/trace.h"

namespace infereng::workload {
namespace {

// Stream ids for StreamSeed: fixed forever so schedules stay reproducible across versions.
enum Stream : uint64_t { kArrivals = 1, kInput = 2, kOutput = 3, kPrefix = 4, kRequest = 5 };

Status CheckLengths(const card::Distribution& d, const char* path) {
  if (d.kind == card::Distribution::Kind::kFixed && d.value < 1) {
    return Status::InvalidArgument(std::string(path) + ": not set; the card needs a length distribution, e.g. {fixed: 512}");
  }
  return Status::Ok();
}

}  // namespace

struct Generator::Impl {
  Impl(const card::WorkloadCard& card, const GeneratorOptions& o)
      : opts(o),
        traffic(card.traffic),
        input(traffic.input_tokens, card.product.max_input_tokens),
        output(traffic.output_tokens, card.product.max_output_tokens),
        input_rng(StreamSeed(o.seed, kInput)),
        output_rng(StreamSeed(o.seed, kOutput)),
        prefix_rng(StreamSeed(o.seed, kPrefix)),
        offline(card.traffic.cls == card::TrafficSpec::Class::kOffline) {}

  GeneratorOptions opts;
  card::TrafficSpec traffic;  // owns the distributions the samplers point into
  LengthSampler input, output;
  Rng input_rng, output_rng, prefix_rng;
  bool offline;
  std::unique_ptr<ArrivalProcess> arrivals;  // synthetic open loop
  std::optional<TraceReader> trace;          // trace replay
  double trace_origin_s = 0, trace_speed = 1;
  double mean_rate = 0;
  uint64_t next_index = 0;
  bool done = false;
  Status status;

  std::optional<RequestSpec> Next();
};

std::optional<RequestSpec> Generator::Impl::Next() {
  if (done) return std::nullopt;
  if (opts.max_requests && next_index >= *opts.max_requests) {
    done = true;
    return std::nullopt;
  }
  RequestSpec r;
  r.index = next_index;
  r.offline = offline;
  r.seed = StreamSeed(opts.seed, kRequest + (next_index << 8));
  if (trace) {
    auto e = trace->Next();
    if (!e.ok() || !e->has_value()) {
      if (!e.ok()) status = e.status();
      done = true;
      return std::nullopt;
    }
    const TraceEntry& entry = **e;
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos((entry.t_s - trace_origin_s) / trace_speed);
    r.input_tokens = input.Clamp(static_cast<double>(entry.input_tokens));
    r.output_tokens = output.Clamp(static_cast<double>(entry.output_tokens));
  } else {
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos(arrivals->Next());
    r.input_tokens = input.Sample(input_rng);
    r.output_tokens = output.Sample(output_rng);
  }
  if (opts.horizon && r.t_arrival >= *opts.horizon && !opts.closed_loop) {
    done = true;
    return std::nullopt;
  }
  // Tenant and shared prefix: always two draws per request, so the prefix stream stays
  // aligned with the request index whatever the share.
  const card::PrefixSpec& p = traffic.prefix;
  r.tenant = static_cast<int32_t>(prefix_rng.Below(static_cast<uint64_t>(p.tenants)));
  const double u = prefix_rng.Uniform();
  const auto k = static_cast<int32_t>(prefix_rng.Below(static_cast<uint64_t>(p.distinct)));
  if (u < p.share && p.tokens > 0) {
    r.prefix_id = r.tenant * p.distinct + k;  // disjoint ranges per tenant: no cross-tenant sharing
    r.prefix_tokens = static_cast<int32_t>(p.tokens);
    r.input_tokens = std::max(r.input_tokens, r.prefix_tokens + 1);
  }
  ++next_index;
  return r;
}

Result<Generator> Generator::FromCard(const card::WorkloadCard& card, uint64_t seed) {
  return FromCard(card, GeneratorOptions{.seed = seed});
}

Result<Generator> Generator::FromCard(const card::WorkloadCard& card, const GeneratorOptions& options) {
  if (!(options.rate_scale > 0) || !std::isfinite(options.rate_scale)) {
    return Status::InvalidArgument("rate scale must be > 0");
  }
  const card::TrafficSpec& t = card.traffic;
  const card::PrefixSpec& p = t.prefix;
  if (p.tenants < 1 || p.distinct < 1 || static_cast<int64_t>(p.tenants) * p.distinct > INT32_MAX) {
    return Status::InvalidArgument("traffic.prefix: tenants x distinct must be between 1 and 2^31");
  }
  if (p.tokens < 0 || p.tokens > INT32_MAX - 1) return Status::InvalidArgument("traffic.prefix.tokens out of range");
  const bool is_trace = t.arrival.kind == card::ArrivalSpec::Kind::kTrace;
  if (!is_trace) {
    INFERENG_RETURN_IF_ERROR(CheckLengths(t.input_tokens, "traffic.input_tokens"));
    INFERENG_RETURN_IF_ERROR(CheckLengths(t.output_tokens, "traffic.output_tokens"));
  }
  auto impl = std::make_unique<Impl>(card, options);
  if (is_trace) {
    const double speed = t.arrival.trace_speed * options.rate_scale;
    if (!(speed > 0)) return Status::InvalidArgument("traffic.arrival.speed must be > 0");
    INFERENG_ASSIGN_OR_RETURN(TraceStats stats, ScanTrace(t.arrival.trace_file));
    INFERENG_ASSIGN_OR_RETURN(TraceReader reader, TraceReader::Open(t.arrival.trace_file));
    impl->trace.emplace(std::move(reader));
    impl->trace_origin_s = stats.first_t_s;
    impl->trace_speed = speed;
    const double span = (stats.last_t_s - stats.first_t_s) / speed;
    // Every arrival offset is at most the span; checking it here keeps the nanosecond
    // conversion in Next() in range (a double beyond int64 would be an undefined cast).
    if (!DoubleToInt64(std::trunc(span * 1e9))) {
      return Status::InvalidArgument(fmt::format("{}: the trace spans {:g} s at speed {:g}: over ~292 years of nanoseconds",
                                                 t.arrival.trace_file, span, speed));
    }
    impl->mean_rate = span > 0 ? static_cast<double>(stats.count - 1) / span : 0;
  } else {
    if (!(t.arrival.rate_rps > 0)) return Status::InvalidArgument("traffic.arrival.rate must be > 0");
    impl->arrivals = MakeArrivalProcess(t.arrival, options.rate_scale, StreamSeed(options.seed, kArrivals));
    impl->mean_rate = MeanArrivalRate(t.arrival, options.rate_scale);
  }
  if (options.closed_loop) impl->mean_rate = 0;
  return Generator(std::move(impl));
}

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;
Generator::~Generator() = default;

std::optional<RequestSpec> Generator::Next() { return impl_->Next(); }
const Status& Generator::status() const { return impl_->status; }
double Generator::MeanRate() const { return impl_->mean_rate; }

Result<card::ArrivalSpec> ScaleRate(const card::ArrivalSpec& arrival, double k) {
  if (!(k > 0) || !std::isfinite(k)) return Status::InvalidArgument("rate scale must be > 0, got " + std::to_string(k));
  card::ArrivalSpec out = arrival;
  out.rate_rps *= k;
  out.trace_speed *= k;
  return out;
}

}  // namespace infereng::workload
