#include "job/canary_paired.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <random>

#include "core/rank_stats.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"

namespace infereng::job {

namespace {

// numpy-linear percentile of `v` (reordered in place).
double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::optional<double> Value(const metrics::RequestMetrics& m, const std::string& key) {
  if (key == "ttft_ms") return m.ttft_ms;
  if (key == "tpot_ms") return m.tpot_ms;
  if (key == "e2e_ms") return m.e2e_ms;
  return std::nullopt;
}

PairedMetric Analyse(const PairedKey& k, const std::vector<std::pair<double, double>>& pairs, const PairedOptions& o,
                     uint64_t stream) {
  PairedMetric m{.key = k.key, .label = k.label, .criterion = k.criterion};
  m.pairs = static_cast<int64_t>(pairs.size());
  if (m.pairs == 0) return m;
  std::vector<double> d, base;
  for (const auto& [a, b] : pairs) {
    d.push_back(b - a);
    base.push_back(a);
    m.candidate_slower += b > a ? 1 : 0;
  }
  m.baseline_median = Percentile(base, 50);
  m.p_value = stats::WilcoxonSignedRank(d).p_value;
  std::vector<double> work = d;
  m.median = Percentile(work, 50);
  m.p90 = Percentile(work, 90);
  // Percentile bootstrap over pairs.
  std::mt19937_64 rng(o.seed ^ (0x9e3779b97f4a7c15ULL * (stream + 1)));
  std::uniform_int_distribution<std::size_t> pick(0, d.size() - 1);
  std::vector<double> medians, p90s, draw(d.size());
  for (int r = 0; r < o.resamples; ++r) {
    for (double& x : draw) x = d[pick(rng)];
    medians.push_back(Percentile(draw, 50));
    p90s.push_back(Percentile(draw, 90));
  }
  const double tail = 100 * (1 - o.confidence) / 2;
  m.median_low = Percentile(medians, tail);
  m.median_high = Percentile(medians, 100 - tail);
  m.p90_low = Percentile(p90s, tail);
  m.p90_high = Percentile(p90s, 100 - tail);
  if (m.pairs < kMinPairs) {
    m.verdict = PairedVerdict::kTooFew;
  } else if (m.p_value < 1 - o.confidence && m.median != 0) {
    m.verdict = m.median > 0 ? PairedVerdict::kWorse : PairedVerdict::kBetter;
  } else {
    m.verdict = PairedVerdict::kNoDifference;
  }
  return m;
}

}  // namespace

std::string_view PairedVerdictName(PairedVerdict v) {
  switch (v) {
    case PairedVerdict::kWorse: return "worse";
    case PairedVerdict::kBetter: return "better";
    case PairedVerdict::kNoDifference: return "no detectable difference";
    case PairedVerdict::kTooFew: return "too few pairs";
  }
  return "too few pairs";
}

const PairedMetric* PairedComparison::Find(const std::string& criterion) const {
  for (const PairedMetric& m : metrics) {
    if (m.criterion == criterion) return &m;
  }
  return nullptr;
}

PairedComparison ComparePaired(const std::vector<metrics::RequestRecord>& baseline,
                               const std::vector<metrics::RequestRecord>& candidate, const PairedOptions& options) {
  PairedComparison out;
  out.baseline_requests = static_cast<int64_t>(baseline.size());
  out.candidate_requests = static_cast<int64_t>(candidate.size());
  const metrics::DeriveOptions no_itl{.want_itl = false};
  std::map<uint64_t, metrics::RequestMetrics> by_id;  // the baseline's successful requests
  for (const metrics::RequestRecord& r : baseline) {
    if (r.ok()) by_id[r.id] = metrics::DeriveRequest(r, no_itl);
  }
  std::vector<std::vector<std::pair<double, double>>> pairs(std::size(kPairedKeys));
  for (const metrics::RequestRecord& r : candidate) {
    if (!r.ok()) continue;
    auto it = by_id.find(r.id);
    if (it == by_id.end()) continue;
    ++out.pairs;
    const metrics::RequestMetrics c = metrics::DeriveRequest(r, no_itl);
    for (std::size_t k = 0; k < std::size(kPairedKeys); ++k) {
      auto a = Value(it->second, kPairedKeys[k].key), b = Value(c, kPairedKeys[k].key);
      if (a && b) pairs[k].emplace_back(*a, *b);
    }
  }
  for (std::size_t k = 0; k < std::size(kPairedKeys); ++k) {
    out.metrics.push_back(Analyse(kPairedKeys[k], pairs[k], options, k));
  }
  return out;
}

Result<PairedComparison> ComparePairedDirs(const std::string& baseline_dir, const std::string& candidate_dir,
                                           const PairedOptions& options) {
  auto read = [](const std::string& dir) -> Result<std::vector<metrics::RequestRecord>> {
    const std::string path = (std::filesystem::path(dir) / "requests.jsonl").string();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::vector<metrics::RequestRecord>{};
    return metrics::ReadRecordsFile(path);
  };
  INFERENG_ASSIGN_OR_RETURN(auto a, read(baseline_dir));
  INFERENG_ASSIGN_OR_RETURN(auto b, read(candidate_dir));
  return ComparePaired(a, b, options);
}

std::string PairedText(const PairedMetric& m) {
  return fmt::format("{} paired: candidate {:+.3g} ms per request (median [{:+.3g}, {:+.3g}]; P90 {:+.3g} [{:+.3g}, "
                     "{:+.3g}]; {:+.1f}% of the baseline median {:.3g} ms), {} of {} pairs slower, Wilcoxon p = {:.2g}",
                     m.label, m.median, m.median_low, m.median_high, m.p90, m.p90_low, m.p90_high, 100 * m.relative(),
                     m.baseline_median, m.candidate_slower, m.pairs, m.p_value);
}

nlohmann::json PairedToJson(const PairedComparison& p) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const PairedMetric& m : p.metrics) {
    metrics.push_back({{"key", m.key},
                       {"criterion", m.criterion},
                       {"pairs", m.pairs},
                       {"baseline_median_ms", m.baseline_median},
                       {"median_diff_ms", {{"value", m.median}, {"low", m.median_low}, {"high", m.median_high}}},
                       {"p90_diff_ms", {{"value", m.p90}, {"low", m.p90_low}, {"high", m.p90_high}}},
                       {"candidate_slower", m.candidate_slower},
                       {"wilcoxon_p", m.p_value},
                       {"verdict", PairedVerdictName(m.verdict)}});
  }
  return {{"pairs", p.pairs},
          {"baseline_requests", p.baseline_requests},
          {"candidate_requests", p.candidate_requests},
          {"metrics", std::move(metrics)}};
}

}  // namespace infereng::job
