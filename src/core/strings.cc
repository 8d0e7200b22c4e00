#include "core/strings.h"

#include <algorithm>
#include <vector>

namespace infereng {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

}  // namespace

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string ClosestMatch(std::string_view text, const std::vector<std::string>& candidates) {
  if (text.empty()) return "";
  const std::string t = Lower(text);
  const std::string* best = nullptr;
  std::size_t best_d = 0;
  for (const std::string& c : candidates) {
    const std::size_t d = EditDistance(t, Lower(c));
    if (best == nullptr || d < best_d) {
      best = &c;
      best_d = d;
    }
  }
  if (best != nullptr && (best_d <= 2 || best_d * 3 <= t.size())) return *best;
  for (const std::string& c : candidates) {
    if (t.size() >= 3 && c.size() > t.size() && Lower(c).starts_with(t)) return c;
  }
  return "";
}

std::string DidYouMean(std::string_view text, const std::vector<std::string>& candidates) {
  const std::string m = ClosestMatch(text, candidates);
  return m.empty() ? "" : " (did you mean \"" + m + "\"?)";
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace infereng
