#include "serve/text_model.h"

#include <array>

namespace infereng::serve {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

uint32_t WordId(std::string_view w) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : w) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return static_cast<uint32_t>(Mix64(h) % kVocabSize);
}

constexpr int kWords = 256;

// Vocabulary built once: consonant-vowel syllables, 1-3 syllables per word; entry 0..255
// without a leading space, 256..511 with one.
struct Vocab {
  std::array<std::string, 2 * kWords> words;
  Vocab() {
    static constexpr char kCons[] = "bdfgklmnprstvz";
    static constexpr char kVow[] = "aeiou";
    for (int i = 0; i < kWords; ++i) {
      uint64_t h = Mix64(static_cast<uint64_t>(i) + 7);
      int syll = 1 + static_cast<int>(h % 3);
      std::string w;
      for (int s = 0; s < syll; ++s) {
        h = Mix64(h);
        w += kCons[h % 14];
        w += kVow[(h >> 8) % 5];
      }
      words[i] = w;
      words[kWords + i] = " " + w;
    }
  }
};

const Vocab& GetVocab() {
  static const Vocab v;
  return v;
}

}  // namespace

void TokenizeAppend(std::string_view text, std::vector<uint32_t>& ids) {
  std::size_t i = 0, n = text.size();
  while (i < n) {
    while (i < n && IsSpace(text[i])) ++i;
    std::size_t start = i;
    while (i < n && !IsSpace(text[i])) ++i;
    if (i > start) ids.push_back(WordId(text.substr(start, i - start)));
  }
}

int64_t CountTokens(std::string_view text) {
  int64_t count = 0;
  bool in_word = false;
  for (char c : text) {
    bool sp = IsSpace(c);
    if (!sp && !in_word) ++count;
    in_word = !sp;
  }
  return count;
}

std::vector<uint64_t> BlockHashes(const std::vector<uint32_t>& ids, int32_t block_tokens) {
  std::vector<uint64_t> out;
  if (block_tokens <= 0) return out;
  std::size_t blocks = ids.size() / static_cast<std::size_t>(block_tokens);
  out.reserve(blocks);
  uint64_t h = 0x2545f4914f6cdd1dULL;
  for (std::size_t b = 0; b < blocks; ++b) {
    for (int32_t j = 0; j < block_tokens; ++j) {
      h = Mix64(h ^ ids[b * static_cast<std::size_t>(block_tokens) + static_cast<std::size_t>(j)]);
    }
    out.push_back(h);
  }
  return out;
}

std::string_view OutputTokenText(uint64_t seed, int32_t index) {
  const Vocab& v = GetVocab();
  auto w = static_cast<int>(Mix64(seed * 0x100000001b3ULL + static_cast<uint64_t>(index)) % kWords);
  return index == 0 ? std::string_view(v.words[w]) : std::string_view(v.words[kWords + w]);
}

StopScan ScanForStop(uint64_t seed, int32_t max_tokens, const std::vector<std::string>& stop) {
  StopScan r;
  r.tokens = max_tokens;
  bool any = false;
  for (const auto& s : stop) any = any || !s.empty();
  if (!any) return r;
  std::string text;
  for (int32_t i = 0; i < max_tokens; ++i) {
    std::size_t before = text.size();
    text += OutputTokenText(seed, i);
    // A match must end inside this token (earlier ends were checked before).
    std::size_t best = std::string::npos;
    int32_t which = -1;
    for (std::size_t k = 0; k < stop.size(); ++k) {
      const std::string& s = stop[k];
      if (s.empty() || s.size() > text.size()) continue;
      std::size_t from = before >= s.size() ? before - s.size() + 1 : 0;
      std::size_t pos = text.find(s, from);
      if (pos != std::string::npos && pos < best) {
        best = pos;
        which = static_cast<int32_t>(k);
      }
    }
    if (best != std::string::npos) {
      r.tokens = i + 1;
      r.stopped = true;
      r.which = which;
      r.last_token_bytes = best > before ? static_cast<int32_t>(best - before) : 0;
      // A match starting before this token would cut earlier text that was already sent;
      // vLLM holds back partial matches, we approximate by sending nothing of this token.
      return r;
    }
  }
  return r;
}

}  // namespace infereng::serve
