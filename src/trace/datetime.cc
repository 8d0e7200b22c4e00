// Civil date-time <-> epoch seconds (Howard Hinnant's days_from_civil), no locale, no tz db.
#include "trace/datetime.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace infereng::trace {
namespace {

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Reads exactly `n` digits at s[*pos]; false if any is not a digit.
bool Digits(std::string_view s, std::size_t* pos, int n, int* out) {
  if (*pos + static_cast<std::size_t>(n) > s.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = s[*pos + static_cast<std::size_t>(i)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<std::size_t>(n);
  *out = v;
  return true;
}

bool Expect(std::string_view s, std::size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

std::optional<double> ParseDateTime(std::string_view s) {
  std::size_t p = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  if (!Digits(s, &p, 4, &y) || !Expect(s, &p, '-') || !Digits(s, &p, 2, &mo) || !Expect(s, &p, '-') ||
      !Digits(s, &p, 2, &d)) {
    return std::nullopt;
  }
  if (p >= s.size() || (s[p] != ' ' && s[p] != 'T')) return std::nullopt;
  ++p;
  if (!Digits(s, &p, 2, &h) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &mi) || !Expect(s, &p, ':') ||
      !Digits(s, &p, 2, &se)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return std::nullopt;
  double frac = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    double scale = 0.1;
    const std::size_t start = p;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      frac += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
    }
    if (p == start) return std::nullopt;
  }
  int offset_s = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const int sign = s[p] == '-' ? -1 : 1;
    ++p;
    int oh = 0, om = 0;
    if (!Digits(s, &p, 2, &oh) || !Expect(s, &p, ':') || !Digits(s, &p, 2, &om)) return std::nullopt;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (p != s.size()) return std::nullopt;
  const int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - offset_s;
  return static_cast<double>(secs) + frac;
}

std::string FormatDateTime(double epoch_s) {
  const auto secs = static_cast<int64_t>(std::floor(epoch_s));
  int64_t z = (secs >= 0 ? secs : secs - 86399) / 86400;
  const int64_t sod = secs - z * 86400;
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u %02lld:%02lld:%02lld", static_cast<long long>(y), m, d,
                static_cast<long long>(sod / 3600), static_cast<long long>(sod / 60 % 60),
                static_cast<long long>(sod % 60));
  return buf;
}

}  // namespace infereng::trace
