// Small string utilities shared across folders: edit distance and the one "did you mean"
// rule used by card keys, --set keys, catalog names and subcommands.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace infereng {

// `s` without leading and trailing spaces and tabs (the blanks of header values, flag
// values and spec items).
std::string_view TrimBlanks(std::string_view s);

// Levenshtein distance between a and b (insertions, deletions, substitutions cost 1).
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidate `text` most likely meant, or "" when none is close: the nearest by edit
// distance (case-insensitive) if that distance is at most 2 or at most a third of the
// text's length, else the first candidate that starts with `text` (3 or more characters: "h100" ->
// "h100-sxm").
std::string ClosestMatch(std::string_view text, const std::vector<std::string>& candidates);

// " (did you mean \"X\"?)" for ClosestMatch, or "" when there is no close candidate.
std::string DidYouMean(std::string_view text, const std::vector<std::string>& candidates);

}  // namespace infereng
