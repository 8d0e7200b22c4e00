// Generator: the ONE workload generator. Turns a card's traffic section into a lazy,
// bounded-memory stream of RequestSpec (arrival time, lengths, tenant, shared prefix).
// The twin consumes it in virtual time, the load generator in wall time: same card + seed
// => the same sequence, bit for bit, on every platform (std::mt19937_64 with our own
// samplers; std:: distributions are implementation-defined).
//
// Arrivals: constant, poisson, gamma (CV of gaps), on/off bursts (poisson while on),
// diurnal (sinusoidal non-homogeneous poisson by thinning), trace replay (any format
// trace/reader.h reads, over the window of trace/replay.h; Mooncake hash_ids become the
// requests' block_ids, so shared leading ids become shared prompt prefixes downstream;
// with traffic.arrival.sessions each request's `session` is its session id as a dense
// number, which SessionPlanner turns into steps).
// Lengths: fixed/uniform/normal/lognormal(p50,p99)/empirical, rounded and clamped to
// [max(1,min), max]. Prefixes: a request starts with a shared prefix with probability
// `share`; its tenant's prefix ids are tenant*distinct + k, so never shared across tenants.
// Independent RNG streams (arrivals, lengths, prefixes) derive from the seed, so changing
// e.g. the prefix share does not move the arrival times.
//
// Thread-safety: one Generator per thread (Next() mutates state). Movable, not copyable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "card/card.h"
#include "core/status.h"
#include "trace/replay.h"
#include "workload/request_spec.h"

namespace infereng::workload {

struct GeneratorOptions {
  uint64_t seed = 42;
  double rate_scale = 1.0;              // multiplies the arrival rate (trace: replay speed)
  bool closed_loop = false;             // no arrival times: every t_arrival is 0
  std::optional<uint64_t> max_requests = std::nullopt;  // stop after N requests
  std::optional<Nanos> horizon = std::nullopt;  // stop at the first arrival at or after this time
};

class Generator {
 public:
  // Validates the traffic section (and, for traces, scans the whole file once so bad lines
  // fail here with FILE:LINE, not mid-run).
  static Result<Generator> FromCard(const card::WorkloadCard& card, uint64_t seed);
  static Result<Generator> FromCard(const card::WorkloadCard& card, const GeneratorOptions& options);

  Generator(Generator&&) noexcept;
  Generator& operator=(Generator&&) noexcept;
  ~Generator();

  // The next request, or nullopt at the end (trace exhausted, max_requests, horizon, or an
  // error: then status() says which).
  std::optional<RequestSpec> Next();
  // Ok unless the stream stopped on an error (e.g. the trace file changed after FromCard).
  const Status& status() const;

  // Long-run mean arrival rate in requests/s after rate_scale (0 for closed loop; for a
  // trace, its request count over its time span).
  double MeanRate() const;

 private:
  struct Impl;
  explicit Generator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Embeddings: input `k` of `spec` (spec.item_tokens[k] tokens) as a request of its own,
// for the prompt builder: its own seed, and an index with kEmbeddingItemIndexBit set that
// no generated request has (spec.index < 2^52, k < 2048), so prepared prompts never mix.
// Rerank: document `k`'s text (item_tokens[k] - query_tokens tokens; its pair is the query
// and it).
inline constexpr uint64_t kEmbeddingItemIndexBit = uint64_t{1} << 63;
RequestSpec EmbeddingItemSpec(const RequestSpec& spec, size_t k);
// Rerank: the query's text (spec.query_tokens tokens), as an item no document is (k = 2047:
// at most kMaxRerankDocuments documents).
RequestSpec RerankQuerySpec(const RequestSpec& spec);

using trace::ReplayInfo;

// The replay options (format, window, block size) of a trace arrival spec.
trace::ReplayOptions ReplayOptionsFor(const card::ArrivalSpec& arrival);
// Scans the card's trace once: window, file hash, implied prefix hit rate (trace/replay.h).
// Bad lines fail with FILE:LINE (InvalidArgument).
Result<ReplayInfo> ScanTraceReplay(const card::ArrivalSpec& arrival);

// Returns `arrival` with its rate multiplied by k (trace: speed multiplied by k), for
// sweeps over `rate x k`. k must be > 0.
Result<card::ArrivalSpec> ScaleRate(const card::ArrivalSpec& arrival, double k);

}  // namespace infereng::workload
