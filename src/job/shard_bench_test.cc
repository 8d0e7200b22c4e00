// bench --shard end to end on 127.0.0.1: two shards of one schedule run at once against one
// embedded engine with a shared --start-at, then merge. The shards' requests are exactly
// the unsharded schedule's (no request lost or doubled) and the merged summary is one
// client's summary over the same records.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "bench/shard.h"
#include "card/card_parser.h"
#include "job/bench_job.h"
#include "job/merge.h"
#include "job/shard_plan.h"
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
      o.clock_ref = "http://127.0.0.1:" + std::to_string(*port);  // the engine's GET /clock
      results[k] = RunBench(o);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(results[k].ok()) << results[k].status().ToString();
    EXPECT_FALSE(results[k]->partial);
    EXPECT_EQ(results[k]->manifest["shard"]["k"], k);
    EXPECT_EQ(results[k]->manifest["shard"]["start_at_unix_ns"], start);
    // --clock-ref measured this host against itself: the truth is 0, within the uncertainty.
    const nlohmann::json& clock = results[k]->manifest["shard"]["clock"];
    ASSERT_TRUE(clock.is_object()) << results[k]->manifest["shard"].dump();
    EXPECT_EQ(clock["reference"], "http://127.0.0.1:" + std::to_string(*port));
    EXPECT_GE(clock["samples"].get<int>(), 1);
    EXPECT_LE(std::abs(clock["offset_ms"].get<double>()), clock["uncertainty_ms"].get<double>() + 1e-6);
  }
  auto merged = MergeShards({.dirs = dirs, .out = (root / "merged").string(), .card_path = card_path});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_TRUE(merged->clock_offsets_applied) << "both shards measured against one reference";
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

// --clock-ref: a usage error without --shard, a silent reference fails before any load
// naming it, and the measured block carries the reference's display form.
TEST(ShardBenchTest, ClockRefNeedsAShardAndAnAnsweringReference) {
  bench::BenchOptions o;
  o.clock_ref = "http://127.0.0.1:9";
  auto unsharded = MeasureShardClock(o);
  ASSERT_FALSE(unsharded.ok());
  EXPECT_EQ(unsharded.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(unsharded.status().message().find("--shard"), std::string::npos);

  o.shard = bench::Shard{.k = 1, .n = 2};
  auto silent = MeasureShardClock(o, []() -> Result<bench::ClockSample> { return Status::Unavailable("refused"); });
  ASSERT_FALSE(silent.ok());
  EXPECT_EQ(silent.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(silent.status().message().find("--clock-ref http://127.0.0.1:9"), std::string::npos)
      << silent.status().message();

  // A reference 250 ms ahead of this host, 2 ms each way.
  auto ahead = MeasureShardClock(o, []() -> Result<bench::ClockSample> {
    return bench::ClockSample{.t0 = 1'000'000'000, .t1 = 1'252'000'000, .t2 = 1'252'000'000, .t3 = 1'004'000'000};
  });
  ASSERT_TRUE(ahead.ok()) << ahead.status().ToString();
  EXPECT_DOUBLE_EQ((*ahead)["offset_ms"].get<double>(), 250.0);
  EXPECT_DOUBLE_EQ((*ahead)["uncertainty_ms"].get<double>(), 2.0);
  EXPECT_EQ((*ahead)["reference"], "http://127.0.0.1:9");

  o.clock_ref = "not a url";
  EXPECT_FALSE(MeasureShardClock(o).ok());
  EXPECT_TRUE(MeasureShardClock(bench::BenchOptions{}).ok()) << "no --clock-ref: nothing measured";
}

}  // namespace
}  // namespace infereng::job
