// Prometheus text exposition format (0.0.4) parser, for scraping an engine's /metrics
// before and after a run (vLLM `vllm:*`, SGLang `sglang:*`, TGI `tgi_*`, llama.cpp
// `llamacpp:*`, TensorRT-LLM, Triton `nv_*`; names: docs/engines.md §3).
//
// Parses `# HELP` / `# TYPE` lines, samples `name{label="v",...} value [timestamp]` with
// escaped label values (\\ \" \n), NaN/+Inf/-Inf, CRLF. Bad input is an InvalidArgument
// naming the line ("metrics line 12: ..."), never a crash. Helpers answer the questions a
// report asks: a series' value (summed over label sets), counter growth between two
// scrapes, and a histogram (merged over label sets) with Prometheus-style quantiles.
//
// Thread-safety: a Scrape is an immutable value after parsing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace infereng::client {

enum class MetricType { kUntyped, kCounter, kGauge, kHistogram, kSummary };
std::string_view MetricTypeName(MetricType type);

struct Label {
  std::string name;
  std::string value;
};

struct Sample {
  std::string name;
  std::vector<Label> labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;

  // The value of label `name`, or nullopt.
  std::optional<std::string_view> LabelValue(std::string_view name) const;
  // True when every label in `match` is present with the same value.
  bool Matches(const std::vector<Label>& match) const;
};

struct MetricFamily {
  std::string name;
  MetricType type = MetricType::kUntyped;
  std::string help;
};

// Cumulative histogram: buckets sorted by upper bound `le` (the last is +Inf).
struct HistogramData {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  double sum = 0;
  double count = 0;

  // Prometheus histogram_quantile semantics (linear within the bucket); NaN when empty.
  // Not core's percentile rule: there are only bucket counts (why: docs/ARCHITECTURE.md).
  double Quantile(double q) const;
  double Mean() const { return count > 0 ? sum / count : 0; }
  // after - before, bucket by bucket (both from the same family; buckets matched by le).
  static HistogramData Delta(const HistogramData& after, const HistogramData& before);
};

class Scrape {
 public:
  const std::vector<Sample>& samples() const { return samples_; }
  const std::map<std::string, MetricFamily, std::less<>>& families() const { return families_; }

  // Sum of the values of samples named `name` whose labels match; nullopt when none.
  std::optional<double> Value(std::string_view name, const std::vector<Label>& match = {}) const;
  // The first of `names` that is present (engines renamed metrics across versions).
  std::optional<double> FirstValue(const std::vector<std::string_view>& names,
                                    const std::vector<Label>& match = {}) const;
  // Type of a sample name, resolving _bucket/_sum/_count/_total suffixes to the family.
  MetricType TypeOf(std::string_view sample_name) const;
  // Histogram `family` (its _bucket/_sum/_count samples), merged over matching label sets.
  // NotFound when no bucket sample exists.
  Result<HistogramData> Histogram(std::string_view family, const std::vector<Label>& match = {}) const;

 private:
  friend Result<Scrape> ParsePrometheusText(std::string_view text);
  std::vector<Sample> samples_;
  std::map<std::string, MetricFamily, std::less<>> families_;
};

Result<Scrape> ParsePrometheusText(std::string_view text);

// Growth of a counter between two scrapes (after - before); nullopt when missing in either.
// A negative difference (the engine restarted) yields the after value.
std::optional<double> CounterDelta(const Scrape& before, const Scrape& after, std::string_view name,
                                   const std::vector<Label>& match = {});

}  // namespace infereng::client
