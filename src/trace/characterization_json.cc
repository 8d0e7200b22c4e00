// Characterization -> JSON.
#include "trace/characterization_json.h"

#include "trace/datetime.h"

namespace infereng::trace {
namespace {

using json = nlohmann::json;

json Stats(const stats::SampleStats& s) {
  if (s.empty()) return nullptr;
  return {{"count", s.count}, {"mean", s.mean}, {"stddev", s.stddev}, {"min", s.min}, {"p50", s.p50},
          {"p90", s.p90},     {"p95", s.p95},   {"p99", s.p99},       {"p99_9", s.p99_9}, {"max", s.max}};
}

json Fit(const FitResult& f, bool lengths = false) {
  if (f.name.empty()) return nullptr;
  json j = {{"ks_d", f.ks_d}};
  if (f.name == "poisson") j["mean_gap_s"] = f.b;
  if (f.name == "gamma") j.update({{"shape", f.a}, {"scale", f.b}});
  if (f.name == "lognormal") j.update({{"mu", f.a}, {"sigma", f.b}});
  if (lengths) j["max_quantile_error"] = f.max_quantile_error;
  return j;
}

json Windows(const std::vector<WindowFigure>& v, const char* key, bool peaks) {
  json out = json::array();
  for (const WindowFigure& w : v) {
    json j = {{"window_s", w.window_s}, {"windows", w.windows}};
    j[key] = w.windows > 0 ? json(w.value) : json(nullptr);
    if (peaks) j["peak_rate_rps"] = w.windows > 0 ? json(w.peak_rate) : json(nullptr);
    out.push_back(j);
  }
  return out;
}

json Lengths(const LengthStats& l) {
  json j = Stats(l.stats);
  if (j.is_null()) return j;
  j["p10"] = l.p10;
  j["zeros"] = l.zeros;
  j["fits"] = {{"lognormal", Fit(l.lognormal, true)}, {"gamma", Fit(l.gamma, true)}};
  j["best_fit"] = l.best;
  j["card_form"] = l.card_form;
  return j;
}

}  // namespace

json ToJson(const Characterization& c) {
  const ArrivalStats& a = c.arrivals;
  json period = {{"first_s", a.first_t_s}, {"last_s", a.last_t_s}, {"span_s", a.span_s}};
  if (c.absolute_time) {
    period["first"] = FormatDateTime(a.first_t_s);
    period["last"] = FormatDateTime(a.last_t_s);
  }
  json arrivals = {
      {"requests", a.requests},
      {"mean_rate_rps", a.mean_rate},
      {"gap_mean_s", a.gap_mean_s},
      {"gap_cv", a.gap_cv},
      {"zero_gaps", a.zero_gaps},
      {"per_minute", a.per_minute},
      {"per_hour", a.per_hour},
      {"index_of_dispersion", Windows(a.dispersion, "index", false)},
      {"peak_to_mean", Windows(a.peak_to_mean, "ratio", true)},
      {"fits", {{"poisson", Fit(a.poisson)}, {"gamma", Fit(a.gamma)}}},
      {"ks_critical_5pct", a.ks_critical},
      {"process", a.chosen},
  };
  json j = {{"path", c.path},
            {"format", c.format},
            {"time_unit", c.time_unit},
            {"sha256", c.sha256},
            {"period", period},
            {"arrivals", arrivals},
            {"input_tokens", Lengths(c.input)},
            {"output_tokens", Lengths(c.output)},
            {"correlation", {{"pearson", c.pearson}, {"pearson_log", c.pearson_log}}}};
  if (c.prefix.present) {
    const PrefixStats& p = c.prefix;
    json lru = json::array();
    for (const auto& l : p.lru) lru.push_back({{"blocks", l.blocks}, {"tokens", l.blocks * p.block_tokens}, {"hit_rate", l.hit_rate}});
    json tenants = json::array();
    for (const auto& t : p.tenants) {
      tenants.push_back({{"tenant", t.tenant}, {"requests", t.requests}, {"cached_share", t.cached_share},
                         {"reusable_share", t.reusable_share}});
    }
    j["prefix"] = {{"block_tokens", p.block_tokens},
                   {"requests", p.requests},
                   {"cached_prefix_requests", p.cached_prefix_requests},
                   {"cached_share", p.cached_share},
                   {"input_tokens", p.input_tokens},
                   {"reusable_tokens", p.reusable_tokens},
                   {"reusable_share", p.reusable_share},
                   {"mean_cached_tokens", p.mean_cached_tokens},
                   {"distinct_blocks", p.distinct_blocks},
                   {"distinct_prefixes", p.distinct_prefixes},
                   {"lru", lru},
                   {"tenants", tenants}};
  } else {
    j["prefix"] = nullptr;
  }
  if (c.sessions.present) {
    j["sessions"] = {{"source", c.sessions.source},
                     {"sessions", c.sessions.sessions},
                     {"start_rate_rps", c.sessions.starts.mean_rate},
                     {"follow_ups", c.sessions.follow_ups},
                     {"turns", Stats(c.sessions.turns)},
                     {"gap_s", Stats(c.sessions.gap_s)},
                     {"growth_tokens", Stats(c.sessions.growth_tokens)},
                     {"new_message_tokens", Stats(c.sessions.new_message_tokens)}};
  } else {
    j["sessions"] = nullptr;
  }
  j["classes"] = c.categories.empty() ? json(nullptr) : json(c.categories);
  if (c.items_rows > 0) j["items"] = {{"rows", c.items_rows}, {"per_request", Stats(c.items)}};  // only when the trace has them
  if (c.littles) {
    j["littles_law"] = {{"latency_s", c.littles->latency_s},     {"basis", c.littles->basis},
                        {"at_mean", c.littles->at_mean},         {"at_peak_1min", c.littles->at_peak_1min},
                        {"at_peak_1s", c.littles->at_peak_1s}};
  } else {
    j["littles_law"] = nullptr;
  }
  return j;
}

}  // namespace infereng::trace
