// probe.html against the embedded engine: written beside probe.json, a chart per probe
// that ran, the event lines, and the same numbers probe.json holds (values compared); the
// trace checked against the engine's own counters.
#include "job/probe_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "report/escape.h"
#include "serve/paced_engine.h"
#include "serve/server.h"

namespace infereng::job {
namespace {

constexpr Nanos kMs = kNanosPerMilli;

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The number in the table cell after the row headed `name` in section `section` of `html`.
double CellAfter(const std::string& html, const std::string& section, const std::string& name) {
  const std::size_t sec = html.find("id=\"" + section + "\"");
  if (sec == std::string::npos) return NAN;
  const std::string key = "<td>" + report::EscapeXml(name) + "</td><td class=\"num\">";
  const std::size_t at = html.find(key, sec);
  if (at == std::string::npos) return NAN;
  const std::string cell = html.substr(at + key.size(), html.find("</td>", at + key.size()) - at - key.size());
  return cell == "n/a" ? NAN : std::stod(cell);
}

TEST(ProbeReport, HtmlHasAChartPerProbeTheEventLinesAndProbeJsonsNumbers) {
  const std::string dir = ::testing::TempDir() + "/probe_report_test";
  std::filesystem::remove_all(dir);
  serve::ServerOptions so{.port = 0, .max_waiting = 4, .retry_after = kNanosPerSecond};
  so.merge_late_tokens = false;
  serve::Server server(so, std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{
                               .ttft_base = 5 * kMs, .prefill_per_token = 0, .itl = 5 * kMs, .max_running = 4}));
  auto port = server.Start();
  ASSERT_TRUE(port.ok());
  ProbeSuiteOptions o;
  o.target = "http://127.0.0.1:" + std::to_string(*port);
  o.client.base_url = o.target;
  o.client.connect_timeout = 2 * kNanosPerSecond;
  o.only = {"overload", "cancellation"};
  o.out_dir = dir;
  o.settings.output_tokens = 8;
  o.settings.health_backoff = 500 * kMs;
  auto out = RunProbeSuite(o);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->results.size(), 2u);
  EXPECT_EQ(out->html_path, dir + "/probe.html");
  ASSERT_TRUE(std::filesystem::exists(dir + "/probe.html"));
  const std::string html = Slurp(dir + "/probe.html");
  const nlohmann::json j = nlohmann::json::parse(Slurp(dir + "/probe.json"));
  ASSERT_EQ(j["probes"].size(), 2u);

  for (const nlohmann::json& p : j["probes"]) {
    const std::string name = p["name"];
    SCOPED_TRACE(name);
    EXPECT_NE(html.find("id=\"probe-" + name + "\""), std::string::npos) << "a section per probe";
    EXPECT_NE(html.find("<h2>" + name + ": " + p["verdict"].get<std::string>()), std::string::npos);
    EXPECT_NE(html.find("probe-" + name + "-latency"), std::string::npos) << "a latency chart per probe";
    EXPECT_NE(html.find("probe-" + name + "-queue"), std::string::npos) << "an engine-signal chart per probe";
    // Every evidence number, value for value (6 significant digits: the report's precision).
    ASSERT_FALSE(p["evidence"].empty());
    for (const auto& [key, ev] : p["evidence"].items()) {
      const nlohmann::json& v = ev.is_object() ? ev["value"] : ev;
      const double shown = CellAfter(html, "probe-" + name, key);
      if (v.is_null()) {
        EXPECT_TRUE(std::isnan(shown)) << key;
        continue;
      }
      EXPECT_NEAR(shown, v.get<double>(), 1e-5 * std::max(1.0, std::abs(v.get<double>()))) << key;
    }
    // Each event is a dashed line on the charts (its label in the line's <title>) and a table row.
    ASSERT_FALSE(p["timeline"].empty());
    for (std::size_t i = 0; i < p["timeline"].size(); ++i) {
      const nlohmann::json& e = p["timeline"][i];
      const double t_ms = e["t_ms"];
      const std::string what = e["event"];
      if (i < kMaxEventLines) {
        const std::string label = fmt::format("{:.2f} s: {}", t_ms / 1000, what.substr(0, 57));
        EXPECT_NE(html.find("<title>" + report::EscapeXml(label)), std::string::npos) << label;
      }
      EXPECT_NE(html.find("<td class=\"num\">" + fmt::format("{:.1f}", t_ms) + "</td><td>" + report::EscapeXml(what)),
                std::string::npos)
          << what;
    }
  }

  // The trace is the engine's own story: overload's refused requests are the ones the
  // server rejected, and its running count never passed the engine's 4 slots.
  const ProbeResult& overload = out->results[0];
  ASSERT_EQ(overload.name, "overload");
  const auto refused = std::count_if(overload.trace.requests.begin(), overload.trace.requests.end(),
                                     [](const ProbeRequestPoint& r) { return r.status == 429; });
  EXPECT_EQ(static_cast<double>(refused), overload.Get("refused"));
  EXPECT_EQ(j["probes"][0]["trace"]["requests"].size(), overload.trace.requests.size());
  ASSERT_FALSE(overload.trace.signals.empty());
  double max_running = 0;
  for (const ProbeSignalPoint& s : overload.trace.signals) max_running = std::max(max_running, s.running);
  EXPECT_GT(max_running, 0) << "scraped during the bursts";
  EXPECT_LE(max_running, 4);
  const ProbeResult& cancel = out->results[1];
  EXPECT_EQ(std::count_if(cancel.trace.requests.begin(), cancel.trace.requests.end(),
                          [](const ProbeRequestPoint& r) { return r.cancelled; }),
            4);
}

}  // namespace
}  // namespace infereng::job
