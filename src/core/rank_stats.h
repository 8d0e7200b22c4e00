// The Mann-Whitney U test (Wilcoxon rank-sum): does sample X tend to be smaller than Y?
// Distribution-free, so it suits latencies (skewed, heavy-tailed) where a t-test's
// normality does not hold. Used by `infereng probe`'s cache-isolation probe: X = TTFTs of
// the true secret prefix, Y = TTFTs of decoys; a shared cache makes X smaller.
//
// Ranks with ties get their average rank; the p-value is the one-sided normal approximation
// with the tie-corrected variance and a continuity correction (accurate from ~8 per
// group). Effect size: the probability of superiority P(X < Y) + 0.5 P(X = Y), i.e.
// U / (n_x n_y) (0.5 = no effect, 1 = every X below every Y). Power: the chance the test
// at level alpha detects a true probability of superiority `effect` at these sample
// sizes (Noether's approximation). Pure functions.
#pragma once

#include <cstdint>
#include <span>

namespace infereng::stats {

struct RankTestResult {
  int64_t n_x = 0, n_y = 0;
  double u = 0;                  // U of X: pairs (x, y) with x < y, ties counting 1/2
  double superiority = 0.5;      // U / (n_x n_y): P(X < Y)
  double z = 0;                  // standardised U (positive: X tends to be smaller)
  double p_value = 1;            // one-sided, H1: X tends to be smaller than Y
};

// Empty result (p = 1) when either sample is empty.
RankTestResult MannWhitneyLess(std::span<const double> x, std::span<const double> y);

// Power of the one-sided test at level `alpha` to detect a probability of superiority
// `effect` (> 0.5) with n_x and n_y samples.
double MannWhitneyPower(int64_t n_x, int64_t n_y, double effect, double alpha);

// The Wilcoxon signed-rank test on paired differences d (B - A per pair): is their
// distribution centred on 0? Zero differences are dropped (Wilcoxon's convention), ranks of
// |d| averaged over ties; the two-sided p-value is the normal approximation with the
// tie-corrected variance and a continuity correction (accurate from ~10 non-zero pairs).
// Used by canary's paired statistics (job/canary_paired.h).
struct SignedRankResult {
  int64_t n = 0;        // non-zero differences
  double w_plus = 0;    // sum of the ranks of the positive differences
  double z = 0;         // standardised W+ (positive: B tends to be larger)
  double p_value = 1;   // two-sided
};
SignedRankResult WilcoxonSignedRank(std::span<const double> d);

// Standard normal CDF and its inverse (|error| < 1e-9 over (1e-12, 1 - 1e-12)).
double NormalCdf(double z);
double NormalQuantile(double p);

}  // namespace infereng::stats
