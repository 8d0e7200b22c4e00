// What `bench --shard K/N` changes in one bench job (the rule itself: bench/shard.h): the
// shard's share of the users or cap, the measured requests it stops after, the shared t0 of
// --start-at, and the shard block of manifest.json that `infereng merge` checks and aligns
// on. Unsharded runs never see any of it.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"
#include "bench/clock_sync.h"
#include "bench/load_plan.h"
#include "bench/load_runner.h"
#include "core/status.h"

namespace infereng::job {

struct ShardPlan {
  bench::Shard shard;
  // Open loop, requests mode: the intended send (offset from t0) of the last request one
  // client would have measured; the shard measures up to it and cools down after it.
  std::optional<Nanos> last_measured_offset;
  int64_t max_requests = -1;  // closed loop, requests mode: this shard's share
};

// Checks the options a sharded run cannot take (--trials > 1, --cold-start), splits the
// concurrency in `plan` and works out the requests-mode stop. Nullopt when unsharded.
Result<std::optional<ShardPlan>> PlanShard(const bench::BenchOptions& opt, bench::LoadPlan* plan);

// --clock-ref URL: this host's wall-clock offset to that reference, measured before any load,
// as the manifest's shard.clock block (bench::ClockOffsetToJson; `merge` realigns shards with
// it). Null without --clock-ref. --clock-ref without --shard is a usage error; a reference
// that does not answer is Unavailable naming it. `exchange` is the seam (default: HTTP GET
// URL/clock on the wall clock).
Result<nlohmann::json> MeasureShardClock(const bench::BenchOptions& opt, bench::ClockExchange exchange = {});

// The runner options of a shard's trial (on top of the unsharded ones).
void ApplyShardPlan(const ShardPlan& sp, const bench::LoadPlan& plan, bench::RunnerOptions* ro, Nanos* planned);

// manifest.json's "shard" block: identity, the dealing rule, the shared start, the clock.
nlohmann::json ShardManifest(const bench::BenchOptions& opt, const bench::LoadPlan& plan);

}  // namespace infereng::job
