// ParseDateTime: the absolute times request logs write, as seconds since the Unix epoch.
// Accepts "YYYY-MM-DD HH:MM:SS[.fraction]" with a space or a 'T', any number of fraction
// digits (Azure writes 7), and an optional "Z" or "+HH:MM"/"-HH:MM" offset; a time without
// an offset is taken as UTC (only differences matter to the statistics, and the period
// printed for the card says which zone it assumed).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace infereng::trace {

std::optional<double> ParseDateTime(std::string_view text);

// Seconds since the epoch back to "YYYY-MM-DD HH:MM:SS" (UTC), for the period of a trace.
std::string FormatDateTime(double epoch_s);

}  // namespace infereng::trace
