// profile + calibrate: the table fit against hand-computed values, the roofline fit on
// synthetic points, per-request points from records, and blind recovery — the embedded
// engine run with hidden cost parameters, profiled over 127.0.0.1 and calibrated back.
#include "job/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "card/card_parser.h"
#include "client/test_fixture.h"
#include "catalog/catalog.h"
#include "fit/step_cost.h"
#include "job/calibrate.h"
#include "job/calibrate_runs.h"
#include "job/profile_fit.h"
#include "serve/server.h"
#include "serve/twin_engine.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

using twin::ProfilePoint;

constexpr const char* kCard = R"(name: blind
traffic:
  arrival: {process: poisson, rate: 3rps}
  input_tokens: {fixed: 300}
  output_tokens: {fixed: 60}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
bench:
  duration: 60s
  warmup: 0s
  seed: 5
)";

// Hidden parameters (catalog defaults: 0.5, 0.8, 1 ms). The blind-recovery engine leaves
// the step overhead at its default: a profile's steps tell it from the bandwidth only by the
// decode step's slope over context, and calibrate says when that was too weak and keeps the
// card's value. It hides a per-sequence host cost (default 0) as well.
const std::vector<std::string> kHidden = {"cost.eff_flops=0.45", "cost.eff_bandwidth=0.6", "cost.step_overhead=0.002"};
const std::vector<std::string> kHiddenBlind = {"cost.eff_flops=0.45", "cost.eff_bandwidth=0.6",
                                               "engine.seq_overhead=50us"};

card::WorkloadCard Card() {
  auto c = card::ParseCard(kCard, "blind.yaml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

twin::TwinSetup TwinFor(const std::vector<std::string>& sets) {
  auto cat = catalog::Catalog::Load();
  EXPECT_TRUE(cat.ok());
  twin::SetupOptions so;
  so.sets = sets;
  auto s = twin::ResolveTwin(Card(), so, *cat);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

const twin::FittedParam& Param(const CalibrationResult& r, const std::string& key) {
  for (const twin::FittedParam& f : r.params) {
    if (f.key == key) return f;
  }
  static twin::FittedParam none;
  ADD_FAILURE() << "no " << key;
  return none;
}

TEST(ProfileFit, PeelsContextThenBatchThenFrontEndThenPrefill) {
  // Hand-built: tokens(1) = 10 ms, context slope 1 us/token, tokens(8) = 12 ms,
  // front end 4 ms, tokens(512) = 100 ms.
  std::vector<ProfilePoint> pts = {
      {"decode_context", 1, 100, 1, 0.0101, 3},
      {"decode_context", 1, 1100, 1, 0.0111, 2},
      {"decode_batch", 8, 800, 8, 0.0128, 1},
  };
  const double tokens4 = 0.010 + 3.0 / 7.0 * 0.002;  // between tokens(1) and tokens(8)
  pts.push_back({"front_end", 4, 0, 1, 0.004 + tokens4, 3});
  pts.push_back({"prefill", 512, 0, 1, 0.004 + 0.100, 2});
  std::vector<std::string> notes;
  auto t = FitProfileTable(pts, &notes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NEAR(t->context.At(0), 0, 1e-12);
  EXPECT_NEAR(t->context.At(1100), 0.0011, 1e-9);
  EXPECT_NEAR(t->tokens.At(1), 0.010, 1e-9);
  EXPECT_NEAR(t->tokens.At(8), 0.012, 1e-9);
  EXPECT_NEAR(t->front_end_s, 0.004, 1e-9);
  EXPECT_NEAR(t->tokens.At(512), 0.100, 1e-9);
  for (double e : twin::TableRelativeErrors(*t, pts)) EXPECT_NEAR(e, 0, 1e-6);
  std::vector<std::string> n2;
  EXPECT_FALSE(FitProfileTable({{"prefill", 512, 0, 1, 0.1, 1}}, &n2).ok());  // no decode step
}

// Occupancy points -> the grid: a column per batch-token count, rows on the widest
// column's occupancies, the others interpolated onto them, non-decreasing along occupancy.
TEST(ProfileFit, OccupancyPointsBecomeTheGrid) {
  std::vector<ProfilePoint> pts = {{"decode_context", 1, 20, 1, 0.004, 3}};
  auto occ = [&](int64_t n, int64_t o, double s) {
    pts.push_back({.kind = "occupancy", .new_tokens = n, .context_tokens = 0, .batch = 1, .seconds = s,
                   .repeats = 3, .kv_occupied_tokens = o});
  };
  occ(1, 20, 0.004);
  occ(1, 420, 0.012);
  occ(1, 820, 0.011);  // noise: lower than the row below
  occ(64, 80, 0.050);  // the prefill column sits 60 cells higher (its own prompt)
  occ(66, 480, 0.090);  // one size of prompt counted 2 tokens longer: the same column
  std::vector<std::string> notes;
  auto t = FitProfileTable(pts, &notes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const twin::OccupancyTable& g = t->occupancy;
  ASSERT_FALSE(g.empty());
  EXPECT_EQ(g.batch_tokens, (std::vector<double>{1, 66}));  // 64 and 66 within 5%: their median
  EXPECT_EQ(g.kv_occupied, (std::vector<double>{20, 420, 820}));
  // The decode column's three points: their least-squares line, mean (420, 0.009), slope
  // (-400 x -0.005 + 400 x 0.002) / (2 x 400^2) = 8.75e-6 s per cell.
  EXPECT_NEAR(g.seconds[0][0], 0.009 - 400 * 8.75e-6, 1e-12);
  EXPECT_NEAR(g.seconds[1][0], 0.009, 1e-12);
  EXPECT_NEAR(g.seconds[2][0], 0.009 + 400 * 8.75e-6, 1e-12);
  // 64-token column: its first value below 80 (never a slope extended down), interpolated at
  // 420, extended at the end slope to 820.
  EXPECT_NEAR(g.seconds[0][1], 0.050, 1e-12);
  EXPECT_NEAR(g.seconds[1][1], 0.050 + 340 * 0.0001, 1e-12);
  EXPECT_NEAR(g.seconds[2][1], 0.090 + 340 * 0.0001, 1e-12);
  // One point is not a table.
  std::vector<std::string> n2;
  auto one = FitProfileTable({{"decode_context", 1, 20, 1, 0.004, 3},
                              {.kind = "occupancy", .new_tokens = 1, .seconds = 0.004, .kv_occupied_tokens = 20}},
                             &n2);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->occupancy.empty());
}

// Session 18, llama.cpp b11669 (per-slot KV caches) on an H200: the occupancy rows do not
// grow with the cells other slots hold (decode 6.49 ... 6.26 ms, 499-token prefill 75 ...
// 64 ms over 352 ... 12,832 cells). Such a grid would price a batch of 8 decoding sequences
// as 8 tokens of one prompt (7 ms, where the engine took 20 ms), so it is dropped with a
// note, and the curves, which hold the measured decode batches, price the steps.
TEST(ProfileFit, AFlatOccupancyGridIsAPerSlotCacheAndTheCurvesPrice) {
  std::vector<ProfilePoint> pts = {{"decode_context", 1, 63, 1, 0.006193, 5},
                                   {"decode_batch", 8, 512, 8, 0.019951, 5},
                                   {"prefill", 472, 0, 1, 0.106407, 5}};
  const std::vector<std::pair<int64_t, std::pair<double, double>>> rows = {
      {352, {0.006485, 0.075304}}, {3200, {0.006426, 0.082853}}, {6560, {0.006461, 0.083397}},
      {9760, {0.006267, 0.061645}}, {12320, {0.006257, 0.063969}}};
  for (const auto& [o, sec] : rows) {
    pts.push_back({.kind = "occupancy", .new_tokens = 1, .context_tokens = 64, .batch = 1, .seconds = sec.first,
                   .repeats = 5, .kv_occupied_tokens = o});
    pts.push_back({.kind = "occupancy", .new_tokens = 499, .context_tokens = 0, .batch = 1, .seconds = sec.second,
                   .repeats = 5, .kv_occupied_tokens = o + 480});
  }
  std::vector<std::string> notes;
  auto t = FitProfileTable(pts, &notes);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->occupancy.empty());
  EXPECT_NEAR(t->tokens.At(8), 0.019951 - t->context.At(512), 1e-9);  // the decode batch prices 8 sequences
  EXPECT_THAT(notes, ::testing::Contains(::testing::HasSubstr("its own KV cache")));

  // Session 18, the same engine on CPU: the decode column grew +56% over 192-2,304 cells (0.9
  // us per cell another slot holds) while its own context cost 14 us per cell: per slot.
  std::vector<ProfilePoint> cpu = {{"decode_context", 1, 63, 1, 0.003395, 5},
                                   {"decode_context", 1, 496, 1, 0.009603, 5},
                                   {"decode_batch", 4, 256, 4, 0.009155, 5}};
  for (const auto& [o, sec] : std::vector<std::pair<int64_t, double>>{{192, 0.0033}, {1280, 0.00349}, {1600, 0.0044},
                                                                      {2304, 0.00515}}) {
    cpu.push_back({.kind = "occupancy", .new_tokens = 1, .context_tokens = 64, .batch = 1, .seconds = sec,
                   .repeats = 5, .kv_occupied_tokens = o});
    cpu.push_back({.kind = "occupancy", .new_tokens = 149, .context_tokens = 0, .batch = 1, .seconds = 0.04 + sec,
                   .repeats = 5, .kv_occupied_tokens = o + 96});
  }
  notes.clear();
  auto c = FitProfileTable(cpu, &notes);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->occupancy.empty());
  EXPECT_THAT(notes, ::testing::Contains(::testing::HasSubstr("a cell of its own context")));

  // The same rows growing as a unified cache's do (b4748: +245% over the span) stay a grid.
  for (ProfilePoint& p : pts) {
    if (p.kind == "occupancy") p.seconds *= 1 + static_cast<double>(p.kv_occupied_tokens) / 4000;
  }
  notes.clear();
  auto u = FitProfileTable(pts, &notes);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_FALSE(u->occupancy.empty());
}

TEST(Calibrate, RecoversRooflineParametersFromExactPoints) {
  const twin::TwinSetup hidden = TwinFor(kHidden);
  const fit::RooflineStepCost cost(*hidden.deployment);
  // The engine's host costs beside the roofline: 0.5 ms per step (given, as a preset's
  // engine.step_overhead is) and 40 us per sequence (hidden, fitted).
  const double host_step = 0.0005, host_seq = 40e-6;
  std::vector<ProfilePoint> pts;
  for (int64_t p : {8, 64, 256, 1024, 4096}) {
    fit::StepShape s{.prefill_seqs = 1, .prefill_tokens = p};
    pts.push_back({"prefill", p, 0, 1, cost.Seconds(s) + host_step + host_seq + 0.030, 1});
  }
  for (int b : {1, 2, 4, 8, 16, 64}) {
    for (int64_t c : {100, 2000}) {
      fit::StepShape s{.decode_seqs = b, .decode_context = b * c};
      pts.push_back({"decode_batch", b, b * c, b, cost.Seconds(s) + host_step + host_seq * b, 1});
    }
  }
  // An occupancy point (a step slowed by other slots' cells) is the grid's, not the roofline's.
  pts.push_back({.kind = "occupancy", .new_tokens = 1, .seconds = 5.0, .repeats = 3, .kv_occupied_tokens = 3000});
  auto r = CalibrateRoofline(*TwinFor({}).deployment, pts, EngineHost{.step_s = host_step, .seq_s = 0});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->points, static_cast<int>(pts.size()) - 1);
  EXPECT_NEAR(Param(*r, "cost.eff_flops").value, 0.45, 0.45 * 0.01);
  EXPECT_NEAR(Param(*r, "cost.eff_bandwidth").value, 0.6, 0.6 * 0.01);
  EXPECT_NEAR(Param(*r, "cost.step_overhead").value, 0.002, 1e-4);  // the engine's 0.5 ms not in it
  EXPECT_NEAR(Param(*r, "front_end_s").value, 0.030, 1e-4);
  EXPECT_TRUE(Param(*r, "engine.seq_overhead").identified) << Param(*r, "engine.seq_overhead").note;
  EXPECT_NEAR(Param(*r, "engine.seq_overhead").value, 40e-6, 1e-6);
  EXPECT_LT(r->rms_rel_error_after, 0.001);
  EXPECT_GT(r->rms_rel_error_before, 0.05);
}

// A profile's TTFT points carry the whole request path, so host delays of a few percent;
// its decode steps (robust medians over many events) are steady to 0.05%, and only their slope over context pins
// the bandwidth against the step overhead. With equal weights the TTFT noise below leaves
// eff_bandwidth unidentified (held at the card's 0.8, a third off); weighted by each kind's
// residual RMS, the decode steps decide.
TEST(Calibrate, NoisyTtftPointsDoNotDragTheBandwidth) {
  const fit::RooflineStepCost cost(*TwinFor(kHiddenBlind).deployment);
  std::vector<ProfilePoint> pts;
  const std::vector<double> ttft_noise = {0.06, -0.04, 0.07, 0.05, -0.03, 0.04, 0.02};
  std::size_t k = 0;
  pts.push_back({"front_end", 1, 0, 1, (cost.Seconds({.prefill_seqs = 1, .prefill_tokens = 1}) + 0.035) *
                                           (1 + ttft_noise[k++]), 3});
  for (int64_t n : {64, 256, 1024, 4096, 8192, 12000}) {
    const double t = cost.Seconds({.prefill_seqs = 1, .prefill_tokens = n}) + 0.035;
    pts.push_back({"prefill", n, 0, 1, t * (1 + ttft_noise[k++]), 2});
  }
  const std::vector<double> step_noise = {0.0005, -0.0004, 0.0003, -0.0005, 0.0004, 0.0002, -0.0003, 0.0001};
  k = 0;
  for (int64_t c : {9, 72, 264, 1032, 4104, 8200}) {
    pts.push_back({"decode_context", 1, c, 1, cost.Seconds({.decode_seqs = 1, .decode_context = c}) * (1 + step_noise[k++]), 2});
  }
  for (int b : {2, 8}) {
    pts.push_back({"decode_batch", b, 9 * b, b, cost.Seconds({.decode_seqs = b, .decode_context = 9 * b}) * (1 + step_noise[k++]), 1});
  }
  auto r = CalibrateRoofline(*TwinFor({}).deployment, pts);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const twin::FittedParam& bw = Param(*r, "cost.eff_bandwidth");
  ASSERT_TRUE(bw.identified) << bw.note;
  EXPECT_NEAR(bw.value, 0.6, 0.6 * 0.02);
  EXPECT_NEAR(Param(*r, "cost.eff_flops").value, 0.45, 0.45 * 0.05);
  // The standard error is the weighted fit's: it covers the truth.
  EXPECT_NEAR(bw.value, 0.6, 3 * bw.stderr_ + 1e-9);
}

TEST(Calibrate, SaysWhatTheDataCannotIdentify) {
  // Decode steps only: nothing is compute-bound and no TTFT was measured.
  const fit::RooflineStepCost cost(*TwinFor(kHidden).deployment);
  std::vector<ProfilePoint> pts;
  for (int b : {1, 4, 16}) {
    fit::StepShape s{.decode_seqs = b, .decode_context = b * 200};
    pts.push_back({"decode_batch", b, b * 200, b, cost.Seconds(s), 1});
  }
  auto r = CalibrateRoofline(*TwinFor({}).deployment, pts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(Param(*r, "cost.eff_flops").identified);
  EXPECT_NE(Param(*r, "cost.eff_flops").note.find("compute-bound"), std::string::npos);
  EXPECT_FALSE(Param(*r, "front_end_s").identified);
  EXPECT_TRUE(Param(*r, "engine.seq_overhead").identified);  // batches 1, 4, 16
  // One batch size: the per-sequence cost is not told from the per-step one.
  pts.resize(1);
  auto one = CalibrateRoofline(*TwinFor({}).deployment, pts, EngineHost{.seq_s = 25e-6});
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(Param(*one, "engine.seq_overhead").identified);
  EXPECT_EQ(Param(*one, "engine.seq_overhead").value, 25e-6);  // the card's, kept
}

TEST(CalibrateRuns, RequestsBecomeDecodeAndIdleTtftPoints) {
  auto rec = [](uint64_t id, Nanos send, Nanos first, Nanos last, int64_t out) {
    metrics::RequestRecord r;
    r.id = id;
    r.t_send = send;
    r.chunks = {{first, 1, false}, {last, static_cast<int32_t>(out - 1), false}};
    r.t_end = last;
    r.prompt_tokens = 100;
    r.completion_tokens = out;
    return r;
  };
  // A alone (idle send), B overlaps A's decode: A's midpoint (60 ms) is inside B's span.
  const Nanos ms = kNanosPerMilli;
  std::vector<metrics::RequestRecord> rs = {rec(0, 0, 20 * ms, 100 * ms, 9), rec(1, 30 * ms, 50 * ms, 130 * ms, 9)};
  auto pts = PointsFromRecords(rs);
  ASSERT_EQ(pts.size(), 3u);  // A: prefill + decode; B: decode only (sent while A ran)
  EXPECT_EQ(pts[0].kind, "prefill");
  EXPECT_DOUBLE_EQ(pts[0].seconds, 0.020);
  EXPECT_EQ(pts[1].batch, 2);
  EXPECT_DOUBLE_EQ(pts[1].seconds, 0.010);  // 80 ms / 8 steps
  EXPECT_EQ(pts[1].context_tokens, 2 * (100 + 4));
}

// Blind recovery: the embedded engine with hidden cost parameters, profiled over HTTP,
// calibrated from the card's defaults; then the calibrated twin predicts a held-out run
// (3 rps Poisson, not a profile shape) of the hidden twin.
// True in ASan/UBSan builds (GCC: __SANITIZE_ADDRESS__; clang: __has_feature).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(BlindRecovery, ProfileAndCalibrateRecoverHiddenParameters) {
  auto engine = serve::MakeTwinEngine(TwinFor(kHiddenBlind));
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  serve::ServerOptions so;
  so.port = 0;
  so.model_name = "blind";
  serve::Server server(so, std::move(engine).value());
  auto port = server.Start();
  ASSERT_TRUE(port.ok());

  ProfileOptions o;
  o.target = "http://127.0.0.1:" + std::to_string(*port);
  o.client.base_url = o.target;
  o.budget = 25 * kNanosPerSecond;
  o.max_batch = 8;
  // Up to 8192 words: the decode step's slope over context (KV reads, 6% of the step at
  // 8k tokens) is what tells the bandwidth from the step overhead; at 2048 words it was
  // 1.5%, and host noise on the CI machine moved eff_bandwidth to 0.71.
  o.max_prompt_words = 8192;
  o.decode_tokens = 16;
  o.repeats = 3;
  auto p = RunProfile(o);
  server.Stop();
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->provenance.model, "blind");
  EXPECT_GE(p->points.size(), 8u);
  EXPECT_LT(p->fit_rms_rel_error, 0.10);

  auto r = CalibrateRoofline(*TwinFor({}).deployment, p->points);
  ASSERT_TRUE(r.ok());
  const twin::FittedParam& bw = Param(*r, "cost.eff_bandwidth");
  const twin::FittedParam& fl = Param(*r, "cost.eff_flops");
  for (const twin::FittedParam& f : r->params) {
    std::printf("  %-22s %.5g +- %.3g %s\n", f.key.c_str(), f.value, f.stderr_, f.note.c_str());
  }
  std::printf("  rms relative error %.2f%% -> %.2f%%\n", 100 * r->rms_rel_error_before, 100 * r->rms_rel_error_after);
  ASSERT_TRUE(bw.identified) << bw.note;
  // Within the stated uncertainty (3 standard errors, floored at 5%: the residuals do not see
  // the wall-clock bias a loaded host adds to every point alike), and never more than 10% off.
  // A sanitized build runs the server's HTTP path several times slower, which biases every
  // measured point (ASan, load ~3: eff_flops 0.438 +- 0.004, eff_bandwidth 0.655 +- 0.014):
  // there the run checks the code path and only a 20% bound on the values.
  const double bound = kSanitized ? 0.20 : 0.10;
  ASSERT_TRUE(fl.identified) << fl.note;
  if (!kSanitized) {
    EXPECT_NEAR(bw.value, 0.6, std::max(3 * bw.stderr_, 0.05 * 0.6));
    EXPECT_NEAR(fl.value, 0.45, std::max(3 * fl.stderr_, 0.05 * 0.45));
  }
  EXPECT_NEAR(bw.value, 0.6, bound * 0.6);
  EXPECT_NEAR(fl.value, 0.45, bound * 0.45);
  // The per-sequence host cost, from the decode steps at batch 1, 2, 4, 8 (0.35 ms apart).
  const twin::FittedParam& seq = Param(*r, "engine.seq_overhead");
  ASSERT_TRUE(seq.identified) << seq.note;
  EXPECT_NEAR(seq.value, 50e-6, std::max(3 * seq.stderr_, bound * 50e-6));

  // Held out: a Poisson run at 3 rps, hidden twin vs calibrated twin (virtual time).
  std::vector<std::string> calibrated;
  for (const twin::FittedParam& f : r->params) {
    if (f.identified && (f.key.starts_with("cost.") || f.key.starts_with("engine."))) {
      calibrated.push_back(f.key + "=" + std::to_string(f.value));
    }
  }
  twin::SimulationOptions sim;
  sim.duration_s = 60;
  auto truth = twin::RunSimulation(Card(), TwinFor(kHiddenBlind), sim);
  auto pred = twin::RunSimulation(Card(), TwinFor(calibrated), sim);
  ASSERT_TRUE(truth.ok() && pred.ok());
  const auto rel = [](double a, double b) { return std::abs(a - b) / b; };
  const double tpot = rel(pred->summary.tpot_ms.p50, truth->summary.tpot_ms.p50);
  const double e2e = rel(pred->summary.e2e_ms.p50, truth->summary.e2e_ms.p50);
  const double ttft99 = rel(pred->summary.ttft_ms.p99, truth->summary.ttft_ms.p99);
  std::printf("  held-out 3 rps: TPOT p50 %.2f%%, E2E p50 %.2f%%, TTFT p99 %.2f%% error\n", 100 * tpot, 100 * e2e,
              100 * ttft99);
  const double slack = kSanitized ? 3 : 1;
  EXPECT_LT(tpot, 0.05 * slack);
  EXPECT_LT(e2e, 0.05 * slack);
  EXPECT_LT(ttft99, 0.10 * slack);
}

// llama.cpp b4748's /props (testdata/llamacpp-b4748/props.txt, -np 8 -c 32768): n_ctx 4096 is
// one slot's context. The profile used to take it as the whole cache, 8x too small: the twin
// then ran out of KV at an eighth of the real load.
TEST(ProfileProps, KvCapacityIsOneSlotsContextTimesTheSlots) {
  client::testing::CapturedResponse cap = client::testing::LoadCapture("props.txt");
  const nlohmann::json props = nlohmann::json::parse(cap.body, nullptr, false);
  ASSERT_TRUE(props.is_object());
  EXPECT_EQ(KvCapacityFromProps(props), 32768);
  EXPECT_EQ(KvCapacityFromProps(nlohmann::json{{"default_generation_settings", {{"n_ctx", 2048}}}}), 2048);
  EXPECT_EQ(KvCapacityFromProps(nlohmann::json{{"total_slots", 4}}), std::nullopt);
  EXPECT_EQ(KvCapacityFromProps(nlohmann::json("not an object")), std::nullopt);
}

// A host stall that delays one event lengthens one gap and shortens the next: the step
// does not move, where (last - first) / (n - 1) would if the stalled event were the last. Events carrying several tokens fall back to the span over the usage count.
TEST(ProfileStep, TheMedianSlopeIgnoresStalledEvents) {
  const Nanos ms = kNanosPerMilli;
  std::vector<Nanos> t;
  for (int i = 0; i < 16; ++i) t.push_back(100 * ms + i * 10 * ms);
  EXPECT_DOUBLE_EQ(DecodeStepSeconds(t, 16), 0.010);
  t.back() += 30 * ms;  // the last event arrived 30 ms late
  EXPECT_DOUBLE_EQ(DecodeStepSeconds(t, 16), 0.010);
  t[7] += 8 * ms;  // and one in the middle 8 ms late
  EXPECT_DOUBLE_EQ(DecodeStepSeconds(t, 16), 0.010);
  // A server thread that gets the CPU in slices: every other event 8 ms late. The gaps
  // alternate 18 / 2 ms, so their median reads 18 ms (or 2); the repeated median of the
  // slopes between all events reads the step.
  std::vector<Nanos> sliced;
  for (int i = 0; i < 16; ++i) sliced.push_back(i * 10 * ms + (i % 2 ? 8 * ms : 0));
  EXPECT_NEAR(DecodeStepSeconds(sliced, 16), 0.010, 0.0005);
  // A 75 ms stall: events 3..9 held back and released together just before event 10.
  std::vector<Nanos> stalled;
  for (int i = 0; i < 16; ++i) stalled.push_back(i * 10 * ms);
  for (int i = 3; i < 10; ++i) stalled[i] = stalled[10] - (10 - i) * 1000;  // 1 us apart
  EXPECT_NEAR(DecodeStepSeconds(stalled, 16), 0.010, 0.0005);
  // 4 events for 16 tokens (speculative or batched streaming): the span, 180 ms / 15.
  const std::vector<Nanos> coarse = {0, 50 * ms, 100 * ms, 180 * ms};
  EXPECT_DOUBLE_EQ(DecodeStepSeconds(coarse, 16), 0.012);
  EXPECT_EQ(DecodeStepSeconds({0}, 1), 0);
  EXPECT_EQ(DecodeStepSeconds({}, 5), 0);
}

}  // namespace
}  // namespace infereng::job
