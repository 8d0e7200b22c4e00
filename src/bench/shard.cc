#include "bench/shard.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/units.h"

namespace infereng::bench {
namespace {

bool ParseInt(std::string_view t, int* out) {
  if (t.empty()) return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), *out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

}  // namespace

Result<Shard> ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !ParseInt(text.substr(0, slash), &s.k) || !ParseInt(text.substr(slash + 1), &s.n)) {
    return Status::InvalidArgument("--shard \"" + std::string(text) + "\": expected K/N, e.g. 0/4 (K counts from 0)");
  }
  if (s.n < 1 || s.n > kMaxShards) {
    return Status::InvalidArgument("--shard " + std::string(text) + ": N must be 1.." + std::to_string(kMaxShards));
  }
  if (s.k < 0 || s.k >= s.n) {
    return Status::InvalidArgument("--shard " + std::string(text) + ": K must be 0.." + std::to_string(s.n - 1) +
                                   " (shards count from 0, as a Kubernetes completion index)");
  }
  return s;
}

int ShardShare(const Shard& s, int total) { return total / s.n + (s.k < total % s.n ? 1 : 0); }

int64_t ShardCount(const Shard& s, uint64_t first, int64_t count) {
  if (count <= 0) return 0;
  const uint64_t n = static_cast<uint64_t>(s.n), k = static_cast<uint64_t>(s.k);
  // Indices < x in the shard: ceil((x - k) / n) for x > k.
  auto below = [&](uint64_t x) -> int64_t { return x <= k ? 0 : static_cast<int64_t>((x - k + n - 1) / n); };
  return below(first + static_cast<uint64_t>(count)) - below(first);
}

Result<int64_t> ParseStartAt(std::string_view text, int64_t now_unix_ns) {
  const std::string t(text);
  if (!t.empty() && t[0] == '+') {
    Result<double> s = units::ParseDurationSeconds(t.substr(1), "s");
    if (!s.ok() || !(*s >= 0) || *s > 86400) {
      return Status::InvalidArgument("--start-at \"" + t + "\": expected +DURATION (e.g. +30s, up to a day) or a UTC time");
    }
    return now_unix_ns + static_cast<int64_t>(*s * 1e9);
  }
  std::tm tm{};
  const char* end = strptime(t.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  int64_t frac_ns = 0;
  if (end != nullptr && *end == '.') {
    int64_t scale = 100'000'000;
    for (++end; *end >= '0' && *end <= '9'; ++end, scale /= 10) frac_ns += (*end - '0') * scale;
  }
  if (end == nullptr || std::string_view(end) != "Z") {
    return Status::InvalidArgument("--start-at \"" + t + "\": expected a UTC time like 2026-12-02T00:10:00Z or +30s");
  }
  return static_cast<int64_t>(timegm(&tm)) * 1'000'000'000 + frac_ns;
}

int64_t WallNowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Nanos SteadyAtWall(int64_t unix_ns, Clock& steady) { return steady.Now() + (unix_ns - WallNowUnixNs()); }

std::string UnixNsIso8601(int64_t unix_ns) {
  const std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>((unix_ns / 1'000'000) % 1000));
  return out;
}

}  // namespace infereng::bench
