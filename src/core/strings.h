// Small string utilities shared across folders ("did you mean" suggestions).
#pragma once

#include <cstddef>
#include <string_view>

namespace infereng {

// Levenshtein distance between a and b (insertions, deletions, substitutions cost 1).
std::size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace infereng
