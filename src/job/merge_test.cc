// infereng merge: shards dealt by request index, merged from their raw records, summarise
// exactly as one client over the same records; shards that do not belong together, or a
// missing or duplicated shard, are refused with a message naming it.
#include "job/merge.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <fstream>

#include <gtest/gtest.h>

#include "bench/clock_sync.h"
#include "bench/shard.h"
#include "card/card_parser.h"
#include "job/manifest.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "metrics/test_records.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using metrics::testdata::C;
using metrics::testdata::Rec;

constexpr const char* kCard = R"(name: merge-card
traffic:
  arrival: {process: poisson, rate: 20rps}
  input_tokens: 32
  output_tokens: 8
slo:
  ttft: {p99: 150ms}
  goodput: {ttft: 150ms}
bench:
  duration: 10s
  warmup: 1s
  seed: 7
)";

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("infereng-merge-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    card_path_ = (root_ / "card.yaml").string();
    std::ofstream(card_path_) << kCard;
    auto c = card::LoadCardFile(card_path_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    card_ = *c;
    // One client's records: 60 requests every 200 ms from t0, mixed latencies, two errors;
    // the warm-up is 1 s, the last measured send at 11.6 s, a cool-down after it.
    for (uint64_t i = 0; i < 60; ++i) {
      const double t = 200.0 * static_cast<double>(i);
      const double ttft = 40.0 + static_cast<double>((i * 37) % 160);
      if (i % 23 == 5) {
        all_.push_back(Rec(i, t, t + 0.5, {}, t + 30, metrics::ErrorClass::kHttp5xx));
      } else {
        all_.push_back(Rec(i, t, t + 0.5, {C{t + ttft}, C{t + ttft + 20, 2}, C{t + ttft + 45, 3}}, t + ttft + 50));
      }
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  static constexpr Nanos kWarmup = 1000 * kNanosPerMilli;
  static constexpr uint64_t kLastMeasured = 58;  // requests 59.. are the cool-down

  metrics::Summary OneClient() const {
    metrics::AccumulatorOptions ao;
    ao.open_loop = true;
    ao.slo = card_.slo;
    ao.warmup = kWarmup;
    ao.t0 = 0;
    ao.window_end = all_[kLastMeasured].t_sched;
    metrics::SummaryAccumulator acc(ao);
    for (const metrics::RequestRecord& r : all_) acc.Add(r);
    return acc.Finish();
  }

  // Writes shard K of N as bench --shard would: its records, its manifest with the shard block.
  // `clock`: the shard.clock block (bench/clock_sync.h), null for none.
  std::string WriteShard(int k, int n, uint64_t seed = 7, json clock = nullptr) {
    const std::string dir = (root_ / ("shard-" + std::to_string(k))).string();
    fs::create_directories(dir);
    auto w = metrics::RecordWriter::Open(dir + "/requests.jsonl", 0);
    EXPECT_TRUE(w.ok());
    Nanos window_end = 0;
    for (const metrics::RequestRecord& r : all_) {
      if (!bench::InShard({.k = k, .n = n}, r.id)) continue;
      EXPECT_TRUE((*w)->Write(r).ok());
      if (r.id <= kLastMeasured) window_end = r.t_sched;
    }
    EXPECT_TRUE((*w)->Close().ok());
    json m = {{"card", {{"name", card_.name}, {"path", card_path_}, {"sha256", card_.content_hash}}},
              {"seed", seed},
              {"target", "http://127.0.0.1:1"},
              {"load", {{"mode", "open_loop"}, {"rate_rps", 5}}},
              {"host", "host-" + std::to_string(k)},
              {"partial", false},
              {"shard", {{"k", k}, {"n", n}, {"warmup_ns", kWarmup}, {"start_at_unix_ns", 1'000'000'000'000},
                         {"t0_unix_ns", 1'000'000'000'000 + k * 1'500'000}, {"window_end_ns", window_end},
                         {"clock_uncertainty_ms", 2.0}, {"partial", false}}}};
    if (!clock.is_null()) m["shard"]["clock"] = clock;
    EXPECT_TRUE(WriteJsonFile(dir + "/manifest.json", m).ok());
    return dir;
  }

  fs::path root_;
  std::string card_path_;
  card::WorkloadCard card_;
  std::vector<metrics::RequestRecord> all_;
};

TEST_F(MergeTest, MergedSummaryEqualsOneClientOverTheSameRecords) {
  for (int n : {1, 3, 4}) {
    std::vector<std::string> dirs;
    for (int k = n - 1; k >= 0; --k) dirs.push_back(WriteShard(k, n));  // any order
    const std::string out = (root_ / ("merged-" + std::to_string(n))).string();
    auto res = MergeShards({.dirs = dirs, .out = out, .card_path = ""});
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    EXPECT_EQ(res->records, 60);
    const json one = metrics::SummaryToJson(OneClient());
    EXPECT_EQ(metrics::SummaryToJson(res->summary).dump(), one.dump()) << "n = " << n;
    // What was written reads back as the same summary and the same records.
    auto back = metrics::ReadSummaryFile(out + "/summary.json");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(metrics::SummaryToJson(*back).dump(), one.dump());
    auto recs = metrics::ReadRecordsFile(out + "/requests.jsonl");
    ASSERT_TRUE(recs.ok());
    ASSERT_EQ(recs->size(), all_.size());
    for (size_t i = 0; i < all_.size(); ++i) EXPECT_EQ((*recs)[i].id, i);
    // The alignment uncertainty: the start skew (1.5 ms per shard here) plus the stated 2 ms.
    EXPECT_NEAR(res->alignment_uncertainty_ms, 1.5 * (n - 1) + 2.0, 1e-9);
    EXPECT_TRUE(res->manifest.contains("merge"));
    EXPECT_FALSE(res->manifest.contains("shard"));
    for (int k = 0; k < n; ++k) fs::remove_all(root_ / ("shard-" + std::to_string(k)));
  }
  // The SLO verdict is the one-client verdict (the card's objectives, from its file).
  EXPECT_FALSE(OneClient().slo.empty());
}

TEST_F(MergeTest, MissingShardIsNamed) {
  const std::string a = WriteShard(0, 3), c = WriteShard(2, 3);
  auto res = MergeShards({.dirs = {a, c}, .out = (root_ / "m").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(res.status().message().find("missing shard(s) 1 of 3"), std::string::npos) << res.status().message();
}

TEST_F(MergeTest, DuplicateShardIsRefused) {
  const std::string a = WriteShard(0, 2), b = WriteShard(1, 2);
  auto res = MergeShards({.dirs = {a, b, a}, .out = (root_ / "m").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("shard 0/2 given twice"), std::string::npos) << res.status().message();
}

TEST_F(MergeTest, ShardsOfAnotherSeedDoNotBelong) {
  const std::string a = WriteShard(0, 2);
  const std::string b = WriteShard(1, 2, /*seed=*/8);
  auto res = MergeShards({.dirs = {a, b}, .out = (root_ / "m").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("seed"), std::string::npos) << res.status().message();
  EXPECT_NE(res.status().message().find(b), std::string::npos);
}

TEST_F(MergeTest, ARunThatIsNotAShardIsRefused) {
  const std::string a = WriteShard(0, 1);
  json m = json::parse(std::ifstream(a + "/manifest.json"));
  m.erase("shard");
  ASSERT_TRUE(WriteJsonFile(a + "/manifest.json", m).ok());
  auto res = MergeShards({.dirs = {a}, .out = (root_ / "m").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("not a shard"), std::string::npos);
}

TEST_F(MergeTest, AnEditedCardIsRefused) {
  const std::string a = WriteShard(0, 1);
  std::ofstream(card_path_, std::ios::app) << "# edited\n";
  auto res = MergeShards({.dirs = {a}, .out = (root_ / "m").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.status().message().find("not the card the shards ran"), std::string::npos) << res.status().message();
}

}  // namespace
}  // namespace infereng::job

namespace infereng::job {
namespace {

// The local clock of a shard runs `error` ahead of the reference; each exchange's legs take
// `out` and `back` (asymmetric: the estimate is off by (out - back) / 2, within rtt / 2).
bench::ClockExchange FakeExchange(int64_t error, std::vector<std::pair<int64_t, int64_t>> legs) {
  auto i = std::make_shared<std::size_t>(0);
  return [=]() -> Result<bench::ClockSample> {
    const auto [out, back] = legs[(*i)++ % legs.size()];
    const int64_t t = 5'000'000'000'000 + static_cast<int64_t>(*i) * 1'000'000;  // the reference's now
    return bench::ClockSample{.t0 = t + error, .t1 = t + out, .t2 = t + out, .t3 = t + out + back + error};
  };
}

TEST_F(MergeTest, MeasuredClockOffsetsRealignShardsWithinTheMeasuredUncertainty) {
  // Shard 1's clock is 200 ms ahead: it started (its clock reading start_at) 200 ms early in
  // true time, and every request of it truly left 200 ms before its record (relative to its
  // own t0) says. The merge must put it back.
  const int64_t kMs = 1'000'000;
  const int64_t error[2] = {0, 200 * kMs};
  std::vector<std::string> dirs;
  std::vector<bench::ClockOffset> measured;
  for (int k = 0; k < 2; ++k) {
    auto c = bench::MeasureClockOffset(FakeExchange(error[k], {{9 * kMs, 2 * kMs}, {3 * kMs, 1 * kMs}, {6 * kMs, 6 * kMs}}));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    c->reference = "http://ref:8000";
    EXPECT_NEAR(c->offset_ms, -static_cast<double>(error[k]) / 1e6, c->uncertainty_ms);
    EXPECT_DOUBLE_EQ(c->rtt_ms, 4) << "the min-round-trip sample is kept";
    measured.push_back(*c);
    dirs.push_back(WriteShard(k, 2, 7, bench::ClockOffsetToJson(*c)));
  }
  auto res = MergeShards({.dirs = dirs, .out = (root_ / "merged").string(), .card_path = ""});
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_TRUE(res->clock_offsets_applied);
  EXPECT_DOUBLE_EQ(res->alignment_uncertainty_ms, measured[0].uncertainty_ms + measured[1].uncertainty_ms);
  // True send instant of each request on the reference's clock, minus the merged one: the
  // same constant for every request of one shard; the two shards' constants may differ by
  // no more than the reported uncertainty.
  auto recs = metrics::ReadRecordsFile((root_ / "merged" / "requests.jsonl").string());
  ASSERT_TRUE(recs.ok());
  ASSERT_EQ(recs->size(), 60u);
  std::map<int, std::set<int64_t>> residual;  // shard -> true - merged (ns)
  for (const metrics::RequestRecord& r : *recs) {
    const int k = static_cast<int>(r.id % 2);
    const int64_t t0_true = 1'000'000'000'000 + k * 1'500'000 - error[k];  // WriteShard's t0, on true time
    residual[k].insert(t0_true + all_[r.id].t_send - r.t_send);
    EXPECT_EQ(r.t_end - r.t_send, all_[r.id].t_end - all_[r.id].t_send) << "latencies untouched";
  }
  ASSERT_EQ(residual[0].size(), 1u);
  ASSERT_EQ(residual[1].size(), 1u);
  const double misalignment_ms = std::abs(static_cast<double>(*residual[0].begin() - *residual[1].begin())) / 1e6;
  EXPECT_LE(misalignment_ms, res->alignment_uncertainty_ms);
  EXPECT_LT(res->alignment_uncertainty_ms, 10) << "far below the 200 ms it corrected";
  std::ifstream in(root_ / "merged" / "summary.json");
  const json summary = json::parse(in, nullptr, false);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["merge"]["clock_offsets_applied"], true);
  EXPECT_EQ(summary["merge"]["clock_reference"], "http://ref:8000");
  EXPECT_NEAR(summary["merge"]["shards"][1]["clock_offset_ms"].get<double>(), -200, 2);

  // A shard without a measurement: no shift, and a note says why.
  fs::remove_all(root_ / "merged2");
  dirs[1] = WriteShard(1, 2);
  auto res2 = MergeShards({.dirs = dirs, .out = (root_ / "merged2").string(), .card_path = ""});
  ASSERT_TRUE(res2.ok()) << res2.status().ToString();
  EXPECT_FALSE(res2->clock_offsets_applied);
  EXPECT_FALSE(res2->notes.empty());
}

TEST_F(MergeTest, MalformedClockBlockIsRefusedNamingTheFile) {
  std::vector<std::string> dirs = {WriteShard(0, 2, 7, json{{"offset_ms", "soon"}}), WriteShard(1, 2)};
  auto res = MergeShards({.dirs = dirs, .out = (root_ / "merged").string(), .card_path = ""});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(res.status().message().find("shard.clock"), std::string::npos) << res.status().ToString();
}

}  // namespace
}  // namespace infereng::job
