// The statistics on the shipped real slices equal an independent computation written
// here from the raw lines (own parsing, own percentile, own LRU), not from trace/'s code.
#include "trace/characterization.h"
#include "trace/characterization_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/paths.h"
#include "trace/fits.h"
#include "trace/lru_blocks.h"
#include "trace/reader.h"

namespace infereng::trace {
namespace {

std::string Data(const std::string& name) { return testing::SourceDir() + "/src/trace/testdata/" + name; }

struct Raw {
  std::vector<double> t, in, out;
  std::vector<std::vector<uint64_t>> hashes;
};

// Azure slice: every row is on 2023-11-16, so seconds of the day are enough.
Raw ReadAzureByHand() {
  Raw r;
  std::ifstream f(Data("azure-conv-2000.csv"));
  std::string line;
  std::getline(f, line);
  while (std::getline(f, line)) {
    int hh = 0, mm = 0, in = 0, out = 0;
    double ss = 0;
    if (std::sscanf(line.c_str(), "2023-11-16 %d:%d:%lf,%d,%d", &hh, &mm, &ss, &in, &out) != 5) continue;
    r.t.push_back(hh * 3600 + mm * 60 + ss);
    r.in.push_back(in);
    r.out.push_back(out);
  }
  return r;
}

Raw ReadMooncakeByHand(const std::string& name = "mooncake-conv-1000.jsonl") {
  Raw r;
  std::ifstream f(Data(name));
  std::string line;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line);
    r.t.push_back(j["timestamp"].get<double>() / 1000);
    r.in.push_back(j["input_length"].get<double>());
    r.out.push_back(j["output_length"].get<double>());
    r.hashes.push_back(j["hash_ids"].get<std::vector<uint64_t>>());
  }
  return r;
}

double NumpyPercentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double rank = p / 100 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (rank - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

Characterization CharacterizeSlice(const std::string& name, CharacterizeOptions o = {}) {
  auto c = CharacterizeFile(Data(name), {}, o);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Characterization{};
}

TEST(Characterize, AzureArrivalsAndLengthsMatchAnIndependentComputation) {
  const Raw raw = ReadAzureByHand();
  ASSERT_EQ(raw.t.size(), 2000u);
  const Characterization c = CharacterizeSlice("azure-conv-2000.csv");
  const double span = raw.t.back() - raw.t.front();
  EXPECT_EQ(c.arrivals.requests, 2000);
  EXPECT_NEAR(c.arrivals.span_s, span, 1e-5);
  EXPECT_NEAR(c.arrivals.mean_rate, 2000 / span, 1e-6);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < raw.t.size(); ++i) gaps.push_back(raw.t[i] - raw.t[i - 1]);
  double mean = 0, var = 0;
  for (double g : gaps) mean += g;
  mean /= static_cast<double>(gaps.size());
  for (double g : gaps) var += (g - mean) * (g - mean);
  var /= static_cast<double>(gaps.size());
  EXPECT_NEAR(c.arrivals.gap_cv, std::sqrt(var) / mean, 1e-4);
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    EXPECT_DOUBLE_EQ(c.input.stats.AtStandardPercentile(p), NumpyPercentile(raw.in, p)) << p;
    EXPECT_DOUBLE_EQ(c.output.stats.AtStandardPercentile(p), NumpyPercentile(raw.out, p)) << p;
  }
  EXPECT_DOUBLE_EQ(c.input.stats.max, *std::max_element(raw.in.begin(), raw.in.end()));
  // Peak-to-mean at 1 s: busiest complete second from the first arrival.
  std::map<int64_t, int> per_second;
  for (double t : raw.t) ++per_second[static_cast<int64_t>(std::floor(t - raw.t.front() + 1e-9))];
  int peak = 0;
  for (auto [s, n] : per_second) {
    if (static_cast<double>(s + 1) <= span) peak = std::max(peak, n);
  }
  ASSERT_EQ(c.arrivals.peak_to_mean.at(0).window_s, 1);
  EXPECT_DOUBLE_EQ(c.arrivals.peak_to_mean.at(0).peak_rate, peak);
  EXPECT_NEAR(c.arrivals.peak_to_mean.at(0).value, peak / (2000 / span), 1e-6);
  EXPECT_EQ(c.arrivals.peak_to_mean.at(2).windows, 0);  // 1 h: the slice is ~6 minutes
  // Correlation of input and output (Pearson).
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < raw.in.size(); ++i) mx += raw.in[i], my += raw.out[i];
  mx /= 2000, my /= 2000;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < raw.in.size(); ++i) {
    sxy += (raw.in[i] - mx) * (raw.out[i] - my);
    sxx += (raw.in[i] - mx) * (raw.in[i] - mx);
    syy += (raw.out[i] - my) * (raw.out[i] - my);
  }
  EXPECT_NEAR(c.pearson, sxy / std::sqrt(sxx * syy), 1e-9);
  EXPECT_FALSE(c.prefix.present);
  EXPECT_FALSE(c.sessions.present);
}

// A plain LRU of block ids (front = most recent): hits while leading blocks are cached;
// then the request's blocks are touched last-to-first, so its head ends most recent.
double NaiveLruHitRate(const std::vector<std::vector<uint64_t>>& requests, std::size_t capacity) {
  std::vector<uint64_t> cache;
  double hits = 0, looked = 0;
  for (const auto& ids : requests) {
    std::size_t h = 0;
    while (h < ids.size() && std::find(cache.begin(), cache.end(), ids[h]) != cache.end()) ++h;
    hits += static_cast<double>(h);
    looked += static_cast<double>(ids.size());
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
      auto at = std::find(cache.begin(), cache.end(), *it);
      if (at != cache.end()) cache.erase(at);
      cache.insert(cache.begin(), *it);
    }
    if (cache.size() > capacity) cache.resize(capacity);
  }
  return hits / looked;
}

TEST(Characterize, MooncakePrefixReuseMatchesAnIndependentComputation) {
  const Raw raw = ReadMooncakeByHand();
  CharacterizeOptions o;
  o.cache_blocks = {500, 5000};
  const Characterization c = CharacterizeSlice("mooncake-conv-1000.jsonl", o);
  ASSERT_TRUE(c.prefix.present);
  std::set<uint64_t> seen;
  int64_t cached = 0, reusable = 0, input = 0;
  for (std::size_t i = 0; i < raw.hashes.size(); ++i) {
    std::size_t lead = 0;
    while (lead < raw.hashes[i].size() && seen.count(raw.hashes[i][lead]) != 0) ++lead;
    cached += lead > 0;
    reusable += std::min<int64_t>(static_cast<int64_t>(lead) * 512, static_cast<int64_t>(raw.in[i]));
    input += static_cast<int64_t>(raw.in[i]);
    seen.insert(raw.hashes[i].begin(), raw.hashes[i].end());
  }
  EXPECT_EQ(c.prefix.cached_prefix_requests, cached);
  EXPECT_EQ(c.prefix.reusable_tokens, reusable);
  EXPECT_DOUBLE_EQ(c.prefix.reusable_share, static_cast<double>(reusable) / static_cast<double>(input));
  EXPECT_EQ(c.prefix.distinct_blocks, static_cast<int64_t>(seen.size()));
  ASSERT_EQ(c.prefix.lru.size(), 2u);
  EXPECT_DOUBLE_EQ(c.prefix.lru[0].hit_rate, NaiveLruHitRate(raw.hashes, 500));
  EXPECT_DOUBLE_EQ(c.prefix.lru[1].hit_rate, NaiveLruHitRate(raw.hashes, 5000));
  EXPECT_LT(c.prefix.lru[0].hit_rate, c.prefix.lru[1].hit_rate);  // a bigger cache hits more
  EXPECT_GT(c.arrivals.zero_gaps, 500);  // coarse timestamps, as the trace's README says
  // Rate over the slice's own span.
  EXPECT_NEAR(c.arrivals.mean_rate, 1000 / (raw.t.back() - raw.t.front()), 1e-9);
}

// Without a session column, conversations come from hash_ids (conversation_linker.h). The
// rule, written here by brute force over whole prefixes (not block ids): request i continues
// the latest earlier request j with the most whole blocks that are all i's leading blocks,
// when j has two or more whole blocks, the last of them carried only by j's conversation
// before i, i arrived after j and i's prompt is no shorter than j's.
struct Linked {
  std::vector<int64_t> conv;                            // per request
  std::vector<std::pair<std::size_t, std::size_t>> links;  // (follow-up, the request it continues)
  int64_t conversations = 0;
  std::vector<double> gaps, news;  // per follow-up: time since, and growth minus output of, the turn before
};

Linked BruteForceLinks(const Raw& raw) {
  const std::size_t n = raw.hashes.size();
  Linked out;
  out.conv.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& h = raw.hashes[i];
    std::size_t best_w = 0, best_j = 0;
    for (std::size_t j = 0; j < i; ++j) {
      const std::size_t w = std::min(raw.hashes[j].size(), static_cast<std::size_t>(raw.in[j]) / 512);
      if (w == 0 || w > h.size() || w < best_w) continue;
      if (std::equal(raw.hashes[j].begin(), raw.hashes[j].begin() + static_cast<std::ptrdiff_t>(w), h.begin())) {
        best_w = w, best_j = j;
      }
    }
    bool linked = best_w >= 2 && raw.t[i] > raw.t[best_j] && raw.in[i] >= raw.in[best_j];
    for (std::size_t k = 0; linked && k < i; ++k) {
      const uint64_t end = raw.hashes[best_j][best_w - 1];
      const auto& hk = raw.hashes[k];
      if (out.conv[k] != out.conv[best_j] && std::find(hk.begin(), hk.end(), end) != hk.end()) linked = false;
    }
    if (!linked) {
      out.conv[i] = out.conversations++;
      continue;
    }
    out.conv[i] = out.conv[best_j];
    out.links.emplace_back(i, best_j);
    std::size_t prev = i;  // the conversation's latest turn before i
    while (prev-- > 0 && out.conv[prev] != out.conv[i]) {
    }
    out.gaps.push_back(raw.t[i] - raw.t[prev]);
    out.news.push_back(raw.in[i] - raw.in[prev] - raw.out[prev]);
  }
  return out;
}

TEST(Characterize, MooncakeSessionsInferredMatchABruteForceLinking) {
  const Linked b = BruteForceLinks(ReadMooncakeByHand());
  const auto follow_ups = static_cast<int64_t>(b.links.size());
  const Characterization c = CharacterizeSlice("mooncake-conv-1000.jsonl");
  ASSERT_TRUE(c.sessions.present);
  EXPECT_EQ(c.sessions.source, "inferred");
  EXPECT_EQ(c.sessions.sessions, b.conversations);
  EXPECT_EQ(c.sessions.follow_ups, follow_ups);
  EXPECT_GT(follow_ups, 100);  // the slice's conversations are real: 183 follow-up turns
  EXPECT_DOUBLE_EQ(c.sessions.gap_s.p50, NumpyPercentile(b.gaps, 50));
  EXPECT_DOUBLE_EQ(c.sessions.new_message_tokens.p50, NumpyPercentile(b.news, 50));
  EXPECT_DOUBLE_EQ(c.sessions.new_message_tokens.p90, NumpyPercentile(b.news, 90));
  // A chat turn adds a short message: most follow-ups re-send the previous answer whole.
  EXPECT_LT(c.sessions.new_message_tokens.p50, 100);
  EXPECT_GT(c.sessions.new_message_tokens.p50, 0);
}

// The short slice is the 1,000-line slice's lines under 2,000 tokens. Its conversations must
// be the links the longer slice has between those lines, no more: one early short prompt
// must not gather the slice into one conversation (it did before the rule's first-block,
// arrival and length conditions).
TEST(Characterize, TheShortSliceKeepsTheLongerSlicesLinksAndNoOthers) {
  const Raw full = ReadMooncakeByHand(), short_raw = ReadMooncakeByHand("mooncake-conv-short.jsonl");
  std::map<std::size_t, std::size_t> in_short;  // index in the full slice -> in the short one
  for (std::size_t i = 0; i < full.in.size(); ++i) {
    if (full.in[i] < 2000) in_short.emplace(i, in_short.size());
  }
  ASSERT_EQ(in_short.size(), short_raw.in.size());
  std::set<std::pair<std::size_t, std::size_t>> expected;
  for (auto [child, parent] : BruteForceLinks(full).links) {
    if (in_short.count(child) != 0 && in_short.count(parent) != 0) expected.emplace(in_short[child], in_short[parent]);
  }
  const Linked got = BruteForceLinks(short_raw);
  EXPECT_EQ(std::set(got.links.begin(), got.links.end()), expected);
  const Characterization c = CharacterizeSlice("mooncake-conv-short.jsonl");
  EXPECT_EQ(c.sessions.follow_ups, static_cast<int64_t>(expected.size()));
  EXPECT_EQ(c.sessions.follow_ups, 21);
  EXPECT_LE(c.sessions.turns.max, 5);
}

TEST(LruBlocks, EvictsTailsBeforeTheirHead) {
  LruBlocks lru(3);
  const std::vector<uint64_t> a = {1, 2, 3}, b = {1, 4};
  EXPECT_EQ(lru.Access(a), 0);
  EXPECT_EQ(lru.Access(b), 1);     // 1 hit; 4 inserted, evicting the least recent tail (3)
  EXPECT_EQ(lru.Access(a), 2);     // 1, 2 still cached; 3 was evicted
}

TEST(Characterize, SessionsTenantsAndClasses) {
  Characterizer acc({.block_tokens = 2, .cache_blocks = {10}});
  auto rec = [](double t, int64_t in, std::string session, std::string tenant, std::vector<uint64_t> h) {
    TraceRecord r;
    r.t_s = t;
    r.input_tokens = in;
    r.output_tokens = 5;
    r.session = std::move(session);
    r.tenant = std::move(tenant);
    r.hash_ids = std::move(h);
    r.category = t < 2 ? "online" : "offline";
    return r;
  };
  ASSERT_TRUE(acc.Add(rec(0, 4, "s1", "A", {1, 2})).ok());
  ASSERT_TRUE(acc.Add(rec(1, 6, "s1", "A", {1, 2, 3})).ok());
  ASSERT_TRUE(acc.Add(rec(3, 4, "s2", "B", {9, 8})).ok());
  ASSERT_TRUE(acc.Add(rec(7, 9, "s1", "A", {1, 2, 3, 4, 5})).ok());
  auto c = acc.Finish();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->sessions.sessions, 2);
  EXPECT_EQ(c->sessions.turns.max, 3);
  EXPECT_EQ(c->sessions.gap_s.count, 2);      // s1: 1 s then 6 s
  EXPECT_DOUBLE_EQ(c->sessions.gap_s.max, 6);
  EXPECT_DOUBLE_EQ(c->sessions.growth_tokens.mean, 2.5);  // +2, +3
  EXPECT_DOUBLE_EQ(c->sessions.new_message_tokens.mean, -2.5);  // minus the 5 output tokens before each
  EXPECT_EQ(c->sessions.source, "ids");
  EXPECT_EQ(c->sessions.follow_ups, 2);
  EXPECT_EQ(c->prefix.cached_prefix_requests, 2);
  ASSERT_EQ(c->prefix.tenants.size(), 2u);
  EXPECT_EQ(c->prefix.tenants[0].tenant, "A");
  EXPECT_DOUBLE_EQ(c->prefix.tenants[0].cached_share, 2.0 / 3);
  EXPECT_EQ(c->categories.at("online"), 2);
  EXPECT_EQ(c->categories.at("offline"), 2);
  EXPECT_EQ(c->items_rows, 0);  // no batch-size column
}

// An embeddings log's batch sizes: summarised over the rows that give one, in JSON only then.
TEST(Characterize, ItemsPerRequestOverTheRowsThatGiveThem) {
  Characterizer acc({});
  for (int i = 0; i < 5; ++i) {
    TraceRecord r;
    r.t_s = i;
    r.input_tokens = 100;
    r.items = i < 4 ? (i + 1) * 2 : 0;  // 2, 4, 6, 8, then a row without one
    ASSERT_TRUE(acc.Add(r).ok());
  }
  auto c = acc.Finish();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->items_rows, 4);
  EXPECT_DOUBLE_EQ(c->items.p50, 5);
  EXPECT_DOUBLE_EQ(c->items.max, 8);
  const nlohmann::json j = ToJson(*c);
  EXPECT_EQ(j["items"]["rows"], 4);
  EXPECT_DOUBLE_EQ(j["items"]["per_request"]["mean"].get<double>(), 5);
}

TEST(Characterize, ApplyLittlesLaw) {
  ArrivalStats a;
  a.mean_rate = 4;
  a.peak_to_mean = {{1, 10, 2.5, 10}, {60, 5, 1.5, 6}, {3600, 0, 0, 0}};
  const LittlesLaw l = ApplyLittlesLaw(a, 2.5, "e2e p50");
  EXPECT_DOUBLE_EQ(l.at_mean, 10);
  EXPECT_DOUBLE_EQ(l.at_peak_1s, 25);
  EXPECT_DOUBLE_EQ(l.at_peak_1min, 15);
}

TEST(Characterize, RefusesTooFewRequestsAndSpansBeyondTheLimit) {
  Characterizer one({});
  TraceRecord r;
  ASSERT_TRUE(one.Add(r).ok());
  EXPECT_FALSE(one.Finish().ok());
  Characterizer far({});
  ASSERT_TRUE(far.Add(r).ok());
  r.t_s = 1.7e9;  // epoch seconds after a 0: almost certainly a unit mix-up
  r.line = 3;
  auto s = far.Add(r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(":3: the trace spans more than 100 days (1.968e+04 days)"), std::string::npos)
      << s.message();
  r.t_s = 1e300;  // the span is printed short, never as 300 digits
  r.line = 4;
  auto huge = far.Add(r);
  ASSERT_FALSE(huge.ok());
  EXPECT_LT(huge.message().size(), 160u) << huge.message();
}

TEST(Fits, GammaAndLognormalCdfs) {
  EXPECT_NEAR(GammaCdf(1, 2, 2), 1 - std::exp(-1.0), 1e-12);  // shape 1 = exponential
  EXPECT_NEAR(GammaCdf(3, 1, 30), 1 - std::exp(-30.0) * (1 + 30 + 450), 1e-14);  // Q(3,x) = e^-x (1 + x + x^2/2)
  EXPECT_NEAR(GammaCdf(2.5, 1, 2.5), 0.58412, 1e-4);   // scipy.stats.gamma.cdf(2.5, 2.5)
  EXPECT_NEAR(GammaQuantile(2.5, 2, GammaCdf(2.5, 2, 7)), 7, 1e-6);
  EXPECT_NEAR(LognormalCdf(0, 1, 1), 0.5, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.99), 2.3263478740408408, 1e-8);
  const std::vector<double> s = {1, 2, 3, 4};
  EXPECT_NEAR(KsDistance(s, [](double x) { return std::min(1.0, x / 4); }), 0.25, 1e-12);
}

}  // namespace
}  // namespace infereng::trace
