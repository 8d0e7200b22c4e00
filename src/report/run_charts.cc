#include "report/run_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "report/svg_chart.h"

namespace infereng::report {
namespace {

const std::string kSloColor = "#c0392b";

Series Cdf(std::string name, std::vector<double> values, std::string color, bool dashed) {
  std::sort(values.begin(), values.end());
  Series s{.name = fmt::format("{} (n={})", name, values.size()), .style = Series::Style::kLine};
  s.color = std::move(color);
  s.dashed = dashed;
  double n = static_cast<double>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    s.x.push_back(values[i]);
    s.y.push_back(static_cast<double>(i + 1) / n);
  }
  return s;
}

// In the measurement window (t_sched in [start, end] relative to t0), as the summary's
// percentiles are; everything counts when there is no summary.
bool InWindow(const RunData& run, const RequestRow& r) {
  if (!run.summary || r.record.t_sched < 0) return true;
  double t = RelMs(r.record.t_sched) / 1000;
  return t >= run.summary->window_start_s - 1e-9 && t <= run.summary->window_end_s + 1e-9;
}

template <typename F>
std::vector<double> Collect(const RunData& run, F&& get) {
  std::vector<double> v;
  for (const RequestRow& r : run.rows) {
    if (!r.record.ok() || !InWindow(run, r)) continue;
    std::optional<double> x = get(r);
    if (x && std::isfinite(*x)) v.push_back(*x);
  }
  return v;
}

// Log x when the data spans more than ~1.5 decades.
bool WantLog(const std::vector<Series>& series) {
  double lo = INFINITY, hi = 0;
  for (const Series& s : series) {
    for (double x : s.x) {
      if (x > 0) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
    }
  }
  return hi > 0 && lo < INFINITY && hi / lo > 30;
}

void AddSloLines(const RunData& run, std::initializer_list<std::string_view> metrics, ChartSpec& c, bool vertical) {
  if (!run.summary) return;
  for (const metrics::SloResult& slo : run.summary->slo) {
    if (std::find(metrics.begin(), metrics.end(), slo.metric) == metrics.end()) continue;
    std::string label = fmt::format("SLO {} p{:g} ≤ {:g} ms{}", slo.metric.substr(0, slo.metric.rfind("_ms")),
                                    slo.percentile, slo.threshold_ms, slo.pass ? "" : " (missed)");
    c.ref_lines.push_back({.vertical = vertical, .value = slo.threshold_ms, .label = label, .color = kSloColor});
    if (vertical) {
      c.ref_lines.push_back({.vertical = false, .value = slo.percentile / 100, .label = "", .color = "#e8a39b"});
    }
  }
}


}  // namespace

bool OpenLoop(const RunData& run) { return !run.summary || run.summary->open_loop; }

std::vector<std::string> LatencyCdfCharts(const RunData& run, const RunChartOptions& o) {
  std::vector<std::string> out;
  bool open = OpenLoop(run);
  auto ttft = [&](const RunData& d, bool incl) {
    return Collect(d, [&](const RequestRow& r) { return incl ? r.m.ttft_incl_queue_ms : r.m.ttft_ms; });
  };
  auto e2e = [&](const RunData& d, bool incl) {
    return Collect(d, [&](const RequestRow& r) { return incl ? r.m.e2e_incl_queue_ms : r.m.e2e_ms; });
  };
  auto itl = [](const RunData& d) {
    std::vector<double> v;
    for (const RequestRow& r : d.rows) {
      if (r.record.ok() && InWindow(d, r)) v.insert(v.end(), r.m.itl_ms.begin(), r.m.itl_ms.end());
    }
    return v;
  };
  auto itl_p99 = [](const RunData& d) { return Collect(d, [](const RequestRow& r) { return r.m.itl_p99_ms; }); };

  // TTFT
  {
    ChartSpec c{.id = o.id_prefix + "-cdf-ttft", .title = "TTFT distribution (CDF)"};
    // Same population as the summary's percentiles: successful requests in the window.
    c.subtitle = open ? "incl. queue = from the intended send (what the SLO uses in open loop); from send = from the first byte sent"
                      : "from the first byte sent (closed loop)";
    c.x.label = "time to first token (ms)";
    c.y = {.label = "share of requests ≤ x", .min = 0, .max = 1};
    std::vector<double> incl = ttft(run, true), send = ttft(run, false);
    if (open) c.series.push_back(Cdf("TTFT incl. queue", incl, PaletteColor(0), false));
    c.series.push_back(Cdf("TTFT from send", send, PaletteColor(open ? 4 : 0), false));
    if (o.predicted) c.series.push_back(Cdf("predicted (twin)", ttft(*o.predicted, open), PaletteColor(1), true));
    if (run.summary && run.summary->counts.with_reasoning > 0) {
      // A reasoning model: the first answer token, after the reasoning (docs/metrics.md).
      auto visible = [open](const RunData& d) {
        return Collect(d, [open](const RequestRow& r) { return open ? r.m.ttft_visible_incl_queue_ms : r.m.ttft_visible_ms; });
      };
      c.series.push_back(Cdf("TTFT visible (after reasoning)", visible(run), PaletteColor(2), false));
      if (o.predicted) c.series.push_back(Cdf("predicted visible (twin)", visible(*o.predicted), PaletteColor(3), true));
    }
    AddSloLines(run, {"ttft_ms", "ttft_visible_ms"}, c, true);
    c.x.log = WantLog(c.series);
    out.push_back(RenderChart(c));
  }
  // ITL
  {
    ChartSpec c{.id = o.id_prefix + "-cdf-itl", .title = "Inter-token latency distribution (CDF)"};
    std::vector<double> pooled = itl(run), per_req = itl_p99(run);
    c.subtitle = "pooled token-expanded ITL, and each request's own P99 ITL (one bad stream cannot hide in the pool)";
    c.x.label = "inter-token latency (ms)";
    c.y = {.label = "share ≤ x", .min = 0, .max = 1};
    c.series.push_back(Cdf("ITL pooled", pooled, PaletteColor(0), false));
    c.series.push_back(Cdf("per-request P99 ITL", per_req, PaletteColor(2), false));
    if (o.predicted) c.series.push_back(Cdf("predicted ITL (twin)", itl(*o.predicted), PaletteColor(1), true));
    AddSloLines(run, {"itl_ms", "tpot_ms"}, c, true);
    c.x.log = WantLog(c.series);
    out.push_back(RenderChart(c));
  }
  // E2E
  {
    ChartSpec c{.id = o.id_prefix + "-cdf-e2e", .title = "End-to-end latency distribution (CDF)"};
    c.subtitle = open ? "incl. queue = from the intended send to the last token" : "from send to the last token";
    c.x.label = "end-to-end latency (ms)";
    c.y = {.label = "share of requests ≤ x", .min = 0, .max = 1};
    if (open) c.series.push_back(Cdf("E2E incl. queue", e2e(run, true), PaletteColor(0), false));
    c.series.push_back(Cdf("E2E from send", e2e(run, false), PaletteColor(open ? 4 : 0), false));
    if (o.predicted) c.series.push_back(Cdf("predicted (twin)", e2e(*o.predicted, open), PaletteColor(1), true));
    AddSloLines(run, {"e2e_ms"}, c, true);
    c.x.log = WantLog(c.series);
    out.push_back(RenderChart(c));
  }
  return out;
}

namespace {

// Level of a +1/-1 event process at each of `times` (events sorted internally).
std::vector<double> LevelAt(std::vector<std::pair<double, int>> events, const std::vector<double>& times) {
  std::sort(events.begin(), events.end());
  std::vector<double> out;
  std::size_t i = 0;
  int level = 0;
  for (double t : times) {
    while (i < events.size() && events[i].first <= t) level += events[i++].second;
    out.push_back(level);
  }
  return out;
}

}  // namespace

std::vector<std::string> OverTimeCharts(const RunData& run, const RunChartOptions& o) {
  std::vector<std::string> out;
  bool open = OpenLoop(run);
  double window_lo = run.summary ? run.summary->window_start_s : NAN;
  double window_hi = run.summary ? run.summary->window_end_s : NAN;
  auto window_lines = [&](ChartSpec& c) {
    if (std::isfinite(window_lo) && window_lo > 0) c.ref_lines.push_back({.value = window_lo, .label = "window start", .color = "#999999"});
    if (std::isfinite(window_hi) && window_hi > window_lo) c.ref_lines.push_back({.value = window_hi, .label = "window end", .color = "#999999"});
  };
  {
    ChartSpec c{.id = o.id_prefix + "-ttft-time", .title = "TTFT over time"};
    c.subtitle = "each dot is a request at its send time; the line is the P99 per time bucket";
    c.x = {.label = "time since start (s)", .from_zero = true};
    c.y = {.label = open ? "TTFT incl. queue (ms)" : "TTFT (ms)", .from_zero = true};
    Series dots{.name = "request", .style = Series::Style::kPoints};
    dots.color = PaletteColor(0);
    for (const RequestRow& r : run.rows) {
      auto v = open ? r.m.ttft_incl_queue_ms : r.m.ttft_ms;
      if (!r.record.ok() || !v || r.record.t_send < 0) continue;
      dots.x.push_back(RelMs(r.record.t_send) / 1000);
      dots.y.push_back(*v);
    }
    c.series.push_back(std::move(dots));
    if (run.summary && !run.summary->timeseries.empty()) {
      Series p99{.name = "P99 TTFT from send (bucket)", .style = Series::Style::kLine};
      p99.color = PaletteColor(5);
      for (const metrics::TimeBucket& b : run.summary->timeseries) {
        if (b.ttft_count == 0) continue;
        p99.x.push_back(b.start_s + b.width_s / 2);
        p99.y.push_back(b.ttft_p99_ms);
      }
      c.series.push_back(std::move(p99));
    }
    AddSloLines(run, {"ttft_ms"}, c, false);
    window_lines(c);
    out.push_back(RenderChart(c));
  }
  {
    ChartSpec c{.id = o.id_prefix + "-itl-time", .title = "ITL over time"};
    c.subtitle = "per request at its first token: P99 ITL and TPOT";
    c.x = {.label = "time since start (s)", .from_zero = true};
    c.y = {.label = "ms per token", .from_zero = true};
    Series p99{.name = "request P99 ITL", .style = Series::Style::kPoints}, tpot{.name = "request TPOT", .style = Series::Style::kPoints};
    p99.color = PaletteColor(0);
    tpot.color = PaletteColor(2);
    for (const RequestRow& r : run.rows) {
      if (!r.record.ok() || r.record.chunks.empty()) continue;
      double t = RelMs(r.record.chunks.front().t) / 1000;
      if (r.m.itl_p99_ms) { p99.x.push_back(t); p99.y.push_back(*r.m.itl_p99_ms); }
      if (r.m.tpot_ms) { tpot.x.push_back(t); tpot.y.push_back(*r.m.tpot_ms); }
    }
    c.series.push_back(std::move(p99));
    c.series.push_back(std::move(tpot));
    AddSloLines(run, {"itl_ms", "tpot_ms"}, c, false);
    window_lines(c);
    out.push_back(RenderChart(c));
  }
  {
    // In flight and (when the server breakdown is known) queued, from the raw records.
    std::vector<std::pair<double, int>> flight, queued;
    double t_max = 0;
    for (const RequestRow& r : run.rows) {
      const auto& rec = r.record;
      if (rec.t_send < 0) continue;
      double s = RelMs(rec.t_send) / 1000;
      double e = rec.t_end >= 0 ? RelMs(rec.t_end) / 1000 : (rec.chunks.empty() ? s : RelMs(rec.chunks.back().t) / 1000);
      flight.push_back({s, +1});
      flight.push_back({e, -1});
      t_max = std::max(t_max, e);
      if (rec.t_server_scheduled >= 0) {
        queued.push_back({s, +1});
        queued.push_back({RelMs(rec.t_server_scheduled) / 1000, -1});
      }
    }
    ChartSpec c{.id = o.id_prefix + "-inflight", .title = "In flight and queued over time"};
    c.subtitle = queued.empty() ? "requests between send and end (the server's queue is not visible to a client)"
                                : "in flight = between send and end; queued = sent but not yet scheduled by the server";
    c.x = {.label = "time since start (s)", .from_zero = true};
    c.y = {.label = "requests", .from_zero = true};
    std::vector<double> times;
    for (int i = 0; i <= 300 && t_max > 0; ++i) times.push_back(t_max * i / 300);
    Series f{.name = "in flight", .x = times, .y = LevelAt(flight, times), .style = Series::Style::kStep};
    c.series.push_back(std::move(f));
    if (!queued.empty()) {
      Series q{.name = "queued (server)", .x = times, .y = LevelAt(queued, times), .style = Series::Style::kStep};
      q.color = PaletteColor(1);
      c.series.push_back(std::move(q));
    }
    window_lines(c);
    out.push_back(RenderChart(c));
  }
  if (run.summary && !run.summary->timeseries.empty()) {
    ChartSpec c{.id = o.id_prefix + "-rates", .title = "Sent and completed per second"};
    c.subtitle = "completions falling behind sends while latency grows = saturation";
    c.x = {.label = "time since start (s)", .from_zero = true};
    c.y = {.label = "requests / s", .from_zero = true};
    Series sent{.name = "sent/s", .style = Series::Style::kLine}, done{.name = "completed/s", .style = Series::Style::kLine},
        err{.name = "errors/s", .style = Series::Style::kLine};
    err.color = kSloColor;
    bool any_err = false;
    for (const metrics::TimeBucket& b : run.summary->timeseries) {
      double mid = b.start_s + b.width_s / 2, w = b.width_s > 0 ? b.width_s : 1;
      sent.x.push_back(mid);
      sent.y.push_back(b.sent / w);
      done.x.push_back(mid);
      done.y.push_back(b.completed / w);
      err.x.push_back(mid);
      err.y.push_back(b.errors / w);
      any_err |= b.errors > 0;
    }
    c.series.push_back(std::move(sent));
    c.series.push_back(std::move(done));
    if (any_err) c.series.push_back(std::move(err));
    window_lines(c);
    out.push_back(RenderChart(c));
  }
  return out;
}

std::string WaterfallChart(const RunData& run, const RunChartOptions& o) {
  WaterfallSpec w{.id = o.id_prefix + "-waterfall", .title = "Request waterfall (sample)"};
  w.width = 1100;
  w.x_label = "ms since the request was scheduled";
  w.phases = {{"client lag (sched→send)", "#bbbbbb"},
              {"server queue", "#e69f00"},
              {"prefill", "#0072b2"},
              {"decode", "#009e73"},
              {"send→first token", "#56b4e9"},
              {"until error", "#f2b8b0"}};
  std::vector<const RequestRow*> rows;
  for (const RequestRow& r : run.rows) {
    if (r.record.t_send >= 0) rows.push_back(&r);
  }
  std::sort(rows.begin(), rows.end(), [](const RequestRow* a, const RequestRow* b) {
    Nanos ta = a->record.t_sched >= 0 ? a->record.t_sched : a->record.t_send;
    Nanos tb = b->record.t_sched >= 0 ? b->record.t_sched : b->record.t_send;
    return ta < tb;
  });
  std::size_t n = std::min(rows.size(), o.waterfall_rows);
  bool server_known = false;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& rec = rows[rows.size() <= n || n < 2 ? k : k * (rows.size() - 1) / (n - 1)]->record;
    Nanos origin = rec.t_sched >= 0 ? rec.t_sched : rec.t_send;
    auto ms = [&](Nanos t) { return static_cast<double>(t - origin) / 1e6; };
    WaterfallRow row{.label = fmt::format("#{} @{:.1f}s", rec.id, RelMs(origin) / 1000)};
    row.error = !rec.ok() && rec.error != metrics::ErrorClass::kInterrupted;  // cancelled by the interrupt: no error
    double send = ms(rec.t_send);
    if (send > 0) row.segments.push_back({0, send, 0});
    Nanos first = rec.chunks.empty() ? -1 : rec.chunks.front().t;
    Nanos last = rec.chunks.empty() ? -1 : rec.chunks.back().t;
    if (rec.t_server_scheduled >= 0) {
      server_known = true;
      row.segments.push_back({send, ms(rec.t_server_scheduled), 1});
      Nanos prefill_end = rec.t_prefill_done >= 0 ? rec.t_prefill_done : first;
      if (prefill_end >= 0) row.segments.push_back({ms(rec.t_server_scheduled), ms(prefill_end), 2});
      if (prefill_end >= 0 && last >= 0) row.segments.push_back({ms(prefill_end), ms(last), 3});
    } else if (first >= 0) {
      row.segments.push_back({send, ms(first), 4});
      row.segments.push_back({ms(first), ms(last), 3});
    }
    if (row.error && rec.t_end >= 0) {
      double from = last >= 0 ? ms(last) : send;
      row.segments.push_back({from, std::max(from, ms(rec.t_end)), 5});
    }
    row.tooltip = fmt::format("request {}: {} output tokens{}{}", rec.id, rec.OutputTokens(),
                              rec.ok() ? "" : ", error: ", rec.ok() ? "" : rec.error_message);
    w.rows.push_back(std::move(row));
  }
  w.subtitle = fmt::format("{} of {} requests, evenly spaced in schedule order; {}", n, rows.size(),
                           server_known ? "queue and prefill from the server's own timestamps (twin)"
                                        : "a client sees send → first token → last token only");
  return RenderWaterfall(w);
}

std::string TtftSplitChart(const RunData& run, const RunChartOptions& o) {
  std::vector<const RequestRow*> rows;
  bool any_without_queue = false;
  for (const RequestRow& r : run.rows) {
    if (!r.record.ok() || !r.m.ttft_client_network_ms) continue;
    rows.push_back(&r);
    any_without_queue = any_without_queue || r.m.split_includes_queue;
  }
  if (rows.empty()) return "";
  std::sort(rows.begin(), rows.end(), [](const RequestRow* a, const RequestRow* b) { return *a->m.ttft_ms < *b->m.ttft_ms; });
  WaterfallSpec w{.id = o.id_prefix + "-ttft-split", .title = "TTFT split per request (sorted by TTFT)"};
  w.width = 1100;
  w.x_label = "ms of TTFT, stacked: server queue, server prefill, then client+network";
  w.phases = {{"server queue", "#e69f00"}, {"server prefill", "#0072b2"}, {"client+network", "#56b4e9"}};
  const std::size_t n = std::min(rows.size(), o.waterfall_rows);
  for (std::size_t k = 0; k < n; ++k) {
    const RequestRow& r = *rows[rows.size() <= n || n < 2 ? k : k * (rows.size() - 1) / (n - 1)];
    const double queue = r.m.queue_ms.value_or(0), prefill = *r.m.prefill_ms, rest = *r.m.ttft_client_network_ms;
    WaterfallRow row{.label = fmt::format("#{} {:.1f} ms", r.record.id, *r.m.ttft_ms)};
    if (r.m.queue_ms) row.segments.push_back({0, queue, 0});
    row.segments.push_back({queue, queue + prefill, 1});
    // A negative remainder (clocks that disagree) is drawn as nothing, never as a bar.
    if (rest > 0) row.segments.push_back({queue + prefill, queue + prefill + rest, 2});
    row.tooltip = fmt::format("request {}: TTFT {:.2f} ms = queue {} + prefill {:.2f} ms + client+network {:.2f} ms",
                              r.record.id, *r.m.ttft_ms, r.m.queue_ms ? fmt::format("{:.2f} ms", queue) : "n/a",
                              prefill, rest);
    w.rows.push_back(std::move(row));
  }
  w.subtitle = fmt::format(
      "{} of {} requests. Queue: arrival at the engine → first scheduled; prefill: first scheduled → first "
      "token (the engine's own clock); client+network: TTFT (send → first token at the client) − queue − prefill{}",
      n, rows.size(), any_without_queue ? "; the engine reports no queue time, so client+network includes it" : "");
  return RenderWaterfall(w);
}

std::string ErrorChart(const RunData& run, const RunChartOptions& o) {
  std::map<std::string, double> by_class;
  if (run.summary) {
    for (const auto& [k, v] : run.summary->errors) by_class[k] += static_cast<double>(v);
  } else {
    for (const RequestRow& r : run.rows) {
      // Cancelled by the run's interrupt: not an error of the server (metrics.md).
      if (!r.record.ok() && r.record.error != metrics::ErrorClass::kInterrupted) {
        by_class[std::string(metrics::ErrorClassName(r.record.error))] += 1;
      }
    }
  }
  if (by_class.empty()) return "";
  BarChartSpec b{.id = o.id_prefix + "-errors", .title = "Errors by class", .value_label = "requests"};
  b.subtitle = run.summary ? "in the measurement window" : "all records";
  for (const auto& kv : by_class) b.bars.push_back(kv);
  std::sort(b.bars.begin(), b.bars.end(), [](const auto& a, const auto& c) { return a.second > c.second; });
  return RenderBarChart(b);
}

}  // namespace infereng::report
