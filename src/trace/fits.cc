// Numerical routines behind the trace fits (Numerical Recipes' gammp/gcf/gser forms).
#include "trace/fits.h"

#include <algorithm>
#include <cmath>

namespace infereng::trace {

double RegularizedGammaP(double a, double x) {
  if (!(x > 0) || !(a > 0)) return 0;
  const double log_front = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
    }
    return std::min(1.0, sum * std::exp(log_front));
  }
  // Lentz's continued fraction for Q(a, x).
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return std::max(0.0, 1 - std::exp(log_front) * h);
}

double GammaCdf(double shape, double scale, double x) { return RegularizedGammaP(shape, x / scale); }

double GammaQuantile(double shape, double scale, double p) {
  double lo = 0, hi = shape * scale;
  while (GammaCdf(shape, scale, hi) < p && hi < 1e300) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (GammaCdf(shape, scale, mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double LognormalCdf(double mu, double sigma, double x) {
  if (!(x > 0)) return 0;
  if (!(sigma > 0)) return std::log(x) >= mu ? 1 : 0;
  return 0.5 * std::erfc(-(std::log(x) - mu) / (sigma * std::sqrt(2.0)));
}

double NormalQuantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  const double lo = 0.02425;
  if (p < lo) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - lo) return -NormalQuantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double KsDistance(std::span<const double> sorted, const std::function<double(double)>& cdf) {
  const auto n = static_cast<double>(sorted.size());
  double d = 0;
  std::size_t i = 0;
  while (i < sorted.size()) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[i]) ++j;
    const double f = cdf(sorted[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(j + 1) / n - f});
    i = j + 1;
  }
  return d;
}

}  // namespace infereng::trace
