#include "metrics/record.h"

#include <array>
#include <utility>

namespace infereng::metrics {

int64_t RequestRecord::OutputTokens() const {
  if (completion_tokens >= 0) return completion_tokens;
  int64_t n = 0;
  for (const Chunk& c : chunks) n += c.tokens;
  return n;
}

namespace {

constexpr std::array<std::pair<ErrorClass, std::string_view>, 12> kErrorNames = {{
    {ErrorClass::kNone, "none"},
    {ErrorClass::kConnect, "connect"},
    {ErrorClass::kTimeout, "timeout"},
    {ErrorClass::kHttp4xx, "http_4xx"},
    {ErrorClass::kHttp5xx, "http_5xx"},
    {ErrorClass::kStreamError, "stream_error"},
    {ErrorClass::kProtocol, "protocol"},
    {ErrorClass::kIncomplete, "incomplete"},
    {ErrorClass::kCancelled, "cancelled"},
    {ErrorClass::kRejected, "rejected"},
    {ErrorClass::kInterrupted, "interrupted"},
    {ErrorClass::kMismatch, "mismatch"},
}};

constexpr std::array<std::pair<TokenSource, std::string_view>, 4> kSourceNames = {{
    {TokenSource::kUsageContinuous, "usage_continuous"},
    {TokenSource::kUsageFinal, "usage_final"},
    {TokenSource::kClientCount, "client_count"},
    {TokenSource::kSimulated, "simulated"},
}};

}  // namespace

std::string_view ErrorClassName(ErrorClass e) {
  for (const auto& [k, v] : kErrorNames) {
    if (k == e) return v;
  }
  return "unknown";
}

std::optional<ErrorClass> ParseErrorClass(std::string_view name) {
  for (const auto& [k, v] : kErrorNames) {
    if (v == name) return k;
  }
  return std::nullopt;
}

std::string_view TokenSourceName(TokenSource s) {
  for (const auto& [k, v] : kSourceNames) {
    if (k == s) return v;
  }
  return "unknown";
}

std::optional<TokenSource> ParseTokenSource(std::string_view name) {
  for (const auto& [k, v] : kSourceNames) {
    if (v == name) return k;
  }
  return std::nullopt;
}

}  // namespace infereng::metrics
