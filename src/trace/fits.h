// Distribution fits for trace statistics: CDFs of the exponential, gamma and lognormal
// distributions, the gamma quantile, and the Kolmogorov-Smirnov distance of a sorted
// sample from a CDF. Pure functions.
#pragma once

#include <functional>
#include <span>

namespace infereng::trace {

// Regularized lower incomplete gamma P(a, x) (series below a+1, continued fraction above).
double RegularizedGammaP(double a, double x);
double GammaCdf(double shape, double scale, double x);
double GammaQuantile(double shape, double scale, double p);  // by bisection on the CDF
double LognormalCdf(double mu, double sigma, double x);
double NormalQuantile(double p);  // Acklam's rational approximation (|error| < 1.2e-9)

// sup |F_n(x) - F(x)| over a sample sorted ascending (ties handled: the empirical CDF jumps
// by the whole tie group at its value).
double KsDistance(std::span<const double> sorted, const std::function<double(double)>& cdf);

}  // namespace infereng::trace
