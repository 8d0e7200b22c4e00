// Trace characterization -> report.html (charts from svg_chart.h).
#include "report/trace_report.h"

#include <fmt/format.h>

#include "report/html_page.h"
#include "report/svg_chart.h"
#include "trace/datetime.h"

namespace infereng::report {
namespace {

std::string G(double v) { return fmt::format("{:.4g}", v); }
std::string Pct(double v) { return fmt::format("{:.1f}%", 100 * v); }

Series Cdf(const std::string& name, const std::vector<double>& sorted) {
  Series s{.name = fmt::format("{} (n={})", name, sorted.size()), .style = Series::Style::kLine};
  const auto n = static_cast<double>(sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (!(sorted[i] > 0)) continue;
    s.x.push_back(sorted[i]);
    s.y.push_back(static_cast<double>(i + 1) / n);
  }
  return s;
}

void Arrivals(HtmlPage& page, const trace::Characterization& c, const std::string& id) {
  const trace::ArrivalStats& a = c.arrivals;
  page.Kpis({{"requests", std::to_string(a.requests), "", Kpi::kNeutral},
             {"mean rate", G(a.mean_rate) + " req/s", "over " + G(a.span_s) + " s", Kpi::kNeutral},
             {"CV of gaps", G(a.gap_cv), "1 = poisson", Kpi::kNeutral},
             {"process", a.chosen, "for the card", Kpi::kNeutral}});
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < a.peak_to_mean.size(); ++i) {
    const auto& w = a.peak_to_mean[i];
    rows.push_back({"peak-to-mean " + G(w.window_s) + " s", w.windows > 0 ? G(w.value) : "n/a (trace shorter)",
                    w.windows > 0 ? G(w.peak_rate) + " req/s" : ""});
  }
  for (const auto& w : a.dispersion) {
    rows.push_back({"index of dispersion " + G(w.window_s) + " s", w.windows > 0 ? G(w.value) : "n/a", ""});
  }
  rows.push_back({"KS distance, poisson", G(a.poisson.ks_d), "5% critical " + G(a.ks_critical)});
  rows.push_back({"KS distance, gamma (cv " + G(a.gap_cv) + ")", G(a.gamma.ks_d), ""});
  if (a.zero_gaps > 0) rows.push_back({"equal consecutive times", std::to_string(a.zero_gaps), "coarse timestamps"});
  page.Table({"arrivals", "value", ""}, rows, {1});
  ChartSpec rate{.id = id + "-rate", .title = "Requests per minute", .subtitle = "from the first arrival"};
  rate.x.label = "minute";
  rate.y = {.label = "requests", .from_zero = true};
  Series s{.name = "requests/min", .style = Series::Style::kStep};
  for (std::size_t i = 0; i < a.per_minute.size(); ++i) {
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(static_cast<double>(a.per_minute[i]));
  }
  rate.series.push_back(std::move(s));
  rate.ref_lines.push_back({.vertical = false, .value = a.mean_rate * 60, .label = "mean", .color = "#555555"});
  page.BeginGrid();
  page.AddSvg(RenderChart(rate));
  ChartSpec len{.id = id + "-len", .title = "Token lengths (CDF)", .subtitle = "log x"};
  len.x = {.label = "tokens", .log = true};
  len.y = {.label = "share of requests", .from_zero = true};
  len.series.push_back(Cdf("input", c.input.sorted));
  len.series.push_back(Cdf("output", c.output.sorted));
  page.AddSvg(RenderChart(len));
  page.EndGrid();
}

void Lengths(HtmlPage& page, const trace::Characterization& c) {
  std::vector<std::vector<std::string>> rows;
  for (auto [name, l] : {std::pair{"input", &c.input}, std::pair{"output", &c.output}}) {
    const auto& s = l->stats;
    rows.push_back({name, G(s.mean), G(s.p50), G(s.p90), G(s.p99), G(s.p99_9), G(s.max),
                    fmt::format("lognormal D={} (q err {}), gamma D={} (q err {})", G(l->lognormal.ks_d),
                                Pct(l->lognormal.max_quantile_error), G(l->gamma.ks_d), Pct(l->gamma.max_quantile_error)),
                    l->card_form});
  }
  page.Table({"tokens", "mean", "p50", "p90", "p99", "p99.9", "max", "fits (KS distance, worst quantile error)", "card"},
             rows, {1, 2, 3, 4, 5, 6});
  page.Paragraph(fmt::format("Correlation of input and output lengths: Pearson {} (of logs: {}).", G(c.pearson),
                             G(c.pearson_log)));
}

void Prefix(HtmlPage& page, const trace::Characterization& c, const std::string& id) {
  const trace::PrefixStats& p = c.prefix;
  page.Kpis({{"requests with a cached prefix", Pct(p.cached_share), std::to_string(p.cached_prefix_requests), Kpi::kNeutral},
             {"reusable input tokens", Pct(p.reusable_share), "unbounded cache", Kpi::kNeutral},
             {"distinct blocks", std::to_string(p.distinct_blocks), std::to_string(p.block_tokens) + " tokens each",
              Kpi::kNeutral}});
  ChartSpec lru{.id = id + "-lru", .title = "Prefix-cache hit rate (LRU over blocks)", .subtitle = "blocks hit / looked up"};
  lru.x = {.label = "cache size (blocks)", .log = true};
  lru.y = {.label = "hit rate", .from_zero = true, .min = 0, .max = 1};
  Series s{.name = "LRU", .style = Series::Style::kLinePoints};
  for (const auto& l : p.lru) {
    s.x.push_back(static_cast<double>(l.blocks));
    s.y.push_back(l.hit_rate);
  }
  lru.series.push_back(std::move(s));
  lru.ref_lines.push_back({.vertical = false, .value = p.reusable_share, .label = "unbounded (tokens)", .color = "#555555"});
  page.BeginGrid();
  page.AddSvg(RenderChart(lru));
  page.EndGrid();
  if (!p.tenants.empty()) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : p.tenants) rows.push_back({t.tenant, std::to_string(t.requests), Pct(t.cached_share), Pct(t.reusable_share)});
    page.Table({"tenant", "requests", "cached prefix", "reusable tokens"}, rows, {1, 2, 3});
  }
}

}  // namespace

std::string TraceReportHtml(const std::vector<trace::Characterization>& traces) {
  HtmlPage page("infereng characterize");
  std::vector<std::string> lines;
  for (const auto& c : traces) lines.push_back(c.path + " (" + c.format + ", sha256 " + c.sha256.substr(0, 12) + ")");
  page.Header("Trace characterization", lines);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const trace::Characterization& c = traces[i];
    const std::string id = "trace" + std::to_string(i + 1);
    const auto& a = c.arrivals;
    const std::string period = c.absolute_time ? trace::FormatDateTime(a.first_t_s) + " .. " +
                                                     trace::FormatDateTime(a.last_t_s) + " UTC"
                                               : G(a.first_t_s) + " s .. " + G(a.last_t_s) + " s";
    page.BeginSection(id, c.path, "Period " + period + ", " + G(a.span_s) + " s.");
    Arrivals(page, c, id);
    Lengths(page, c);
    if (c.prefix.present) Prefix(page, c, id);
    if (c.sessions.present) {
      const auto& s = c.sessions;
      page.Table({"sessions", "count", "p50", "p90", "p99", "max"},
                 {{"turns per session", std::to_string(s.sessions), G(s.turns.p50), G(s.turns.p90), G(s.turns.p99), G(s.turns.max)},
                  {"time between turns (s)", std::to_string(s.gap_s.count), G(s.gap_s.p50), G(s.gap_s.p90), G(s.gap_s.p99), G(s.gap_s.max)},
                  {"context growth per turn (tokens)", std::to_string(s.growth_tokens.count), G(s.growth_tokens.p50),
                   G(s.growth_tokens.p90), G(s.growth_tokens.p99), G(s.growth_tokens.max)},
                  {"new message per turn (growth - previous output, tokens)", std::to_string(s.new_message_tokens.count),
                   G(s.new_message_tokens.p50), G(s.new_message_tokens.p90), G(s.new_message_tokens.p99),
                   G(s.new_message_tokens.max)}},
                 {1, 2, 3, 4, 5});
      if (s.source == "inferred") {
        page.Paragraph("The trace has no session ids: these sessions are inferred from its hash_ids (a request whose "
                       "leading blocks are all of an earlier request's whole blocks, past any prefix another "
                       "conversation carries, continues that conversation; docs/characterize.md). Turn counts are a "
                       "lower bound.");
      }
    }
    if (c.littles) {
      page.Paragraph(fmt::format("Little's law at {} s ({}): {} requests in flight at the mean rate, {} at the busiest "
                                 "minute, {} at the busiest second.",
                                 G(c.littles->latency_s), c.littles->basis, G(c.littles->at_mean),
                                 G(c.littles->at_peak_1min), G(c.littles->at_peak_1s)));
    }
    page.EndSection();
  }
  return page.Finish();
}

}  // namespace infereng::report
