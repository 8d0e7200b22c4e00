#include "metrics/trials.h"

#include <optional>
#include <utility>

namespace infereng::metrics {

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
      if (!values.empty()) out.distributions[d.key][name] = stats::MeanConfidence95(values);
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
    out.scalars[name] = stats::MeanConfidence95(values);
  }
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

namespace {
nlohmann::json CiJson(const stats::MeanCi& ci) {
  return {{"n", ci.n},
          {"mean", ci.mean},
          {"stddev", ci.stddev},
          {"half_width", ci.half_width},
          {"ci_low", ci.low},
          {"ci_high", ci.high},
          {"defined", ci.defined}};
}
}  // namespace

nlohmann::json TrialStatsToJson(const TrialStats& t) {
  nlohmann::json dists = nlohmann::json::object();
  for (const auto& [key, fields] : t.distributions) {
    for (const auto& [name, ci] : fields) dists[key][name] = CiJson(ci);
  }
  nlohmann::json scalars = nlohmann::json::object();
  for (const auto& [name, ci] : t.scalars) scalars[name] = CiJson(ci);
  return {{"trials", t.trials}, {"confidence", 0.95}, {"distributions", std::move(dists)},
          {"scalars", std::move(scalars)}};
}

}  // namespace infereng::metrics
