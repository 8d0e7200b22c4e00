// Checked conversions from a parsed double (JSON number, card value, flag) to an integer.
//
// Why: `static_cast<int64_t>(d)` is undefined behaviour when d is NaN, infinite or outside
// [-2^63, 2^63) -- a JSON body with "max_tokens": 18446744073709551616 reached such a cast
// (UBSan: "1.84467e+19 is outside the range of representable values of type 'long'"), and
// std::llround of such a value returns an unspecified number. Every place that turns a
// parsed double into an integer goes through these helpers and reports its own error
// (naming the field) when they return nullopt. Pure functions; no allocation.
#pragma once

#include <cstdint>
#include <optional>

namespace infereng {

// d when it is a whole number in int64_t's range; nullopt for fractions, NaN, +-inf and
// values outside [-2^63, 2^63). (Note 2^63 itself, the double nearest INT64_MAX, is out.)
std::optional<int64_t> DoubleToInt64(double d);

// d rounded to the nearest integer (halves away from zero, like std::llround) when the
// result is in int64_t's range; nullopt for NaN, +-inf and out-of-range values.
std::optional<int64_t> RoundToInt64(double d);

// v when lo <= v <= hi, else nullopt: the range check before narrowing an int64_t to a
// smaller field (int32_t token counts, int flags).
std::optional<int64_t> InRange(std::optional<int64_t> v, int64_t lo, int64_t hi);

}  // namespace infereng
