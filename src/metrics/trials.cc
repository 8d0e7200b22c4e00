#include "metrics/trials.h"

#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace infereng::metrics {
namespace {

// Mean and t interval of `values`, cut to [lo, hi] (the metric's possible range).
TrialCi BoundedCi(std::span<const double> values, double lo, double hi) {
  TrialCi c;
  static_cast<stats::MeanCi&>(c) = stats::MeanConfidence95(values);
  c.defined = c.n >= kMinTrialsForCi;
  if (!c.defined) return c;
  if (c.low < lo) {
    c.low = lo;
    c.clamped = true;
  }
  if (c.high > hi) {
    c.high = hi;
    c.clamped = true;
  }
  return c;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TrialStats AggregateTrials(const std::vector<Summary>& trials) {
  TrialStats out;
  out.trials = static_cast<int64_t>(trials.size());
  using Field = double stats::SampleStats::*;
  static const std::pair<const char*, Field> kFields[] = {
      {"p50", &stats::SampleStats::p50},   {"p90", &stats::SampleStats::p90},
      {"p95", &stats::SampleStats::p95},   {"p99", &stats::SampleStats::p99},
      {"p99_9", &stats::SampleStats::p99_9}, {"mean", &stats::SampleStats::mean},
      {"min", &stats::SampleStats::min},   {"max", &stats::SampleStats::max}};
  for (const DistributionField& d : SummaryDistributions()) {
    for (const auto& [name, field] : kFields) {
      std::vector<double> values;
      for (const Summary& s : trials) {
        const stats::SampleStats& st = s.*(d.member);
        if (st.count > 0) values.push_back(st.*field);
      }
      // Every distribution is of durations, token counts or rates: none is negative.
      if (!values.empty()) out.distributions[d.key][name] = BoundedCi(values, 0, kInf);
    }
  }
  using Scalar = double Summary::*;
  static const std::pair<const char*, Scalar> kScalars[] = {
      {"output_tokens_per_s", &Summary::output_tokens_per_s},
      {"requests_per_s", &Summary::requests_per_s},
      {"goodput_rps", &Summary::goodput_rps},
      {"slo_attainment", &Summary::slo_attainment},
      {"offered_rps", &Summary::offered_rps},
      {"achieved_rps", &Summary::achieved_rps}};
  for (const auto& [name, field] : kScalars) {
    std::vector<double> values;
    for (const Summary& s : trials) values.push_back(s.*field);
    out.scalars[name] = BoundedCi(values, 0, std::string_view(name) == "slo_attainment" ? 1.0 : kInf);
  }
  // The quality pass rate, over the trials that checked something (absent when none did).
  std::vector<double> rates;
  for (const Summary& s : trials) {
    const auto& c = s.counts;
    if (c.quality_checked > 0) rates.push_back(static_cast<double>(c.quality_passed) / static_cast<double>(c.quality_checked));
  }
  if (!rates.empty()) out.scalars["quality_pass_rate"] = BoundedCi(rates, 0, 1.0);
  return out;
}

Result<LogHistogram> MergeRunHistograms(const std::vector<Summary>& runs, const std::string& key) {
  if (runs.empty()) return Status::InvalidArgument("no runs to merge");
  std::optional<LogHistogram> merged;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto it = runs[i].histograms.find(key);
    if (it == runs[i].histograms.end()) {
      return Status::FailedPrecondition("run " + std::to_string(i) + " has no \"" + key +
                                        "\" histogram (summarised in exact mode?)");
    }
    if (!merged) {
      merged = it->second;
      continue;
    }
    Status st = merged->Merge(it->second);
    if (!st.ok()) return st.WithContext("run " + std::to_string(i));
  }
  return *std::move(merged);
}

bool TrialPasses(const Summary& t, const TrialGate& gate) {
  if (gate.has_slos && !t.slo_pass) return false;
  return QualityMeetsThreshold(t.counts.quality_passed, t.counts.quality_checked, gate.quality_threshold);
}

TrialsVerdict JudgeTrials(const std::vector<Summary>& trials, const TrialGate& gate) {
  TrialsVerdict v;
  for (size_t i = 0; i < trials.size(); ++i) {
    if (!TrialPasses(trials[i], gate)) v.failed_trials.push_back(static_cast<int>(i) + 1);
  }
  v.pass = v.failed_trials.empty();
  return v;
}

nlohmann::json TrialsVerdictToJson(const std::vector<Summary>& trials, const TrialGate& gate) {
  const TrialsVerdict v = JudgeTrials(trials, gate);
  nlohmann::json per = nlohmann::json::array();
  for (size_t i = 0; i < trials.size(); ++i) {
    const Summary& t = trials[i];
    per.push_back({{"trial", i + 1},
                   {"pass", TrialPasses(t, gate)},
                   {"partial", t.partial},
                   {"slo_pass", t.slo_pass},
                   {"slo_attainment", t.slo_attainment},
                   {"goodput_rps", t.goodput_rps},
                   {"requests_per_s", t.requests_per_s},
                   {"output_tokens_per_s", t.output_tokens_per_s},
                   {"quality_pass_rate", t.counts.quality_checked > 0
                                             ? nlohmann::json(static_cast<double>(t.counts.quality_passed) /
                                                              static_cast<double>(t.counts.quality_checked))
                                             : nlohmann::json(nullptr)}});
  }
  return {{"rule", kTrialsRule}, {"pass", v.pass}, {"failed_trials", v.failed_trials}, {"per_trial", std::move(per)}};
}

namespace {
nlohmann::json CiJson(const TrialCi& ci) {
  return {{"n", ci.n},
          {"mean", ci.mean},
          {"stddev", ci.stddev},
          {"half_width", ci.defined ? nlohmann::json(ci.half_width) : nlohmann::json(nullptr)},
          {"ci_low", ci.defined ? nlohmann::json(ci.low) : nlohmann::json(nullptr)},
          {"ci_high", ci.defined ? nlohmann::json(ci.high) : nlohmann::json(nullptr)},
          {"defined", ci.defined},
          {"clamped", ci.clamped}};
}
}  // namespace

nlohmann::json TrialStatsToJson(const TrialStats& t) {
  nlohmann::json dists = nlohmann::json::object();
  for (const auto& [key, fields] : t.distributions) {
    for (const auto& [name, ci] : fields) dists[key][name] = CiJson(ci);
  }
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [name, ci] : t.scalars) scalars[name] = CiJson(ci);
  return {{"trials", t.trials},
          {"confidence", 0.95},
          {"interval", "Student t (n-1 dof) cut to the metric's range (>= 0; attainment <= 1); n/a below 3 trials"},
          {"distributions", std::move(dists)},
          {"scalars", std::move(scalars)}};
}

}  // namespace infereng::metrics
