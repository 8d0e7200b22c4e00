// libFuzzer harness for the Prometheus text-format parser and its histogram helpers.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "client/prometheus.h"

using namespace infereng::client;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scrape = ParsePrometheusText(text);
  if (!scrape.ok()) {
    if (scrape.status().message().find("metrics line ") != 0) __builtin_trap();
    return 0;
  }
  int checked = 0;
  for (const Sample& s : scrape->samples()) {
    if (++checked > 64) break;
    (void)scrape->TypeOf(s.name);
    (void)scrape->Value(s.name, s.labels);
    std::string_view name = s.name;
    if (name.ends_with("_bucket")) {
      auto h = scrape->Histogram(name.substr(0, name.size() - 7));
      if (h.ok()) {
        for (double q : {0.0, 0.5, 0.99, 1.0}) (void)h->Quantile(q);
        (void)HistogramData::Delta(*h, *h);
      }
    }
  }
  (void)CounterDelta(*scrape, *scrape, "x_total");
  return 0;
}
