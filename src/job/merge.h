// `infereng merge DIR... --out DIR`: the shards of one sharded bench (bench --shard K/N,
// bench/shard.h) put back together as one run directory.
//
// Exactness: the merge reads the shards' raw records (requests.jsonl), never their
// summaries, and summarises them with the same accumulator and options a single client
// uses (warm-up, window end = the last measured send of any shard, the card's SLOs), so the
// merged summary, percentiles and report are what one client would have produced from the
// same records. Every shard's record times are relative to its own t0, and every shard's
// t0 is the shared --start-at, so the records go on one timeline unshifted; per-request
// latencies are differences on one machine's clock and carry no cross-machine error. What
// the machines' clocks can move is the alignment between shards (which window a
// completion falls in, the time series). When every shard measured its clock's offset to
// one reference (bench/clock_sync.h: shard.clock in its manifest), the
// merge shifts each shard's records by where its t0 sat on the reference's clock (earliest
// shard at 0) and reports the measured uncertainties; otherwise no shift, and the
// uncertainty is each shard's measured start lateness plus its stated clock error. Either
// way it is in summary.json's "merge".
//
// The shards must belong together: the same card (SHA-256), seed, load and N, distinct K,
// none missing; otherwise InvalidArgument says what is wrong and which directory.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "metrics/summary.h"

namespace infereng::job {

struct MergeOptions {
  std::vector<std::string> dirs;  // the shards' run directories
  std::string out;                // the merged run directory (created; must be new or empty)
  std::string card_path;          // the card (default: the path in the shards' manifests)
};

struct MergeResult {
  metrics::Summary summary;
  nlohmann::json summary_json;
  nlohmann::json manifest;
  int shards = 0;
  int64_t records = 0;
  // How far one shard's timeline may sit from another's. Measured offsets applied: the sum
  // of the two largest measured uncertainties. Otherwise: the start skew between shards +
  // the largest stated clock error.
  double alignment_uncertainty_ms = 0;
  bool clock_error_stated = false;      // every shard stated (--clock-uncertainty) or measured its clock error
  bool clock_offsets_applied = false;   // every shard measured its offset to one reference: records shifted
  std::vector<std::string> notes;
};

// Merges and writes out/requests.jsonl, summary.json and manifest.json.
Result<MergeResult> MergeShards(const MergeOptions& options);

}  // namespace infereng::job
