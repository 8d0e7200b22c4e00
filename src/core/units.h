// Units: parse and print the quantities people write in cards, catalogs and flags.
//
//   bytes      80GB (decimal, 1e9)  80GiB (binary, 2^30)  B KB MB GB TB PB  KiB MiB GiB TiB PiB
//   bandwidth  3.35TB/s  900GB/s  64GiB/s            -> bytes per second
//   compute    989TFLOPS  67GFLOPS  1.98PFLOPS  1979TOPS  -> (FL)OP per second
//   duration   500ns 250us 250ms 2s 30m 1h 1d          -> Nanos (also 30min, 2sec, 1.5hr)
//   rate       20rps  20/s  1200/min  72000/h  20req/s -> events per second
//   money      $2.50/h  $2.50/hour  $0.50/1M  $0.50/1Mtok  $40               -> USD + per-what
//
// Units are matched case-insensitively except that "m" means minutes and "M" in money
// means a million tokens. A space between number and unit is allowed. Plain numbers are
// rejected where a unit is required, unless the caller passes a default unit (e.g. a field
// named `ttft_ms` accepts `300` as 300ms). Errors are Status::InvalidArgument naming the
// text and the units expected; callers add "FILE:LINE: field:" context.
//
// Printing picks the largest unit that keeps the number >= 1 and prints at most three
// decimals with trailing zeros trimmed, so Format(Parse(x)) round-trips for typical values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace infereng::units {

// Bytes. Fractions are rounded to the nearest byte ("1.5KB" = 1500).
Result<int64_t> ParseBytes(std::string_view text);
// Bytes per second.
Result<double> ParseBandwidth(std::string_view text);
// FLOP per second ("989TFLOPS" = 9.89e14). "FLOP/s" is accepted as a spelling of FLOPS,
// and integer "TOPS" (ops/s) parse the same way ("1979TOPS" = 1.979e15).
Result<double> ParseFlops(std::string_view text);

// A duration. `default_unit` (e.g. "ms", "s") is applied to plain numbers; empty = a unit
// is required. Negative durations are rejected.
Result<Nanos> ParseDuration(std::string_view text, std::string_view default_unit = {});
// Same, in seconds (a double; for card fields stored as seconds).
Result<double> ParseDurationSeconds(std::string_view text, std::string_view default_unit = {});
// A duration that must be > 0 (a measurement window, a period): "0s" is refused as
// "expected a duration greater than zero, got \"0s\"", not as a badly written duration.
Result<double> ParsePositiveDurationSeconds(std::string_view text, std::string_view default_unit = {});

// Events per second. `default_unit` (e.g. "rps") is applied to plain numbers.
Result<double> ParseRate(std::string_view text, std::string_view default_unit = {});

struct Money {
  enum class Per { kNone, kHour, kMillionTokens };
  double usd = 0;
  Per per = Per::kNone;
};
Result<Money> ParseMoney(std::string_view text);

// A plain number (no unit). Trailing garbage is an error.
Result<double> ParseNumber(std::string_view text);

// Printing.
std::string FormatNumber(double v);                   // "2.5", "1200", "0.001"
// `digits` significant digits and never an exponent, for tables and sentences:
// 1234.6 -> "1235", 12.346 -> "12.35", 0.012346 -> "0.01235" (digits = 4).
std::string FormatSignificant(double v, int digits = 4);
std::string FormatBytes(int64_t bytes, bool binary = false);  // "80GB" / "74.506GiB"
std::string FormatBandwidth(double bytes_per_s);      // "3.35TB/s"
std::string FormatFlops(double flops);                // "989TFLOPS"
std::string FormatDuration(Nanos ns);                 // "250ms", "2s", "1.5h", "500us"
std::string FormatRate(double per_s);                 // "20rps"
std::string FormatMoney(const Money& m);              // "$2.50/h", "$0.50/1M"

}  // namespace infereng::units
