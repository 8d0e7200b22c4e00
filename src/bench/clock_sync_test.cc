// The clock-offset estimator: the min-round-trip sample decides, the true offset lies within
// the stated uncertainty whatever the legs' asymmetry; a backwards sample or no answer is an
// error; and the HTTP exchange against `infereng serve`'s GET /clock (same host: true offset 0).
#include "bench/clock_sync.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/shard.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::bench {
namespace {

constexpr int64_t kMs = 1'000'000;

// The local clock is `error` ahead of the reference; legs `out` and `back`.
ClockSample Sample(int64_t t, int64_t error, int64_t out, int64_t back) {
  return {.t0 = t + error, .t1 = t + out, .t2 = t + out, .t3 = t + out + back + error};
}

TEST(ClockSync, MinRoundTripSampleDecidesAndTheTruthIsWithinTheUncertainty) {
  const int64_t error = -37 * kMs;  // local behind: offset (reference - local) is +37 ms
  auto c = OffsetFromSamples({Sample(1'000 * kMs, error, 20 * kMs, 1 * kMs), Sample(2'000 * kMs, error, 4 * kMs, 2 * kMs),
                              Sample(3'000 * kMs, error, 1 * kMs, 30 * kMs)});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->rtt_ms, 6);
  EXPECT_DOUBLE_EQ(c->uncertainty_ms, 3);
  EXPECT_DOUBLE_EQ(c->offset_ms, 37 + 1);  // (out - back) / 2 = 1 ms of asymmetry
  EXPECT_LE(std::abs(c->offset_ms - 37), c->uncertainty_ms);
  EXPECT_EQ(c->samples, 3);
}

TEST(ClockSync, BackwardsSamplesAndSilentReferencesAreErrors) {
  EXPECT_EQ(OffsetFromSamples({{.t0 = 10, .t1 = 5, .t2 = 6, .t3 = 9}}).status().code(), Status::Code::kInvalidArgument);
  auto none = MeasureClockOffset([]() -> Result<ClockSample> { return Status::Unavailable("ref: refused"); }, 3);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Status::Code::kUnavailable);
}

TEST(ClockSync, ServeClockEndpointIsAReference) {
  serve::ServerOptions so{.port = 0};
  serve::Server server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{}));
  auto port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(*port);
  for (const std::string& ref : {url, url + "/clock"}) {
    auto c = MeasureClockOffset(HttpClockExchange(ref, WallNowUnixNs), 4);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->samples, 4);
    EXPECT_LE(std::abs(c->offset_ms), c->uncertainty_ms + 1e-6) << "one host, one clock: the truth is 0";
    EXPECT_LT(c->rtt_ms, 1000);
  }
  auto bad = MeasureClockOffset(HttpClockExchange(url + "/nothing-here", WallNowUnixNs), 1);
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace infereng::bench
