// Trace replay: the window selects exactly the right records, the implied prefix hit rate
// equals a hand computation (and an independent one on the real Mooncake slice), and the
// manifest/summary block says what was replayed.
#include "trace/replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "testing/paths.h"

namespace infereng::trace {
namespace {

using ::testing::HasSubstr;

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("infereng_replay_" + std::to_string(::getpid()) + ".jsonl")).string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::string& body) { std::ofstream(path_, std::ios::binary) << body; }
  std::vector<TraceRecord> Replay(const ReplayOptions& o) {
    auto src = ReplaySource::Open(path_, o);
    EXPECT_TRUE(src.ok()) << src.status().ToString();
    std::vector<TraceRecord> out;
    TraceRecord r;
    for (;;) {
      auto more = src->Next(&r);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      out.push_back(r);
    }
    return out;
  }
  std::string path_;
};

// Mooncake lines at 0, 1, ..., 9 s (timestamps in ms), input 100 + i tokens.
std::string TenLines() {
  std::string s;
  for (int i = 0; i < 10; ++i) {
    s += "{\"timestamp\": " + std::to_string(1000 * i) + ", \"input_length\": " + std::to_string(100 + i) +
         ", \"output_length\": 5, \"hash_ids\": [" + std::to_string(i) + "]}\n";
  }
  return s;
}

std::vector<int64_t> Inputs(const std::vector<TraceRecord>& rs) {
  std::vector<int64_t> out;
  for (const auto& r : rs) out.push_back(r.input_tokens);
  return out;
}

TEST_F(ReplayTest, WindowSelectsExactlyTheRightRequests) {
  Write(TenLines());
  ReplayOptions o;
  EXPECT_EQ(Inputs(Replay(o)).size(), 10u);
  o.window = {.start_s = 2, .duration_s = 3};  // offsets [2, 5): 2, 3, 4
  EXPECT_EQ(Inputs(Replay(o)), (std::vector<int64_t>{102, 103, 104}));
  o.window = {.start_s = 2.5, .duration_s = 0, .requests = 4};  // 3, 4, 5, 6
  EXPECT_EQ(Inputs(Replay(o)), (std::vector<int64_t>{103, 104, 105, 106}));
  o.window = {.start_s = 0, .duration_s = 0, .requests = 2};
  EXPECT_EQ(Inputs(Replay(o)), (std::vector<int64_t>{100, 101}));

  // The scan agrees with the stream, and says where the window sits on the trace's clock.
  o.window = {.start_s = 2, .duration_s = 3};
  auto info = ScanReplay(path_, o);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->requests, 3);
  EXPECT_EQ(info->skipped_before, 2);
  EXPECT_DOUBLE_EQ(info->first_t_s, 2);
  EXPECT_DOUBLE_EQ(info->last_t_s, 4);
  EXPECT_EQ(info->format, "mooncake");

  o.window = {.start_s = 20};
  auto empty = ScanReplay(path_, o);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("the replay window holds no request"));
}

TEST_F(ReplayTest, BadLineAnywhereFailsTheScanWithFileAndLine) {
  // Outside the window too: the run must not start on a file that is broken further on.
  Write(TenLines() + "{\"timestamp\": 20000, \"input_length\": \"x\", \"output_length\": 1, \"hash_ids\": []}\n");
  ReplayOptions o;
  o.window.requests = 2;
  auto info = ScanReplay(path_, o);
  ASSERT_FALSE(info.ok());
  EXPECT_THAT(info.status().message(), HasSubstr(path_ + ":11: "));
  EXPECT_THAT(info.status().message(), HasSubstr("input_length"));
}

TEST_F(ReplayTest, ImpliedHitRateByHand) {
  // Block size 4 tokens. A: [1,2] 8 tokens, nothing cached. B: [1,2,3] 10 tokens, 2 leading
  // blocks cached = 8 tokens. C: [1,9] 6 tokens: 1 block = 4. D: [5] 3 tokens: 0.
  // hit = 8 + 4 = 12 of 8 + 10 + 6 + 3 = 27 input tokens.
  Write("{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
        "{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [1, 2, 3]}\n"
        "{\"timestamp\": 2, \"input_length\": 6, \"output_length\": 1, \"hash_ids\": [1, 9]}\n"
        "{\"timestamp\": 3, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": [5]}\n");
  ReplayOptions o;
  o.block_tokens = 4;
  auto info = ScanReplay(path_, o);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(info->has_hashes);
  EXPECT_EQ(info->implied_hit_tokens, 12);
  EXPECT_EQ(info->input_tokens, 27);
  EXPECT_DOUBLE_EQ(info->implied_hit_rate, 12.0 / 27);
  EXPECT_EQ(info->distinct_blocks, 5);
  // A two-block LRU: after B the cache holds [1,2] (3 was touched first, then evicted): C
  // still hits block 1; after C ([9,1] most recent) D misses.
  o.cache_blocks = 2;
  info = ScanReplay(path_, o);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->implied_hit_tokens, 12);
  o.cache_blocks = 1;  // only the head survives: B hits 1 block, C hits 1 block
  info = ScanReplay(path_, o);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->implied_hit_tokens, 8);

  const nlohmann::json j = ReplayInfoToJson(*info, 2.5);
  EXPECT_EQ(j["format"], "mooncake");
  EXPECT_EQ(j["speedup"], 2.5);
  EXPECT_EQ(j["requests"], 4);
  EXPECT_EQ(j["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["prefix"]["cache_blocks"], 1);
  EXPECT_EQ(j["prefix"]["block_tokens"], 4);
  EXPECT_EQ(j["file"], std::filesystem::path(path_).filename().string());
  // No session ids: B re-sends A's whole blocks [1,2] (a follow-up); C shares only block 1,
  // which then is A's and C's; D shares nothing. 3 conversations, 1 follow-up.
  EXPECT_EQ(info->session_records, 0);
  EXPECT_EQ(info->inferred_sessions, 3);
  EXPECT_EQ(info->inferred_follow_ups, 1);
  EXPECT_EQ(j["sessions"]["source"], "inferred");
  EXPECT_EQ(j["sessions"]["sessions"], 3);
  EXPECT_THAT(ReplaySessionNote(*info), HasSubstr("imply 3 conversations (1 of 4 requests continue an earlier one)"));
}

TEST_F(ReplayTest, NoHashIdsMeansUniquePromptsSaidSo) {
  Write("{\"t\": 0, \"input_tokens\": 10, \"output_tokens\": 2}\n{\"t\": 1, \"input_tokens\": 10, \"output_tokens\": 2}\n");
  auto info = ScanReplay(path_, {});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->has_hashes);
  EXPECT_EQ(info->implied_hit_rate, 0);
  EXPECT_THAT(ReplayPrefixNote(*info), HasSubstr("no hash_ids: every replayed prompt is unique"));
  EXPECT_EQ(ReplayInfoToJson(*info, 1)["prefix"]["hash_ids"], false);
  EXPECT_TRUE(ReplayInfoToJson(*info, 1)["sessions"].is_null());
  EXPECT_EQ(ReplaySessionNote(*info), "");
}

TEST_F(ReplayTest, SessionIdsAreCountedAndNothingInferred) {
  Write("{\"t\": 0, \"input_tokens\": 10, \"output_tokens\": 2, \"session_id\": \"a\", \"hash_ids\": [1]}\n"
        "{\"t\": 1, \"input_tokens\": 10, \"output_tokens\": 2, \"hash_ids\": [1]}\n");
  auto info = ScanReplay(path_, {});
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->session_records, 1);
  EXPECT_EQ(info->inferred_sessions, 0);
  EXPECT_EQ(ReplayInfoToJson(*info, 1)["sessions"]["source"], "ids");
  EXPECT_EQ(ReplaySessionNote(*info), "");
}

TEST(ReplayRealTrace, MooncakeSliceImpliedRateMatchesAnIndependentCount) {
  // The first 100 lines of the short Mooncake slice, counted here with a set (an unbounded
  // cache never evicts, so "leading ids seen before" is the whole rule).
  const std::string path = testing::SourceDir() + "/src/trace/testdata/mooncake-conv-short.jsonl";
  ReplayOptions o;
  o.window.requests = 100;
  auto info = ScanReplay(path, o);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  std::ifstream in(path);
  std::string line;
  std::set<uint64_t> seen;
  int64_t hit = 0, total = 0;
  for (int n = 0; n < 100 && std::getline(in, line); ++n) {
    const auto j = nlohmann::json::parse(line);
    const auto ids = j["hash_ids"].get<std::vector<uint64_t>>();
    const int64_t input = j["input_length"].get<int64_t>();
    std::size_t k = 0;
    while (k < ids.size() && seen.count(ids[k]) != 0) ++k;
    hit += std::min<int64_t>(static_cast<int64_t>(k) * 512, input);
    total += input;
    seen.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(info->implied_hit_tokens, hit);
  EXPECT_EQ(info->input_tokens, total);
  EXPECT_NEAR(info->implied_hit_rate, 0.469, 0.001);
  EXPECT_EQ(info->block_tokens, 512);
}

}  // namespace
}  // namespace infereng::trace
