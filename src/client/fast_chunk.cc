// TryFastOpenAiChunk: see fast_chunk.h for what it accepts and why it declines the rest.
//
// The scanner mirrors nlohmann's lexer on the subset it accepts: strings reject control
// characters and ill-formed UTF-8 (Unicode Table 3-7, as nlohmann does), numbers follow the
// JSON grammar, literals are exact, nothing may follow the object but whitespace. What it
// reads follows dialect.cc's adapters field for field: a string field that is not a string
// reads as "", a `choices` that is not an array or a choice that is not an object is
// skipped, and the choices' texts are appended in the order the adapters append them.
#include "client/fast_chunk.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

namespace infereng::client {
namespace {

constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxNumberChars = 18;  // longer (or with an exponent): full parse
constexpr int64_t kMaxCount = int64_t{1} << 40;  // as dialect.cc's IntAt

// A string's raw bytes between the quotes (escapes still in) and whether it was there.
struct Raw {
  std::string_view bytes;
  bool present = false;  // the key was seen with a string value
};

// Appends `raw` with its (already validated, \u-free) escapes decoded.
void AppendDecoded(std::string& out, std::string_view raw) {
  std::size_t start = 0;
  for (std::size_t i = raw.find('\\'); i != std::string_view::npos; i = raw.find('\\', start)) {
    out.append(raw.substr(start, i - start));
    const char e = raw[++i];
    out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
    start = i + 1;
  }
  out.append(raw.substr(start));
}

class Scanner {
 public:
  explicit Scanner(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  bool AtEnd() {
    Ws();
    return p_ == end_;
  }
  bool Peek(char c) {
    Ws();
    return p_ != end_ && *p_ == c;
  }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++p_;
    return true;
  }

  // A string value; `raw` gets the bytes between the quotes. Declines on \u escapes.
  bool String(std::string_view* raw) {
    if (!Eat('"')) return false;
    const char* start = p_;
    while (p_ != end_) {
      SkipPlain();
      if (p_ == end_) break;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        if (raw) *raw = std::string_view(start, static_cast<std::size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++p_ == end_) return false;
        switch (*p_) {
          case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't': ++p_; continue;
          default: return false;  // \u (surrogate rules are the full parser's) or invalid
        }
      }
      if (c < 0x80) {
        ++p_;
        continue;
      }
      if (!Utf8()) return false;
    }
    return false;
  }

  // An object key: a string without escapes, then the colon.
  bool Key(std::string_view& key) {
    if (!String(&key) || key.find('\\') != std::string_view::npos) return false;
    return Eat(':');
  }

  // A plain non-negative integer (what usage counts are); anything else declines.
  bool Count(int64_t& v) {
    Ws();
    const char* start = p_;
    v = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + (*p_++ - '0');
    const std::size_t n = static_cast<std::size_t>(p_ - start);
    if (n == 0 || n > kMaxNumberChars || (n > 1 && *start == '0')) return false;
    if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    if (v > kMaxCount) v = kMaxCount;
    return true;
  }

  bool Null() { return Literal("null"); }

  // Any JSON value, validated and skipped.
  bool Skip(int depth = 0) {
    if (depth > kMaxDepth) return false;
    Ws();
    if (p_ == end_) return false;
    switch (*p_) {
      case '"': return String(nullptr);
      case 't': return Literal("true");
      case 'f': return Literal("false");
      case 'n': return Literal("null");
      case '{': {
        ++p_;
        if (Eat('}')) return true;
        do {
          std::string_view key;
          if (!String(&key) || !Eat(':') || !Skip(depth + 1)) return false;
        } while (Eat(','));
        return Eat('}');
      }
      case '[': {
        ++p_;
        if (Eat(']')) return true;
        do {
          if (!Skip(depth + 1)) return false;
        } while (Eat(','));
        return Eat(']');
      }
      default: return Number();
    }
  }

  // Moves p_ to the first byte at or after it that is not a plain string byte (printable
  // ASCII other than '"' and the backslash), testing 8 bytes at a time (SWAR): strings are
  // most of a chunk's bytes, and testing them one by one was the fast path's main cost
  // (issue 17 profile). The masks are exact per byte (no borrow crosses a byte), so the
  // first set byte is the first special one; fewer than 8 bytes left: the caller's byte loop.
  void SkipPlain() {
    if constexpr (std::endian::native == std::endian::little) {
      constexpr uint64_t kOnes = 0x0101010101010101ULL, kLow7 = 0x7f7f7f7f7f7f7f7fULL, kHigh = ~kLow7;
      auto zero_bytes = [](uint64_t y) { return ~(((y & kLow7) + kLow7) | y) & kHigh; };
      while (end_ - p_ >= 8) {
        uint64_t x;
        std::memcpy(&x, p_, 8);
        const uint64_t special = (~((x & kLow7) + kOnes * 0x60) & ~x & kHigh)  // a byte < 0x20
                                 | zero_bytes(x ^ (kOnes * '"')) | zero_bytes(x ^ (kOnes * '\\'))
                                 | (x & kHigh);  // a byte >= 0x80 (UTF-8)
        if (special != 0) {
          p_ += std::countr_zero(special) / 8;
          return;
        }
        p_ += 8;
      }
    }
  }

 private:
  void Ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Literal(std::string_view word) {
    Ws();
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)? ; exponents and long numbers decline (overflow is an error
  // in the full parser, and not worth mirroring for fields nobody reads here).
  bool Number() {
    const char* start = p_;
    if (p_ != end_ && *p_ == '-') ++p_;
    const char* digits = p_;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    if (p_ == digits || (p_ - digits > 1 && *digits == '0')) return false;
    if (p_ != end_ && *p_ == '.') {
      const char* frac = ++p_;
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      if (p_ == frac) return false;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) return false;
    return static_cast<std::size_t>(p_ - start) <= kMaxNumberChars;
  }

  // One well-formed UTF-8 sequence of 2-4 bytes at p_ (Unicode Table 3-7).
  bool Utf8() {
    const auto b0 = static_cast<unsigned char>(*p_);
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      n = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      n = 3;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      n = 4;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end_ - p_ < n) return false;
    for (int i = 1; i < n; ++i) {
      const auto b = static_cast<unsigned char>(p_[i]);
      if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return false;
    }
    p_ += n;
    return true;
  }

  const char* p_;
  const char* end_;
};

// A string-valued field: a string is read, any other value reads as "" (StringAt's rule).
// A repeated key declines (the full parser keeps the last one; not worth mirroring).
bool StringField(Scanner& sc, Raw& field) {
  if (field.present) return false;
  if (!sc.Peek('"')) return sc.Skip();
  field.present = true;
  return sc.String(&field.bytes);
}

// delta / message: {content, reasoning_content, reasoning, ...}.
struct Message {
  Raw content, reasoning_content, reasoning;
  bool seen = false;
};

bool ParseMessage(Scanner& sc, Message& m) {
  if (m.seen) return false;
  m.seen = true;
  if (!sc.Peek('{')) return sc.Skip();  // not an object: ignored
  sc.Eat('{');
  if (sc.Eat('}')) return true;
  do {
    std::string_view key;
    if (!sc.Key(key)) return false;
    bool ok = key == "content"             ? StringField(sc, m.content)
              : key == "reasoning_content" ? StringField(sc, m.reasoning_content)
              : key == "reasoning"         ? StringField(sc, m.reasoning)
                                           : sc.Skip(2);
    if (!ok) return false;
  } while (sc.Eat(','));
  return sc.Eat('}');
}

void AppendMessage(const Message& m, ChunkInfo& info) {
  AppendDecoded(info.text, m.content.bytes);
  AppendDecoded(info.reasoning, m.reasoning_content.bytes);
  AppendDecoded(info.reasoning, m.reasoning.bytes);
}

bool ParseChoice(Scanner& sc, bool chat, ChunkInfo& info) {
  if (!sc.Peek('{')) return sc.Skip(1);  // not an object: skipped
  sc.Eat('{');
  Message delta, message;
  Raw text, finish;
  if (!sc.Eat('}')) {
    do {
      std::string_view key;
      if (!sc.Key(key)) return false;
      bool ok;
      if (key == "finish_reason") {
        ok = StringField(sc, finish);
      } else if (chat && key == "delta") {
        ok = ParseMessage(sc, delta);
      } else if (chat && key == "message") {
        ok = ParseMessage(sc, message);
      } else if (!chat && key == "text") {
        ok = StringField(sc, text);
      } else {
        ok = sc.Skip(2);
      }
      if (!ok) return false;
    } while (sc.Eat(','));
    if (!sc.Eat('}')) return false;
  }
  if (chat) {
    AppendMessage(delta, info);
    AppendMessage(message, info);
  } else {
    AppendDecoded(info.text, text.bytes);
  }
  if (!finish.bytes.empty()) {
    info.finish_reason.clear();
    AppendDecoded(info.finish_reason, finish.bytes);
  }
  return true;
}

// usage: {prompt_tokens, completion_tokens, prompt_tokens_details: {cached_tokens}} with
// plain integer (or null) counts; anything else declines (a completion_tokens_details
// object too: one event per stream, the full parse reads its reasoning_tokens). ReadUsage's
// rules after.
bool ParseUsage(Scanner& sc, Usage& usage) {
  if (sc.Null()) return true;
  if (!sc.Eat('{')) return false;
  Usage u;
  std::array<bool, 3> seen{};
  auto count = [&](int64_t& v, bool& was) {
    if (was) return false;
    was = true;
    return sc.Null() || sc.Count(v);
  };
  if (!sc.Eat('}')) {
    do {
      std::string_view key;
      if (!sc.Key(key)) return false;
      bool ok;
      if (key == "prompt_tokens") {
        ok = count(u.prompt_tokens, seen[0]);
      } else if (key == "completion_tokens") {
        ok = count(u.completion_tokens, seen[1]);
      } else if (key == "completion_tokens_details") {
        ok = sc.Null();  // an object (reasoning_tokens): the full parse reads it
      } else if (key == "prompt_tokens_details") {
        if (seen[2]) return false;
        seen[2] = true;
        if (sc.Null()) {
          ok = true;
        } else if (sc.Eat('{')) {
          ok = true;
          bool cached_seen = false;
          if (!sc.Eat('}')) {
            do {
              std::string_view k;
              if (!sc.Key(k)) return false;
              ok = k == "cached_tokens" ? count(u.cached_tokens, cached_seen) : sc.Skip(3);
            } while (ok && sc.Eat(','));
            ok = ok && sc.Eat('}');
          }
        } else {
          ok = false;
        }
      } else {
        ok = sc.Skip(2);
      }
      if (!ok) return false;
    } while (sc.Eat(','));
    if (!sc.Eat('}')) return false;
  }
  if (u.prompt_tokens > 0 || u.completion_tokens > 0) usage = u;  // zeroed or empty: ignored
  return true;
}

}  // namespace

bool TryFastOpenAiChunk(Dialect dialect, std::string_view payload, ChunkInfo& info) {
  if (dialect != Dialect::kOpenAiChat && dialect != Dialect::kOpenAiCompletions) return false;
  const bool chat = dialect == Dialect::kOpenAiChat;
  Scanner sc(payload);
  if (!sc.Eat('{')) return false;
  bool choices_seen = false, usage_seen = false, timings_seen = false;
  if (!sc.Eat('}')) {
    do {
      std::string_view key;
      if (!sc.Key(key)) return false;
      bool ok;
      if (key == "choices") {
        if (choices_seen) return false;
        choices_seen = true;
        if (sc.Eat('[')) {
          ok = true;
          if (!sc.Eat(']')) {
            do {
              ok = ParseChoice(sc, chat, info);
            } while (ok && sc.Eat(','));
            ok = ok && sc.Eat(']');
          }
        } else {
          ok = sc.Skip(1);  // not an array: no choices
        }
      } else if (key == "usage") {
        if (usage_seen) return false;
        usage_seen = true;
        ok = ParseUsage(sc, info.usage);
      } else if (key == "timings") {
        if (timings_seen) return false;
        timings_seen = true;
        ok = sc.Null();  // an object (llama.cpp's last chunk): the full parse reads it
      } else if (key == "error") {
        return false;  // any error key: the full parse words the message
      } else {
        ok = sc.Skip(1);
      }
      if (!ok) return false;
    } while (sc.Eat(','));
    if (!sc.Eat('}')) return false;
  }
  if (!sc.AtEnd()) return false;
  if (info.usage.completion_tokens == 0 && info.usage.prompt_tokens <= 0) info.usage = Usage{};
  return true;
}

}  // namespace infereng::client
