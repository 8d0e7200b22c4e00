#include "report/axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace infereng::report {
namespace {

double NiceStep(double raw) {
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / mag;
  double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * mag;
}

std::string TrimZeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(decimals, 0, 9), v);
  std::string s = TrimZeros(buf);
  return s == "-0" ? "0" : s;
}

}  // namespace

Ticks NiceLinearTicks(Range data, int target) {
  double lo = data.lo, hi = data.hi;
  if (!std::isfinite(lo) || !std::isfinite(hi)) { lo = 0; hi = 1; }
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= std::abs(hi) * 1e-12) {  // degenerate: widen around the value
    double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
    if (data.lo >= 0 && lo < 0) lo = 0;
  }
  target = std::max(target, 1);
  double step = NiceStep((hi - lo) / target);
  Ticks t;
  t.step = step;
  double first = std::floor(lo / step + 1e-9) * step;
  double last = std::ceil(hi / step - 1e-9) * step;
  t.range = {first, last};
  for (int i = 0; first + i * step <= last + step * 1e-6 && i < 100; ++i) {
    double v = first + i * step;
    if (std::abs(v) < step * 1e-9) v = 0;
    t.values.push_back(v);
  }
  return t;
}

Ticks NiceLogTicks(Range data) {
  double lo = data.lo, hi = data.hi;
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi > 0) || !std::isfinite(hi)) hi = lo * 10;
  if (lo > hi) std::swap(lo, hi);
  int e_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int e_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (e_hi <= e_lo) e_hi = e_lo + 1;
  Ticks t;
  t.step = 0;
  bool fine = e_hi - e_lo <= 2;
  for (int e = e_lo; e <= e_hi; ++e) {
    double d = std::pow(10.0, e);
    t.values.push_back(d);
    if (fine && e < e_hi) {
      t.values.push_back(2 * d);
      t.values.push_back(5 * d);
    }
  }
  // Trim to the ticks that bracket the data, keeping one tick at or below lo and at or above hi.
  auto first = std::upper_bound(t.values.begin(), t.values.end(), lo * (1 + 1e-9));
  if (first != t.values.begin()) --first;
  auto last = std::lower_bound(t.values.begin(), t.values.end(), hi * (1 - 1e-9));
  if (last == t.values.end()) --last;
  t.values = std::vector<double>(first, last + 1);
  if (t.values.size() < 2) t.values.push_back(t.values.back() * 10);
  t.range = {t.values.front(), t.values.back()};
  return t;
}

Scale::Scale(Range range, bool log, double length) : length_(length), log_(log) {
  lo_ = log ? std::log10(std::max(range.lo, 1e-300)) : range.lo;
  hi_ = log ? std::log10(std::max(range.hi, 1e-300)) : range.hi;
  if (hi_ - lo_ <= 0) hi_ = lo_ + 1;
}

double Scale::operator()(double v) const {
  double x = log_ ? std::log10(std::max(v, 1e-300)) : v;
  return (x - lo_) / (hi_ - lo_) * length_;
}

std::string FormatTick(double v, double step) {
  if (!std::isfinite(v)) return "-";
  double a = std::abs(v);
  if (step <= 0) step = a > 0 ? std::pow(10.0, std::floor(std::log10(a))) : 1;
  if (a >= 1e6) return Fixed(v / 1e6, std::max(0, -static_cast<int>(std::floor(std::log10(step / 1e6))))) + "M";
  if (a >= 1e4) return Fixed(v / 1e3, std::max(0, -static_cast<int>(std::floor(std::log10(step / 1e3))))) + "k";
  int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  if (step * std::pow(10.0, decimals) != std::floor(step * std::pow(10.0, decimals))) ++decimals;  // 2.5
  return Fixed(v, decimals);
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "-" : (v > 0 ? "inf" : "-inf");
  double a = std::abs(v);
  if (a == 0) return "0";
  if (a >= 1000) return Fixed(v, 0);
  int decimals = 2 - static_cast<int>(std::floor(std::log10(a)));
  return Fixed(v, decimals);
}

}  // namespace infereng::report
