// The periodic /metrics scraper: lines on the run's time axis, streamed, failures marked.
#include "bench/engine_scraper.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace infereng::bench {
namespace {

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()))).string();
}

TEST(EngineScraper, ScrapesPeriodicallyAndOnceAtStop) {
  const std::string path = TempPath("scraper-periodic.jsonl");
  std::filesystem::remove(path);
  std::atomic<int> calls{0};
  ScraperOptions o;
  o.path = path;
  o.t0 = SteadyClock::Instance().Now();
  o.interval = 20 * kNanosPerMilli;
  o.fetch = [&]() -> Result<std::string> {
    const int n = ++calls;
    return "vllm:num_requests_waiting " + std::to_string(n) + "\nvllm:prompt_tokens_total " + std::to_string(100 * n) + "\n";
  };
  Result<std::unique_ptr<EngineScraper>> s = EngineScraper::Start(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  ASSERT_TRUE((*s)->Stop().ok());
  const std::vector<nlohmann::json> lines = ReadLines(path);
  ASSERT_GE(lines.size(), 3u);  // ~5 ticks + the last
  EXPECT_EQ(static_cast<int64_t>(lines.size()), (*s)->scrapes());
  EXPECT_EQ(lines.front()["engine"], "vllm");
  double last_t = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const double t = lines[i]["t_s"].get<double>();
    EXPECT_GT(t, last_t) << "line " << i;
    last_t = t;
    EXPECT_DOUBLE_EQ(lines[i]["signals"]["waiting"].get<double>(), static_cast<double>(i + 1));
    if (i > 0) {
      EXPECT_GT(lines[i]["signals"]["prompt_tokens_per_s"].get<double>(), 0);
    }
  }
  EXPECT_GE(lines[0]["t_s"].get<double>(), 0.019) << "first tick is one interval after t0";
  std::filesystem::remove(path);
}

TEST(EngineScraper, AFailedScrapeIsALineWithItsError) {
  const std::string path = TempPath("scraper-fail.jsonl");
  std::filesystem::remove(path);
  ScraperOptions o;
  o.path = path;
  o.t0 = SteadyClock::Instance().Now();
  o.interval = 1000 * kNanosPerSecond;  // only the last scrape, at Stop
  o.fetch = []() -> Result<std::string> { return Status::Unavailable("connection refused"); };
  Result<std::unique_ptr<EngineScraper>> s = EngineScraper::Start(o);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->Stop().ok()) << "Stop does not wait for the next tick";
  EXPECT_EQ((*s)->failures(), 1);
  EXPECT_EQ((*s)->first_error(), "connection refused");
  const std::vector<nlohmann::json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["error"], "connection refused");
  std::filesystem::remove(path);
}

// llama.cpp with --slots: /slots right after /metrics, its signals on the same line; a
// failed /slots keeps the /metrics signals and says why the slot ones are absent.
TEST(EngineScraper, LlamaCppSlotsJoinTheMetricsLine) {
  const std::string path = TempPath("scraper-slots.jsonl");
  std::filesystem::remove(path);
  std::atomic<int> calls{0};
  ScraperOptions o;
  o.path = path;
  o.t0 = SteadyClock::Instance().Now();
  o.interval = 1000 * kNanosPerSecond;  // only the last scrape, at Stop
  o.fetch = []() -> Result<std::string> { return std::string("llamacpp:requests_processing 2\n"); };
  o.fetch_slots = [&]() -> Result<std::string> {
    if (++calls > 1) return Status::Unavailable("GET /slots answered HTTP 501");
    return std::string(R"([{"id":0,"n_ctx":1024,"is_processing":true,"next_token":{"n_decoded":7,"n_remain":9}},)"
                       R"({"id":1,"n_ctx":1024,"is_processing":true,"next_token":{"n_decoded":3,"n_remain":-1}},)"
                       R"({"id":2,"n_ctx":1024,"is_processing":false,"next_token":{"n_decoded":64,"n_remain":0}}])");
  };
  for (int round = 0; round < 2; ++round) {
    Result<std::unique_ptr<EngineScraper>> s = EngineScraper::Start(o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ASSERT_TRUE((*s)->Stop().ok());
    EXPECT_EQ((*s)->slot_failures(), round);
  }
  const std::vector<nlohmann::json> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 2u);
  const nlohmann::json& ok = lines[0]["signals"];
  EXPECT_EQ(ok["running"], 2);
  EXPECT_EQ(ok["slots_total"], 3);
  EXPECT_EQ(ok["slots_busy"], 2);
  EXPECT_EQ(ok["slots_idle"], 1);
  EXPECT_EQ(ok["slot_n_ctx"], 1024);
  EXPECT_EQ(ok["slots_decoded_tokens"], 10);
  EXPECT_EQ(ok["slots_remaining_tokens"], 9);
  EXPECT_FALSE(lines[0].contains("slots_error"));
  EXPECT_EQ(lines[1]["signals"]["running"], 2);
  EXPECT_FALSE(lines[1]["signals"].contains("slots_busy"));
  EXPECT_EQ(lines[1]["slots_error"], "GET /slots answered HTTP 501");
  std::filesystem::remove(path);
}

TEST(EngineScraper, BadPathIsAnIoError) {
  ScraperOptions o;
  o.path = "/nonexistent-dir/engine_metrics.jsonl";
  o.fetch = []() -> Result<std::string> { return std::string(); };
  Result<std::unique_ptr<EngineScraper>> s = EngineScraper::Start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent-dir/engine_metrics.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace infereng::bench
