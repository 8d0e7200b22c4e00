#include "bench/prompt.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "core/mix64.h"

namespace infereng::bench {
namespace {

// Common English words; each is one token (with its leading space) in GPT/Llama-style BPE
// vocabularies, and one token under the embedded engine's whitespace rule.
constexpr std::array<std::string_view, 128> kWords = {
    "the",    "of",     "and",    "to",     "in",     "is",     "you",    "that",   "it",
    "he",     "was",    "for",    "on",     "are",    "as",     "with",   "his",    "they",
    "at",     "be",     "this",   "have",   "from",   "or",     "one",    "had",    "by",
    "word",   "but",    "not",    "what",   "all",    "were",   "we",     "when",   "your",
    "can",    "said",   "there",  "use",    "an",     "each",   "which",  "she",    "do",
    "how",    "their",  "if",     "will",   "up",     "other",  "about",  "out",    "many",
    "then",   "them",   "these",  "so",     "some",   "her",    "would",  "make",   "like",
    "him",    "into",   "time",   "has",    "look",   "two",    "more",   "write",  "go",
    "see",    "number", "no",     "way",    "could",  "people", "my",     "than",   "first",
    "water",  "been",   "call",   "who",    "now",    "find",   "long",   "down",   "day",
    "did",    "get",    "come",   "made",   "may",    "part",   "over",   "new",    "sound",
    "take",   "only",   "little", "work",   "know",   "place",  "year",   "live",   "me",
    "back",   "give",   "most",   "very",   "after",  "thing",  "our",    "just",   "name",
    "good",   "man",    "think",  "say",    "great",  "where",  "help",   "through", "much",
    "before", "line"};

constexpr int kMaxAdjust = 12;         // /tokenize round trips per prompt at most
constexpr int kTrustAfterExact = 32;   // consecutive exact prompts before we stop checking

}  // namespace

int LengthModel::WordsFor(int64_t tokens) const {
  if (tokens <= 0) return 0;
  const double w = (static_cast<double>(tokens) - overhead_tokens) / std::max(tokens_per_word, 1e-6);
  return std::max(1, static_cast<int>(std::lround(w)));
}

PromptBuilder::PromptBuilder(uint64_t seed, TokenCountFn counter)
    : seed_(seed), counter_(std::move(counter)) {}

std::string PromptBuilder::Words(uint64_t seed, int n) {
  std::string out;
  out.reserve(static_cast<size_t>(n) * 6);
  uint64_t state = Mix64(seed);
  for (int i = 0; i < n; ++i) {
    state = Mix64(state + static_cast<uint64_t>(i));
    if (i > 0) out += ' ';
    out += kWords[state % kWords.size()];
  }
  return out;
}

Status PromptBuilder::Calibrate() {
  if (!counter_) return Status::Ok();
  // Two probes give slope and intercept; a third checks linearity.
  const int n1 = 64, n2 = 512;
  INFERENG_ASSIGN_OR_RETURN(int64_t c1, counter_(Words(seed_ ^ 0x51, n1)));
  INFERENG_ASSIGN_OR_RETURN(int64_t c2, counter_(Words(seed_ ^ 0x52, n2)));
  if (c2 <= c1) return Status::ProtocolError("/tokenize: token count did not grow with the text length");
  LengthModel m;
  m.tokens_per_word = static_cast<double>(c2 - c1) / (n2 - n1);
  m.overhead_tokens = static_cast<double>(c1) - m.tokens_per_word * n1;
  std::lock_guard<std::mutex> lock(mu_);
  model_ = m;
  return Status::Ok();
}

LengthModel PromptBuilder::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

std::string PromptBuilder::PrefixText(int32_t prefix_id, int32_t tokens) {
  const int64_t key = (static_cast<int64_t>(prefix_id) << 32) | static_cast<uint32_t>(tokens);
  auto it = prefixes_.find(key);
  if (it != prefixes_.end()) return it->second;
  const LengthModel m = model();
  const int words = std::max(1, static_cast<int>(std::lround(tokens / std::max(m.tokens_per_word, 1e-6))));
  std::string text = Words(Mix64(seed_ ^ 0x7072656669780000ULL) ^ static_cast<uint64_t>(prefix_id), words);
  prefixes_.emplace(key, text);
  return text;
}

Result<std::string> PromptBuilder::Exact(std::string text, int64_t target, uint64_t seed) {
  // Coarse steps by the length model, then, a token or two away, single words tried one by
  // one (a tokenizer may count a word as more than one token: the step must still land).
  bool adjusted = false;
  for (int adjust = 0;; ++adjust) {
    INFERENG_ASSIGN_OR_RETURN(int64_t n, counter_(text));
    if (n == target) break;
    if (adjust == kMaxAdjust) {
      trusted_streak_ = 0;
      return text;  // best effort; the achieved length is reported from usage
    }
    adjusted = true;
    const double tpw = std::max(model().tokens_per_word, 1e-6);
    if (n > target) {
      const int remove = std::max(1, static_cast<int>((n - target) / tpw));
      for (int k = 0; k < remove; ++k) {
        const size_t sp = text.rfind(' ');
        if (sp == std::string::npos) break;
        text.resize(sp);
      }
      continue;
    }
    const int64_t delta = target - n;
    if (delta <= 2) {
      bool landed = false;
      for (size_t w = 0; w < 32 && !landed; ++w) {
        std::string candidate = text + " " + std::string(kWords[(seed + w) % kWords.size()]);
        INFERENG_ASSIGN_OR_RETURN(int64_t m, counter_(candidate));
        if (m == target) {
          text = std::move(candidate);
          landed = true;
        } else if (m < target && w == 31) {
          text = std::move(candidate);
        }
      }
      if (landed) break;
      continue;
    }
    text += ' ';
    text += Words(seed + 0x1000 + static_cast<uint64_t>(adjust), std::max(1, static_cast<int>(std::lround(delta / tpw))));
  }
  trusted_streak_ = adjusted ? 0 : trusted_streak_ + 1;
  return text;
}

void PromptBuilder::SetModel(LengthModel m) {
  std::lock_guard<std::mutex> lock(mu_);
  model_ = m;
}

int64_t PromptBuilder::refit_samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refit_samples_;
}

Result<int64_t> PromptBuilder::Prepare(const std::vector<workload::RequestSpec>& specs) {
  prepared_.clear();
  int64_t exact = 0;
  for (const workload::RequestSpec& spec : specs) {
    INFERENG_ASSIGN_OR_RETURN(std::string text, BuildText(spec, /*check=*/static_cast<bool>(counter_)));
    if (counter_) {
      INFERENG_ASSIGN_OR_RETURN(int64_t n, counter_(text));
      exact += n == std::max<int32_t>(spec.input_tokens, 1);
    }
    prepared_[spec.index] = std::move(text);
  }
  sealed_ = true;
  return exact;
}

Result<std::string> PromptBuilder::Build(const workload::RequestSpec& spec) {
  if (auto it = prepared_.find(spec.index); it != prepared_.end()) {
    std::string text = std::move(it->second);
    prepared_.erase(it);
    return text;
  }
  return BuildText(spec, counter_ && !sealed_ && trusted_streak_ < kTrustAfterExact);
}

int PromptBuilder::AppendTraceBlocks(const workload::RequestSpec& spec, int words, const LengthModel& m,
                                     std::string* text) const {
  // Block j's text is seeded by the chain of ids 0..j (and the trial's salt, so every trial
  // replays from a cold cache as the implied hit rate assumes): equal leading ids give equal
  // leading text whatever follows, and a block cut short is a prefix of the whole block.
  const int per_block = std::max(1, static_cast<int>(std::lround(spec.block_tokens / std::max(m.tokens_per_word, 1e-6))));
  uint64_t chain = Mix64(seed_ ^ 0x74726163650000ULL ^ Mix64(salt_));
  int taken = 0;
  for (uint64_t id : spec.block_ids) {
    if (taken >= words) break;
    chain = Mix64(chain ^ Mix64(id));
    const int n = std::min(per_block, words - taken);
    if (!text->empty()) *text += ' ';
    *text += Words(chain, n);
    taken += n;
  }
  return taken;
}

Result<std::string> PromptBuilder::BuildText(const workload::RequestSpec& spec, bool check) {
  const int64_t target = std::max<int32_t>(spec.input_tokens, 1);
  const uint64_t req_seed = Mix64(seed_ ^ Mix64(spec.seed + spec.index * 0x632be59bd9b4e019ULL) ^ Mix64(salt_));
  const LengthModel m = model();
  std::string text;
  int words = m.WordsFor(target);
  if (!spec.block_ids.empty() && spec.block_tokens > 0) {
    words -= AppendTraceBlocks(spec, words, m, &text);
  } else if (spec.prefix_id >= 0 && spec.prefix_tokens > 0) {
    text = PrefixText(spec.prefix_id, std::min<int32_t>(spec.prefix_tokens, static_cast<int32_t>(target)));
    const int prefix_words = static_cast<int>(std::count(text.begin(), text.end(), ' ')) + 1;
    words -= prefix_words;
  }
  if (words > 0) {
    if (!text.empty()) text += ' ';
    text += Words(req_seed, words);
  }
  if (check) return Exact(std::move(text), target, req_seed);
  return text;
}

void PromptBuilder::Observe(int64_t target_tokens, int64_t prompt_tokens) {
  if (target_tokens <= 0 || prompt_tokens < 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  LengthReport& r = report_;
  const int64_t err = std::llabs(prompt_tokens - target_tokens);
  r.mean_abs_error = (r.mean_abs_error * r.samples + static_cast<double>(err)) / (r.samples + 1);
  r.mean_ratio = (r.mean_ratio * r.samples + static_cast<double>(prompt_tokens) / target_tokens) / (r.samples + 1);
  r.samples++;
  r.exact += err == 0;
  r.max_abs_error = std::max(r.max_abs_error, err);
  if (!counter_ && !refitted_) obs_.emplace_back(model_.WordsFor(target_tokens), prompt_tokens);
}

bool PromptBuilder::Refit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (counter_ || refitted_ || obs_.size() < 2) return false;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(obs_.size());
  for (auto [x, y] : obs_) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double den = n * sxx - sx * sx;
  LengthModel m;
  if (std::abs(den) < 1e-9) {
    // All prompts had one length: keep slope 1, fit the offset only.
    m.tokens_per_word = 1.0;
    m.overhead_tokens = (sy - sx) / n;
  } else {
    m.tokens_per_word = (n * sxy - sx * sy) / den;
    m.overhead_tokens = (sy - m.tokens_per_word * sx) / n;
  }
  if (!(m.tokens_per_word > 0.05 && m.tokens_per_word < 20)) return false;  // nonsense usage
  model_ = m;
  refitted_ = true;
  refit_samples_ = static_cast<int64_t>(obs_.size());
  report_ = LengthReport{};  // report the measured phase, with the fitted model
  return true;
}

LengthReport PromptBuilder::Report() const {
  std::lock_guard<std::mutex> lock(mu_);
  return report_;
}

}  // namespace infereng::bench
