#include "metrics/reasoning.h"

#include <algorithm>

namespace infereng::metrics {

int64_t MarkReasoning(std::vector<Chunk>& chunks, int64_t reasoning_tokens) {
  int64_t marked = 0;
  for (size_t i = 0; i < chunks.size() && marked < reasoning_tokens; ++i) {
    Chunk& c = chunks[i];
    const int64_t left = reasoning_tokens - marked;
    if (c.tokens > left) {  // straddles the end of the reasoning: split it
      Chunk answer{.t = c.t, .tokens = static_cast<int32_t>(c.tokens - left), .reasoning = false};
      c.tokens = static_cast<int32_t>(left);
      chunks.insert(chunks.begin() + static_cast<std::ptrdiff_t>(i) + 1, answer);
    }
    chunks[i].reasoning = true;
    marked += chunks[i].tokens;
  }
  return marked;
}

}  // namespace infereng::metrics
