// infereng merge: shards dealt by request index, merged from their raw records, summarise
// exactly as one client over the same records; shards that do not belong together, or a
// missing or duplicated shard, are refused with a message naming it.
#include "job/merge.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

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
  std::string WriteShard(int k, int n, uint64_t seed = 7) {
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
