// MeasuredCostModel: the twin's CostModel from a measured step-time table (a profile of a
// live engine, `infereng profile`), instead of the roofline's FLOPs and bytes.
//
// The table is two piecewise-linear curves, added:
//   step(n, c) = tokens(n) + context(c)
// n = new tokens the step computes (prefill tokens + decode sequences x tokens per
// sequence), c = KV context the step's attention reads (prefill + decode context).
// tokens(n) is measured at (almost) no context held: decode steps at batch 1..B and batch-1
// prefills of growing prompts; context(c) is the extra time of a step whose sequences hold
// c tokens (0 at c = 0), measured from decode steps over long prompts. Additive, because a
// CPU engine's context term (llama.cpp attends over every occupied KV cell) and a GPU's
// (KV bytes read) both grow with what is held, independently of the batch's matmul time.
//
// Interpolation: linear in value space between measured points (a step's time is affine in
// tokens within a regime, so straight segments between measurements do not bend it).
// Outside the measured range: extended with the end segment's slope, never decreasing
// below the end value (a longer step is never faster), and counted as extrapolated
// (ExtrapolatedSteps) so a prediction can say it left the measured range.
//
// Prompts batched together (issue 13, llama.cpp held-out runs): tokens(n) was measured from
// batch-1 prefills, so it holds the causal attention of ONE prompt of n tokens (n^2 / 2
// query-key pairs). A step of several chunks attends far fewer pairs (four 256-token prompts:
// 4 x 256^2 / 2, a quarter of one 1,024-token prompt's). The model fits the curve's
// attention rate g (seconds per pair) by least squares, tokens(n) ~ a + b n + g n^2 / 2, and
// when g > 0 prices a step by its own pairs (StepShape::prefill_attn_pairs, held context
// included):
//   step(n, pairs, c_dec) = tokens(n) + g (pairs - n_prefill^2 / 2) + context(c_dec)
// never below the fitted linear part a + b n. A batch-1 prefill of a fresh prompt is priced
// exactly as measured; its held prefix is priced per pair (one chunk of p over h cached:
// + g p h) instead of by the decode-read context curve. Without a fitted g (fewer than three
// points, or no curvature) the two curves price as above.
//
// Optional, for engines whose step time depends on the KV cells held rather than on the
// context the batch reads (llama.cpp: attention over every occupied cell of its unified
// cache, idle slots' cached prompts included): an occupancy table, the step time over
// (batch tokens n, KV occupancy o). When present it prices every step alone:
//   step = occupancy(n, o)
// with o = the step's kv_occupied_tokens, or, from an engine that does not report one (the
// paged engine), its own context + new tokens. The grid is measured with one decoding
// sequence per step (a decode column and prompt columns); a step of d > 1 decoding sequences
// is the grid at its tokens less the d - 1 extra decodes, plus tokens(d) - tokens(1) of the
// curve, which holds the measured decode batches (session 18: on llama.cpp b11669 CPU, 4
// decoding sequences took 9.2 ms where the grid read 4 tokens as 3.8 ms). Bilinear between grid points; outside the
// grid, along each axis, the end segment's slope (clamped at >= 0, so more tokens or more
// occupancy never price a step lower), counted in ExtrapolatedSteps like the curves.
//
// Thread-safety: immutable after construction except the extrapolation counter (atomic);
// StepSeconds is const and may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "twin/cost_model.h"

namespace infereng::twin {

// y(x) through sorted points. Invariant: x strictly increasing, at least one point.
struct PiecewiseLinear {
  std::vector<double> x;
  std::vector<double> y;

  // Linear between points; beyond the ends, the end segment's slope (>= 0 only: the curve
  // never falls outside the range); `*extrapolated` set when x is outside [x.front, x.back].
  double At(double at, bool* extrapolated = nullptr) const;
  // InvalidArgument naming `what` and the point when x is not strictly increasing, a value
  // is not finite, or y < 0.
  Status Validate(const std::string& what) const;
};

// Linear through (x[i], y[i]) with PiecewiseLinear's rule outside; x strictly increasing.
double InterpolateLinear(std::span<const double> x, std::span<const double> y, double at, bool* extrapolated);

// seconds[i][j]: the step time at kv_occupied[i] cells held and batch_tokens[j] new tokens.
struct OccupancyTable {
  std::vector<double> batch_tokens{};          // strictly increasing, >= 0
  std::vector<double> kv_occupied{};           // strictly increasing, >= 0
  std::vector<std::vector<double>> seconds{};  // one row per kv_occupied value

  bool empty() const { return seconds.empty(); }
  double At(double tokens, double occupied, bool* extrapolated = nullptr) const;
  // InvalidArgument naming `what` and the first bad entry ("table.occupancy.seconds[1][2]").
  Status Validate(const std::string& what) const;
};

struct MeasuredTable {
  PiecewiseLinear tokens;   // seconds vs new tokens in the step, at no context held
  PiecewiseLinear context;  // extra seconds vs context tokens read (first point (0, 0))
  OccupancyTable occupancy{};  // empty: not measured (the curves price every step)
  double front_end_s = 0;   // per request before its first step (HTTP, tokenising); not a
                            // step cost: the profile records it for the twin's front end
};

// The table's step time for n new tokens, c context tokens read, o cells occupied
// (o = 0: the engine reports none; c + n stands in). `*extrapolated` as PiecewiseLinear::At.
double TableStepSeconds(const MeasuredTable& t, double n, double c, double o, bool* extrapolated = nullptr);

// The least-squares fit y ~ a + b x + g x^2 / 2 through the curve's points; g <= 0 (or
// fewer than three distinct points) leaves `ok` false: no curvature to attribute to attention.
struct PrefillAttentionFit {
  bool ok = false;
  double a = 0, b = 0, g = 0;  // seconds, seconds per token, seconds per (query, key) pair
};
PrefillAttentionFit FitPrefillAttention(const PiecewiseLinear& tokens);

class MeasuredCostModel final : public CostModel {
 public:
  explicit MeasuredCostModel(MeasuredTable table);
  double StepSeconds(const StepShape& s) const override;
  const MeasuredTable& table() const { return t_; }
  const PrefillAttentionFit& attention() const { return attention_; }
  // Steps priced outside the measured range so far (tokens or context).
  int64_t ExtrapolatedSteps() const { return extrapolated_.load(std::memory_order_relaxed); }

 private:
  MeasuredTable t_;
  PrefillAttentionFit attention_;
  mutable std::atomic<int64_t> extrapolated_{0};
};

}  // namespace infereng::twin
