#include "client/engine_metrics.h"

#include <string>

namespace infereng::client {

using nlohmann::json;

json EngineMetricsDelta(const Scrape& before, const Scrape& after) {
  json j = json::object();
  json counters = json::object();
  json gauges = json::object();
  json hist = json::object();
  for (const EngineMetric& m : kEngineMetrics) {
    const std::string name(m.name);
    switch (m.kind) {
      case EngineMetricKind::kCounter:
        if (auto d = CounterDelta(before, after, name)) counters[name] = *d;
        break;
      case EngineMetricKind::kGauge:
        if (auto v = after.Value(name)) gauges[name] = *v;
        break;
      case EngineMetricKind::kHistogram: {
        Result<HistogramData> a = after.Histogram(name);
        if (!a.ok()) break;
        Result<HistogramData> b = before.Histogram(name);
        HistogramData d = b.ok() ? HistogramData::Delta(*a, *b) : *a;
        if (d.count <= 0) break;
        hist[name] = {{"count", d.count}, {"mean_s", d.Mean()}, {"p50_s", d.Quantile(0.5)}, {"p99_s", d.Quantile(0.99)}};
        break;
      }
    }
  }
  const char* queries = "vllm:prefix_cache_queries_total";
  const char* hits = "vllm:prefix_cache_hits_total";
  if (counters.contains(queries) && counters[queries].get<double>() > 0 && counters.contains(hits)) {
    j["prefix_cache_hit_rate"] = counters[hits].get<double>() / counters[queries].get<double>();
  }
  j["counters_delta"] = counters;
  j["gauges_after"] = gauges;
  j["histograms_delta"] = hist;
  return j;
}

}  // namespace infereng::client
