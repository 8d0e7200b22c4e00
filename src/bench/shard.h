// Sharded load: `bench --shard K/N` runs shard K (0-based, K < N) of one schedule, so N load
// generators on N machines together send exactly the load one would (docs/scale-out.md).
//
// The rule, in one place: every shard draws the SAME request stream from the workload
// generator (same card, seed and rate) and keeps the requests whose index % N == K, with
// their intended send times unchanged; so the union of the shards is the unsharded
// schedule, request for request, and `infereng merge` can put their records back on one
// timeline. Closed loop: the users (and an open loop's in-flight cap) are split, C / N each,
// the first C % N shards one more. Requests mode: a shard stops after its share of the
// measured requests — the indices [m, m + R) that one client would have measured (m: the
// first request intended at or after the warm-up).
// A shared start: --start-at (wall clock) puts every shard's t0 at the same instant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"
#include "workload/request_spec.h"

namespace infereng::bench {

struct Shard {
  int k = 0;  // 0-based (a Kubernetes Indexed Job's completion index)
  int n = 1;
};

inline constexpr int kMaxShards = 1024;

// "K/N" with 0 <= K < N <= kMaxShards; InvalidArgument naming --shard otherwise.
Result<Shard> ParseShard(std::string_view text);

inline bool InShard(const Shard& s, uint64_t index) { return index % static_cast<uint64_t>(s.n) == static_cast<uint64_t>(s.k); }

// This shard's part of C users (or of an in-flight cap): C / N, plus one for K < C % N.
int ShardShare(const Shard& s, int total);

// How many of the indices [first, first + count) are this shard's.
int64_t ShardCount(const Shard& s, uint64_t first, int64_t count);

// The next spec of `next` (a generator's Next) that belongs to the shard; nullopt at the end.
template <typename Next>
std::optional<workload::RequestSpec> NextInShard(const Shard& s, Next&& next) {
  for (;;) {
    std::optional<workload::RequestSpec> spec = next();
    if (!spec || InShard(s, spec->index)) return spec;
  }
}

// --start-at: "2026-12-02T00:10:00Z" (UTC) or "+30s" (from now) -> Unix nanoseconds.
Result<int64_t> ParseStartAt(std::string_view text, int64_t now_unix_ns);

// The wall clock now (Unix ns) — only for the shared start and manifests, never intervals.
int64_t WallNowUnixNs();

// The steady-clock instant of wall time `unix_ns` (read both clocks once, now).
Nanos SteadyAtWall(int64_t unix_ns, Clock& steady);

// "2026-12-02T00:10:00.000Z" for a Unix-ns instant (manifests).
std::string UnixNsIso8601(int64_t unix_ns);

}  // namespace infereng::bench
