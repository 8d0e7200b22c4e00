#include "metrics/record.h"

namespace infereng::metrics {

int64_t RequestRecord::OutputTokens() const {
  if (completion_tokens >= 0) return completion_tokens;
  int64_t n = 0;
  for (const Chunk& c : chunks) n += c.tokens;
  return n;
}

}  // namespace infereng::metrics
