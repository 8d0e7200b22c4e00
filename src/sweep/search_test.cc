#include "sweep/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "metrics/test_records.h"
#include "sweep/sweep_io.h"

namespace infereng::sweep {
namespace {

// A fake server: capacity `cap` req/s; every SLO holds up to `slo_knee`, then attainment
// falls linearly to 0 at `cap`; above `cap` the point is saturated.
struct FakeServer {
  double cap = 10;
  double slo_knee = 7;
  LoadKind kind = LoadKind::kRate;
  std::vector<double> ran{};

  Result<SweepPoint> operator()(double load, int) {
    ran.push_back(load);
    SweepPoint p;
    p.load = load;
    p.offered_rps = load;
    p.throughput_rps = std::min(load, cap);
    p.attainment = load <= slo_knee ? 1.0 : std::max(0.0, 1 - (load - slo_knee) / (cap - slo_knee));
    p.attainment_target = 0.99;
    p.slo_pass = p.attainment >= 0.99;
    p.goodput_rps = p.throughput_rps * p.attainment;
    p.saturated = load > cap * 1.05;
    p.requests = 100;
    p.slo_met_share = {{"ttft <= 500 ms per request", p.attainment}, {"itl <= 50 ms per request", 1.0}};
    return p;
  }
};

TEST(SweepSearchTest, FindsSaturationAndMaxGoodputWithinTolerance) {
  FakeServer server;
  SearchOptions o{.start_load = 1, .growth = 2, .max_points = 12, .tolerance = 0.05};
  auto r = RunSweepSearch(o, [&](double l, int i) { return server(l, i); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->saturation_load);
  EXPECT_DOUBLE_EQ(*r->saturation_load, 16);  // probe 1 2 4 8 16: 16 > 10.5 saturated
  ASSERT_TRUE(r->knee);
  EXPECT_DOUBLE_EQ(r->points[*r->knee].load, 8);
  EXPECT_DOUBLE_EQ(r->max_throughput_rps, 10);
  ASSERT_TRUE(r->max_goodput);
  double best = r->points[*r->max_goodput].load;
  EXPECT_LE(best, 7.0);
  EXPECT_GE(best, 7.0 * 0.95);
  EXPECT_EQ(r->binding_slo.rfind("attainment: ttft <= 500 ms per request met by ", 0), 0u) << r->binding_slo;
  EXPECT_LE(static_cast<int>(server.ran.size()), 12);
  EXPECT_TRUE(r->error.empty());
  // Points are sorted by load and unique.
  for (std::size_t i = 1; i < r->points.size(); ++i) EXPECT_LT(r->points[i - 1].load, r->points[i].load);
}

TEST(SweepSearchTest, BisectionConvergesForManyKnees) {
  for (double knee : {1.3, 2.9, 5.5, 9.0, 33.0}) {
    FakeServer server{.cap = knee * 1.5, .slo_knee = knee};
    SearchOptions o{.start_load = 1, .max_points = 16, .tolerance = 0.03};
    auto r = RunSweepSearch(o, [&](double l, int i) { return server(l, i); });
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->max_goodput) << knee;
    double boundary = knee + 0.01 * (server.cap - knee);  // attainment 0.99 exactly
    double best = r->points[*r->max_goodput].load;
    EXPECT_LE(best, boundary) << knee;
    EXPECT_GE(best, boundary * 0.97) << knee;
  }
}

TEST(SweepSearchTest, ProbesDownwardWhenTheStartLoadFails) {
  FakeServer server{.cap = 3, .slo_knee = 2};
  SearchOptions o{.start_load = 20, .max_points = 14, .tolerance = 0.05};
  auto r = RunSweepSearch(o, [&](double l, int i) { return server(l, i); });
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(server.ran.front(), 20);
  ASSERT_TRUE(r->max_goodput);
  double best = r->points[*r->max_goodput].load;
  EXPECT_LE(best, 2.0);
  EXPECT_GE(best, 2.0 * 0.95);
}

TEST(SweepSearchTest, FixedPointsRunExactlyInOrder) {
  FakeServer server;
  SearchOptions o{.fixed_points = {2, 12, 6}};
  auto r = RunSweepSearch(o, [&](double l, int i) { return server(l, i); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(server.ran, (std::vector<double>{2, 12, 6}));
  ASSERT_EQ(r->points.size(), 3u);
  EXPECT_DOUBLE_EQ(r->points[0].load, 2);  // sorted for analysis
  ASSERT_TRUE(r->max_goodput);
  EXPECT_DOUBLE_EQ(r->points[*r->max_goodput].load, 6);
  ASSERT_TRUE(r->saturation_load);
  EXPECT_DOUBLE_EQ(*r->saturation_load, 12);
}

TEST(SweepSearchTest, RespectsThePointBudget) {
  FakeServer server{.cap = 1e9, .slo_knee = 1e9};
  SearchOptions o{.start_load = 1, .max_points = 4};
  auto r = RunSweepSearch(o, [&](double l, int i) { return server(l, i); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(server.ran.size(), 4u);
  EXPECT_FALSE(r->saturation_load);
  EXPECT_NE(std::find_if(r->notes.begin(), r->notes.end(),
                         [](const std::string& n) { return n.find("saturation not reached") != std::string::npos; }),
            r->notes.end());
}

TEST(SweepSearchTest, ConcurrencyPlateauIsTheKnee) {
  // Throughput grows linearly to 8 concurrent, then flat; latency SLO holds up to 6.
  auto runner = [](double c, int) -> Result<SweepPoint> {
    SweepPoint p;
    p.throughput_rps = std::min(c, 8.0) * 2;
    p.attainment = c <= 6 ? 1.0 : 0.5;
    p.slo_pass = p.attainment >= 0.99;
    p.slo_met_share = {{"e2e_ms p99 <= 2000", p.attainment}};
    return p;
  };
  SearchOptions o{.kind = LoadKind::kConcurrency, .start_load = 1, .max_points = 12};
  auto r = RunSweepSearch(o, runner);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->saturation_load);
  EXPECT_DOUBLE_EQ(*r->saturation_load, 16);  // 1 2 4 8 16: 16 gives no more throughput
  ASSERT_TRUE(r->max_goodput);
  EXPECT_DOUBLE_EQ(r->points[*r->max_goodput].load, 6);  // bisection on integers: 4..8 → 6, 7
  for (const SweepPoint& p : r->points) EXPECT_EQ(p.load, std::round(p.load));
}

TEST(SweepSearchTest, PointFailureStopsAndIsReported) {
  int calls = 0;
  auto runner = [&](double l, int) -> Result<SweepPoint> {
    if (++calls == 3) return Status::Unavailable("connection refused");
    SweepPoint p;
    p.throughput_rps = l;
    p.attainment = 1;
    p.slo_pass = true;
    return p;
  };
  auto r = RunSweepSearch({.start_load = 1}, runner);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->points.size(), 2u);
  EXPECT_NE(r->error.find("connection refused"), std::string::npos);
}

// The user's interrupt (a Cancelled point) ends the sweep partial, not failed.
TEST(SweepSearchTest, InterruptedPointMakesThePartialSweepNotAnError) {
  int calls = 0;
  auto runner = [&](double l, int) -> Result<SweepPoint> {
    if (++calls == 3) return Status::Cancelled("interrupted by the user");
    SweepPoint p;
    p.throughput_rps = l;
    p.attainment = 1;
    p.slo_pass = true;
    return p;
  };
  auto r = RunSweepSearch({.start_load = 1}, runner);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->points.size(), 2u);
  EXPECT_EQ(calls, 3) << "no point runs after the interrupt";
  EXPECT_TRUE(r->partial);
  EXPECT_TRUE(r->error.empty()) << r->error;
  EXPECT_NE(r->stop_reason.find("interrupted"), std::string::npos) << r->stop_reason;
  SweepFile f;
  f.result = *r;
  auto back = SweepFromJson(SweepToJson(f));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->result.partial);
}

TEST(SweepSearchTest, ShortWindowShortfallIsNotSaturation) {
  SweepPoint p;
  p.load = p.offered_rps = 10;
  p.throughput_rps = 7;  // completions inside a 6 s window of 3 s requests
  p.e2e_ms = {.p50 = 3000, .p90 = 3500, .p99 = 4000, .count = 100};
  p.window_s = 6;
  EXPECT_FALSE(PointSaturated(p, LoadKind::kRate, 0.1));
  p.window_s = 60;
  EXPECT_TRUE(PointSaturated(p, LoadKind::kRate, 0.1));
  p.window_s = 6;
  p.saturated = true;  // the detector saw the backlog grow
  EXPECT_TRUE(PointSaturated(p, LoadKind::kRate, 0.1));
}

TEST(SweepSearchTest, RejectsBadOptions) {
  auto never = [](double, int) -> Result<SweepPoint> { return Status::Internal("must not run"); };
  EXPECT_FALSE(RunSweepSearch({.max_points = 0}, never).ok());
  EXPECT_FALSE(RunSweepSearch({.growth = 1}, never).ok());
  EXPECT_FALSE(RunSweepSearch({.fixed_points = {1, -2}}, never).ok());
}

TEST(SweepSearchTest, ErrorsCanBeTheBindingConstraint) {
  auto runner = [](double l, int) -> Result<SweepPoint> {
    SweepPoint p;
    p.offered_rps = l;
    p.throughput_rps = l;
    p.requests = 100;
    p.errors = l > 4 ? 30 : 0;
    p.attainment = l > 4 ? 0.7 : 1.0;
    p.slo_pass = p.attainment >= 0.99;
    p.slo_met_share = {{"ttft_ms p99 <= 500", l > 4 ? 0.95 : 1.0}};
    return p;
  };
  auto r = RunSweepSearch({.fixed_points = {2, 8}}, runner);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->binding_slo.find("errors"), std::string::npos) << r->binding_slo;
}

// The binding SLO is the objective furthest past its threshold at the first failing load,
// named with its measured value; a passing objective is never blamed.
TEST(SweepSearchTest, BindingSloIsTheObjectiveFurthestPastItsThreshold) {
  auto runner = [](double l, int) -> Result<SweepPoint> {
    SweepPoint p;
    p.offered_rps = p.throughput_rps = l;
    p.requests = 100;
    p.attainment = 1;
    const bool high = l > 4;
    p.objectives = {{.label = "ttft p50 <= 200 ms", .value = 36, .threshold = 200, .pass = true},
                    {.label = "ttft p99 <= 500 ms", .value = high ? 730.0 : 300.0, .threshold = 500, .pass = !high},
                    {.label = "itl p99 <= 50 ms", .value = high ? 55.0 : 20.0, .threshold = 50, .pass = !high}};
    p.slo_pass = !high;
    p.slo_met_share = {{"ttft <= 500 ms per request", 1.0}};
    return p;
  };
  auto r = RunSweepSearch({.fixed_points = {2, 8}}, runner);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->max_goodput);
  EXPECT_DOUBLE_EQ(r->points[*r->max_goodput].load, 2);
  EXPECT_EQ(r->binding_slo, "ttft p99 <= 500 ms (measured 730 ms)");
}

// The card at a light load: every objective as written passes (P50 36 ms <= 200 ms,
// P99 300 ms <= 500 ms), so the point is no SLO miss and reports both objectives.
TEST(SweepSearchTest, PointVerdictAgreesWithTheObjectivesAsWritten) {
  std::vector<metrics::RequestRecord> recs;
  for (int i = 0; i < 100; ++i) {
    const double t = i * 100.0, ttft = i % 20 == 7 ? 300 : 36;
    recs.push_back(metrics::testdata::Rec(static_cast<uint64_t>(i), t, t, {{t + ttft}, {t + ttft + 10}}, t + ttft + 10));
  }
  metrics::AccumulatorOptions o;
  o.slo.latency = {{.metric = "ttft_ms", .percentile = 50, .threshold_ms = 200},
                   {.metric = "ttft_ms", .percentile = 99, .threshold_ms = 500}};
  SweepPoint p = PointFromSummary(10, metrics::Summarize(recs, o));
  EXPECT_TRUE(p.slo_pass);
  EXPECT_DOUBLE_EQ(p.attainment, 1);
  ASSERT_EQ(p.objectives.size(), 2u);
  EXPECT_EQ(p.objectives[0].label, "ttft p50 <= 200 ms");
  EXPECT_DOUBLE_EQ(p.objectives[0].value, 36);
  EXPECT_EQ(p.slo_met_share.count("ttft <= 500 ms per request"), 1u);
  // And it survives sweep.json.
  auto back = PointFromJson(PointToJson(p), "p");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->objectives.size(), 2u);
  EXPECT_EQ(back->objectives[1].label, "ttft p99 <= 500 ms");
  EXPECT_EQ(back->objectives[1].samples, 100);
}

}  // namespace
}  // namespace infereng::sweep
