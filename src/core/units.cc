// Parsing and printing of quantities with units (see units.h for the accepted spellings).
#include "core/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/numeric.h"
#include "core/strings.h"

namespace infereng::units {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// Splits "3.35TB/s" into 3.35 and "TB/s" (unit trimmed). Fails if there is no number.
struct Split {
  double number = 0;
  std::string_view unit;
};
std::optional<Split> SplitNumber(std::string_view text) {
  text = TrimBlanks(text);
  if (text.empty()) return std::nullopt;
  double v = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr == begin || !std::isfinite(v)) return std::nullopt;
  return Split{v, TrimBlanks(std::string_view(ptr, static_cast<std::size_t>(end - ptr)))};
}

Status Bad(std::string_view text, std::string_view expected) {
  return Status::InvalidArgument("expected " + std::string(expected) + ", got \"" + std::string(text) + "\"");
}

struct UnitScale {
  std::string_view name;  // lower case
  double scale;
};

std::optional<double> Lookup(std::string_view unit, const UnitScale* table, std::size_t n) {
  const std::string u = Lower(unit);
  for (std::size_t i = 0; i < n; ++i) {
    if (table[i].name == u) return table[i].scale;
  }
  return std::nullopt;
}

constexpr UnitScale kByteUnits[] = {
    {"b", 1},          {"byte", 1},       {"bytes", 1},
    {"kb", 1e3},       {"mb", 1e6},       {"gb", 1e9},       {"tb", 1e12},   {"pb", 1e15},
    {"kib", 0x1p10},   {"mib", 0x1p20},   {"gib", 0x1p30},   {"tib", 0x1p40}, {"pib", 0x1p50},
};

constexpr UnitScale kDurationUnits[] = {
    {"ns", 1},           {"us", 1e3},         {"µs", 1e3},         {"ms", 1e6},
    {"s", 1e9},          {"sec", 1e9},        {"secs", 1e9},       {"second", 1e9},   {"seconds", 1e9},
    {"m", 60e9},         {"min", 60e9},       {"mins", 60e9},      {"minute", 60e9},  {"minutes", 60e9},
    {"h", 3600e9},       {"hr", 3600e9},      {"hrs", 3600e9},     {"hour", 3600e9},  {"hours", 3600e9},
    {"d", 86400e9},      {"day", 86400e9},    {"days", 86400e9},
};

// Per-second multipliers for "/<unit>" in rates.
constexpr UnitScale kPerUnits[] = {
    {"s", 1},       {"sec", 1},       {"second", 1},
    {"min", 1.0 / 60}, {"m", 1.0 / 60}, {"minute", 1.0 / 60},
    {"h", 1.0 / 3600}, {"hr", 1.0 / 3600}, {"hour", 1.0 / 3600},
    {"d", 1.0 / 86400}, {"day", 1.0 / 86400},
};

constexpr std::string_view kBytesExpected = "a size like 80GB, 80GiB, 512MiB or 1024B";
constexpr std::string_view kDurationExpected = "a duration like 250ms, 2s, 500us, 30m or 1h";
constexpr std::string_view kRateExpected = "a rate like 20rps, 20/s or 1200/min";

// Formats with up to `decimals` decimals, trailing zeros trimmed.
std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// Picks the largest unit with |v| >= scale; prints v/scale.
std::string Scaled(double v, const std::pair<double, std::string_view>* units, std::size_t n) {
  for (std::size_t i = n; i-- > 0;) {
    if (std::fabs(v) >= units[i].first || i == 0) {
      return FormatNumber(v / units[i].first) + std::string(units[i].second);
    }
  }
  return FormatNumber(v);
}

}  // namespace

Result<double> ParseNumber(std::string_view text) {
  auto split = SplitNumber(text);
  if (!split || !split->unit.empty()) return Bad(text, "a number");
  return split->number;
}

Result<int64_t> ParseBytes(std::string_view text) {
  auto split = SplitNumber(text);
  if (!split) return Bad(text, kBytesExpected);
  if (split->unit.empty()) return Bad(text, std::string(kBytesExpected) + " (a unit is required)");
  auto scale = Lookup(split->unit, kByteUnits, std::size(kByteUnits));
  if (!scale) return Bad(text, kBytesExpected);
  const double bytes = split->number * *scale;
  if (bytes < 0) return Bad(text, std::string(kBytesExpected) + " (non-negative)");
  const std::optional<int64_t> rounded = bytes > 9.0e18 ? std::nullopt : RoundToInt64(bytes);
  if (!rounded) return Bad(text, "a size below 9EB");
  return *rounded;
}

Result<double> ParseBandwidth(std::string_view text) {
  constexpr std::string_view kExpected = "a bandwidth like 3.35TB/s or 900GB/s";
  auto split = SplitNumber(text);
  if (!split) return Bad(text, kExpected);
  std::string unit = Lower(split->unit);
  std::string_view u = unit;
  if (u.ends_with("/s")) {
    u.remove_suffix(2);
  } else if (u.ends_with("ps") && u.size() > 2) {  // GBps
    u.remove_suffix(2);
    unit = std::string(u) + "b";
    u = unit;
  } else {
    return Bad(text, kExpected);
  }
  auto scale = Lookup(TrimBlanks(u), kByteUnits, std::size(kByteUnits));
  if (!scale || split->number < 0) return Bad(text, kExpected);
  return split->number * *scale;
}

Result<double> ParseFlops(std::string_view text) {
  constexpr std::string_view kExpected = "compute like 989TFLOPS, 67GFLOPS, 1.98PFLOPS or 1979TOPS";
  constexpr UnitScale kPrefixes[] = {{"", 1}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"p", 1e15}, {"e", 1e18}};
  auto split = SplitNumber(text);
  if (!split) return Bad(text, kExpected);
  std::string unit = Lower(split->unit);
  std::string_view u = unit;
  if (u.ends_with("flops")) {
    u.remove_suffix(5);
  } else if (u.ends_with("flop/s")) {
    u.remove_suffix(6);
  } else if (u.ends_with("ops")) {  // integer ops ("1979TOPS") are counted like FLOPS
    u.remove_suffix(3);
  } else {
    return Bad(text, kExpected);
  }
  auto scale = Lookup(TrimBlanks(u), kPrefixes, std::size(kPrefixes));
  if (!scale || split->number < 0) return Bad(text, kExpected);
  return split->number * *scale;
}

Result<Nanos> ParseDuration(std::string_view text, std::string_view default_unit) {
  auto split = SplitNumber(text);
  if (!split) return Bad(text, kDurationExpected);
  std::string_view unit = split->unit.empty() ? default_unit : split->unit;
  if (unit.empty()) return Bad(text, std::string(kDurationExpected) + " (a unit is required)");
  auto scale = Lookup(unit, kDurationUnits, std::size(kDurationUnits));
  // "M" (capital) is never minutes in a duration: too easily read as months or mega.
  if (!scale || unit == "M") return Bad(text, kDurationExpected);
  if (split->number < 0) return Bad(text, std::string(kDurationExpected) + " (non-negative)");
  const double ns = split->number * *scale;
  const std::optional<int64_t> rounded = ns > 9.0e18 ? std::nullopt : RoundToInt64(ns);
  if (!rounded) return Bad(text, "a duration below ~285 years");
  return Nanos{*rounded};
}

Result<double> ParseDurationSeconds(std::string_view text, std::string_view default_unit) {
  INFERENG_ASSIGN_OR_RETURN(Nanos ns, ParseDuration(text, default_unit));
  return NanosToSeconds(ns);
}

Result<double> ParsePositiveDurationSeconds(std::string_view text, std::string_view default_unit) {
  INFERENG_ASSIGN_OR_RETURN(double s, ParseDurationSeconds(text, default_unit));
  if (!(s > 0)) return Bad(text, "a duration greater than zero");
  return s;
}

Result<double> ParseRate(std::string_view text, std::string_view default_unit) {
  auto split = SplitNumber(text);
  if (!split) return Bad(text, kRateExpected);
  std::string unit = Lower(split->unit.empty() ? default_unit : split->unit);
  if (unit.empty()) return Bad(text, std::string(kRateExpected) + " (a unit is required)");
  double per_s = 0;
  if (unit == "rps" || unit == "qps" || unit == "hz") {
    per_s = 1;
  } else if (unit == "rpm") {
    per_s = 1.0 / 60;
  } else if (unit == "rph") {
    per_s = 1.0 / 3600;
  } else if (auto slash = unit.find('/'); slash != std::string::npos) {
    std::string_view what = TrimBlanks(std::string_view(unit).substr(0, slash));
    if (!(what.empty() || what == "req" || what == "reqs" || what == "request" || what == "requests" ||
          what == "r" || what == "q")) {
      return Bad(text, kRateExpected);
    }
    auto per = Lookup(TrimBlanks(std::string_view(unit).substr(slash + 1)), kPerUnits, std::size(kPerUnits));
    if (!per) return Bad(text, kRateExpected);
    per_s = *per;
  } else {
    return Bad(text, kRateExpected);
  }
  if (split->number < 0) return Bad(text, std::string(kRateExpected) + " (non-negative)");
  return split->number * per_s;
}

Result<Money> ParseMoney(std::string_view text) {
  constexpr std::string_view kExpected = "money like $2.50/h, $2.50/hour, $0.50/1M (tokens) or $40";
  std::string_view t = TrimBlanks(text);
  if (t.empty() || t.front() != '$') return Bad(text, kExpected);
  t.remove_prefix(1);
  auto split = SplitNumber(t);
  if (!split || split->number < 0) return Bad(text, kExpected);
  Money m;
  m.usd = split->number;
  std::string unit = Lower(split->unit);
  if (unit.empty()) return m;
  if (unit.front() != '/') return Bad(text, kExpected);
  std::string_view per = TrimBlanks(std::string_view(unit).substr(1));
  if (per == "h" || per == "hr" || per == "hour") {
    m.per = Money::Per::kHour;
  } else if (per == "1m" || per == "m" || per == "1m tokens" || per == "1mtok" || per == "mtok" ||
             per == "1m tok" || per == "million tokens" || per == "1m tokens") {
    m.per = Money::Per::kMillionTokens;
  } else {
    return Bad(text, kExpected);
  }
  return m;
}

std::string FormatNumber(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e15)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  return Fixed(v, a >= 100 ? 1 : 3);
}

std::string FormatSignificant(double v, int digits) {
  if (!std::isfinite(v)) return FormatNumber(v);
  if (v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return Fixed(v, std::clamp(digits - 1 - magnitude, 0, 12));
}

std::string FormatBytes(int64_t bytes, bool binary) {
  static constexpr std::pair<double, std::string_view> kDec[] = {
      {1, "B"}, {1e3, "KB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}};
  static constexpr std::pair<double, std::string_view> kBin[] = {
      {1, "B"}, {0x1p10, "KiB"}, {0x1p20, "MiB"}, {0x1p30, "GiB"}, {0x1p40, "TiB"}, {0x1p50, "PiB"}};
  return binary ? Scaled(static_cast<double>(bytes), kBin, std::size(kBin))
                : Scaled(static_cast<double>(bytes), kDec, std::size(kDec));
}

std::string FormatBandwidth(double bytes_per_s) {
  static constexpr std::pair<double, std::string_view> kDec[] = {
      {1, "B/s"}, {1e3, "KB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}, {1e15, "PB/s"}};
  return Scaled(bytes_per_s, kDec, std::size(kDec));
}

std::string FormatFlops(double flops) {
  static constexpr std::pair<double, std::string_view> kDec[] = {
      {1, "FLOPS"}, {1e3, "KFLOPS"}, {1e6, "MFLOPS"}, {1e9, "GFLOPS"}, {1e12, "TFLOPS"}, {1e15, "PFLOPS"}, {1e18, "EFLOPS"}};
  return Scaled(flops, kDec, std::size(kDec));
}

std::string FormatDuration(Nanos ns) {
  static constexpr std::pair<double, std::string_view> kUnits[] = {
      {1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}, {60e9, "m"}, {3600e9, "h"}};
  return Scaled(static_cast<double>(ns), kUnits, std::size(kUnits));
}

std::string FormatRate(double per_s) { return FormatNumber(per_s) + "rps"; }

std::string FormatMoney(const Money& m) {
  std::string s = "$" + Fixed(m.usd, m.usd != 0 && m.usd < 0.01 ? 6 : 2);
  // Keep two decimals for cents ("$2.50"), trim beyond.
  if (auto dot = s.find('.'); dot != std::string::npos && s.size() - dot == 2) s += "0";
  if (s.find('.') == std::string::npos && m.usd < 1e6) s += ".00";
  switch (m.per) {
    case Money::Per::kNone: break;
    case Money::Per::kHour: s += "/h"; break;
    case Money::Per::kMillionTokens: s += "/1M"; break;
  }
  return s;
}

}  // namespace infereng::units
