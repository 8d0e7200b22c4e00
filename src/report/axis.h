// Chart axes: "nice" tick positions, linear and log scales, and tick label text.
//
// Pure functions over doubles, no drawing: svg_chart.cc places what these return. Ranges
// are widened when degenerate (min == max, or no finite data) so callers never divide by
// zero; log scales ignore non-positive values.
#pragma once

#include <string>
#include <vector>

namespace infereng::report {

struct Range {
  double lo = 0;
  double hi = 1;
};

// Ticks at 1, 2, 2.5 or 5 × 10^k covering [lo, hi] with about `target` intervals. The
// returned range is widened outward to the first and last tick.
struct Ticks {
  Range range;
  std::vector<double> values;
  double step = 1;  // linear: the interval; log: 0
};
Ticks NiceLinearTicks(Range data, int target = 5);

// Decades (and 2, 5 × 10^k when the data spans less than two decades) covering [lo, hi];
// lo and hi must be > 0 (callers filter). The range is widened to whole ticks.
Ticks NiceLogTicks(Range data);

// Maps a value to a pixel offset in [0, length] (y axes flip at the caller).
class Scale {
 public:
  Scale(Range range, bool log, double length);
  double operator()(double v) const;
  bool log() const { return log_; }

 private:
  double lo_, hi_, length_;
  bool log_;
};

// Text of a tick value: as many decimals as the step needs, k/M suffixes for large values
// ("12k", "1.5M"), no trailing zeros. step 0 means "pick from the value" (log axes).
std::string FormatTick(double v, double step);

// Short number for labels and tables: 3 significant digits ("0.123", "12.3", "1234").
std::string FormatNumber(double v);

}  // namespace infereng::report
