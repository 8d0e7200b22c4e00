// bench --shard end to end on 127.0.0.1: two shards of one schedule run at once against one
// embedded engine with a shared --start-at, then merge. The shards' requests are exactly
// the unsharded schedule's (no request lost or doubled) and the merged summary is one
// client's summary over the same records.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "bench/shard.h"
#include "card/card_parser.h"
#include "job/bench_job.h"
#include "job/merge.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCard = R"(name: shard-card
traffic:
  arrival: {process: poisson, rate: 100rps}
  input_tokens: 16
  output_tokens: 4
slo:
  ttft: {p99: 5s}
model:
  id: tiny-model
bench:
  warmup: 0s
  seed: 5
)";

TEST(ShardBenchTest, TwoShardsMergeIntoTheUnshardedSchedule) {
  const fs::path root = fs::temp_directory_path() / ("infereng-shard-bench-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string card_path = (root / "card.yaml").string();
  std::ofstream(card_path) << kCard;
  auto card = card::LoadCardFile(card_path);
  ASSERT_TRUE(card.ok()) << card.status().ToString();

  serve::ServerOptions so;
  so.port = 0;
  so.speedup = 20;
  so.model_name = "tiny-model";
  serve::Server server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
  auto port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();

  constexpr int64_t kRequests = 30;
  const int64_t start = bench::WallNowUnixNs() + 1'500'000'000;  // both shards' t0
  std::vector<std::string> dirs;
  std::vector<Result<bench::BenchResult>> results(2, Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    dirs.push_back((root / ("shard-" + std::to_string(k))).string());
    threads.emplace_back([&, k] {
      bench::BenchOptions o;
      o.target = "http://127.0.0.1:" + std::to_string(*port);
      o.card = *card;
      o.out_dir = dirs[k];
      o.requests = kRequests;
      o.warmup = 0;
      o.cooldown = 0;
      o.shard = bench::Shard{.k = k, .n = 2};
      o.start_at_unix_ns = start;
      o.clock_uncertainty_ms = 0.5;
      results[k] = RunBench(o);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(results[k].ok()) << results[k].status().ToString();
    EXPECT_FALSE(results[k]->partial);
    EXPECT_EQ(results[k]->manifest["shard"]["k"], k);
    EXPECT_EQ(results[k]->manifest["shard"]["start_at_unix_ns"], start);
  }
  auto merged = MergeShards({.dirs = dirs, .out = (root / "merged").string(), .card_path = card_path});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  // Requests mode: exactly the R requests one client would have sent (no cool-down here).
  auto recs = metrics::ReadRecordsFile((root / "merged" / "requests.jsonl").string());
  ASSERT_TRUE(recs.ok());
  std::set<uint64_t> ids;
  for (const metrics::RequestRecord& r : *recs) ids.insert(r.id);
  ASSERT_EQ(ids.size(), recs->size()) << "a request in two shards";
  EXPECT_EQ(static_cast<int64_t>(ids.size()), kRequests);
  EXPECT_EQ(*ids.begin(), 0u);
  EXPECT_EQ(*ids.rbegin(), static_cast<uint64_t>(kRequests - 1));
  EXPECT_EQ(merged->summary.counts.in_window, kRequests);
  EXPECT_EQ(merged->summary.counts.succeeded, kRequests);
  // One client over the same records: the same accumulator over the union.
  metrics::AccumulatorOptions ao;
  ao.open_loop = true;
  ao.slo = card->slo;
  ao.t0 = 0;
  Nanos last = 0;
  for (const metrics::RequestRecord& r : *recs) last = std::max(last, r.t_sched);
  ao.window_end = last;
  metrics::SummaryAccumulator acc(ao);
  for (const metrics::RequestRecord& r : *recs) acc.Add(r);
  EXPECT_EQ(metrics::SummaryToJson(merged->summary).dump(), metrics::SummaryToJson(acc.Finish()).dump());
  EXPECT_LT(merged->alignment_uncertainty_ms, 100);  // one host: the start skew is the scheduling jitter
  server.Stop();
  fs::remove_all(root);
}

}  // namespace
}  // namespace infereng::job
