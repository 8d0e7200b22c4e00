// Summary <-> JSON. The layout is documented in docs/results-schema.md; keep them in step.
#include "metrics/summary_json.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "card/slo.h"

namespace infereng::metrics {
namespace {

using nlohmann::json;

// Small typed readers that name the key on error ("summary.window.start_s: ...").
class Reader {
 public:
  Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

  Status Double(const char* key, double* out, bool required = false) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      return required ? Status::InvalidArgument(where_ + "." + key + ": missing") : Status::Ok();
    }
    if (!it->is_number()) return Status::InvalidArgument(where_ + "." + key + ": expected a number");
    *out = it->get<double>();
    return Status::Ok();
  }
  Status Int(const char* key, int64_t* out) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer()) {
      return Status::InvalidArgument(where_ + "." + key + ": expected an integer");
    }
    *out = it->get<int64_t>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_boolean()) return Status::InvalidArgument(where_ + "." + key + ": expected true or false");
    *out = it->get<bool>();
    return Status::Ok();
  }
  Status String(const char* key, std::string* out) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Status::InvalidArgument(where_ + "." + key + ": expected a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  // The object at `key`, or null if absent; error if present but not an object.
  Result<const json*> Object(const char* key) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return static_cast<const json*>(nullptr);
    if (!it->is_object()) return Status::InvalidArgument(where_ + "." + key + ": expected an object");
    return &*it;
  }
  std::string At(const char* key) const { return where_ + "." + key; }

 private:
  const json& j_;
  std::string where_;
};

json Num(double v, bool defined) { return defined ? json(v) : json(nullptr); }

// The "sessions" block (metrics/sessions.h); absent when the run had no session calls.
json SessionsToJson(const SessionSummary& x) {
  json turns = json::array();
  for (const SessionTurnStats& t : x.by_turn) {
    turns.push_back({{"turn", t.turn},
                     {"calls", t.calls},
                     {"prefix_hit_rate", Num(t.prefix_hit_rate, t.prefix_hit_rate >= 0)},
                     {"e2e_p50_ms", Num(t.e2e_p50_ms, t.calls > 0)}});
  }
  return {{"unit", x.tasks ? "task" : "session"},
          {"started", x.started},
          {"succeeded", x.succeeded},
          {"failed", x.failed},
          {"incomplete", x.incomplete},
          {"good", x.good},
          {"per_s", x.per_s},
          {"goodput_per_s", x.goodput_per_s},
          {"success_rate", x.success_rate},
          {"latency_ms", SampleStatsToJson(x.latency_ms)},
          {"calls", SampleStatsToJson(x.calls)},
          {"prefix_hit_rate", Num(x.prefix_hit_rate, x.prefix_hit_rate >= 0)},
          {"task_ms", x.task_ms ? json(*x.task_ms) : json(nullptr)},
          {"task_attainment", x.task_attainment},
          {"task_attainment_target", x.task_attainment_target},
          {"task_slo_pass", x.task_slo_pass},
          {"by_turn", std::move(turns)}};
}

Result<SessionSummary> SessionsFromJson(const json& j, const std::string& where) {
  Reader r(j, where);
  SessionSummary x;
  std::string unit;
  INFERENG_RETURN_IF_ERROR(r.String("unit", &unit));
  x.tasks = unit == "task";
  for (auto [key, field] : {std::pair{"started", &x.started}, {"succeeded", &x.succeeded}, {"failed", &x.failed},
                            {"incomplete", &x.incomplete}, {"good", &x.good}}) {
    INFERENG_RETURN_IF_ERROR(r.Int(key, field));
  }
  INFERENG_RETURN_IF_ERROR(r.Double("per_s", &x.per_s));
  INFERENG_RETURN_IF_ERROR(r.Double("goodput_per_s", &x.goodput_per_s));
  INFERENG_RETURN_IF_ERROR(r.Double("success_rate", &x.success_rate));
  INFERENG_RETURN_IF_ERROR(r.Double("prefix_hit_rate", &x.prefix_hit_rate));
  double task_ms = -1;
  INFERENG_RETURN_IF_ERROR(r.Double("task_ms", &task_ms));
  if (task_ms > 0) x.task_ms = task_ms;
  INFERENG_RETURN_IF_ERROR(r.Double("task_attainment", &x.task_attainment));
  INFERENG_RETURN_IF_ERROR(r.Double("task_attainment_target", &x.task_attainment_target));
  INFERENG_RETURN_IF_ERROR(r.Bool("task_slo_pass", &x.task_slo_pass));
  for (auto [key, field] : {std::pair{"latency_ms", &x.latency_ms}, {"calls", &x.calls}}) {
    if (auto it = j.find(key); it != j.end() && !it->is_null()) {
      INFERENG_ASSIGN_OR_RETURN(*field, SampleStatsFromJson(*it, r.At(key)));
    }
  }
  if (auto it = j.find("by_turn"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return Status::InvalidArgument(where + ".by_turn: expected an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string w = where + ".by_turn[" + std::to_string(i) + "]";
      if (!(*it)[i].is_object()) return Status::InvalidArgument(w + ": expected an object");
      Reader t((*it)[i], w);
      SessionTurnStats row;
      int64_t turn = 0;
      INFERENG_RETURN_IF_ERROR(t.Int("turn", &turn));
      row.turn = static_cast<int32_t>(std::clamp<int64_t>(turn, 0, INT32_MAX));
      INFERENG_RETURN_IF_ERROR(t.Int("calls", &row.calls));
      INFERENG_RETURN_IF_ERROR(t.Double("prefix_hit_rate", &row.prefix_hit_rate));
      INFERENG_RETURN_IF_ERROR(t.Double("e2e_p50_ms", &row.e2e_p50_ms));
      x.by_turn.push_back(row);
    }
  }
  return x;
}

Result<std::map<std::string, int64_t>> CountMap(const json& j, const std::string& where) {
  std::map<std::string, int64_t> out;
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  for (const auto& [k, v] : j.items()) {
    if (!v.is_number_integer()) return Status::InvalidArgument(where + "." + k + ": expected an integer");
    out[k] = v.get<int64_t>();
  }
  return out;
}

}  // namespace

json SampleStatsToJson(const stats::SampleStats& s) {
  const bool d = s.count > 0;
  return json{{"count", s.count},     {"p50", Num(s.p50, d)},   {"p90", Num(s.p90, d)},
              {"p95", Num(s.p95, d)}, {"p99", Num(s.p99, d)},   {"p99_9", Num(s.p99_9, d)},
              {"mean", Num(s.mean, d)}, {"min", Num(s.min, d)}, {"max", Num(s.max, d)},
              {"stddev", Num(s.stddev, d)}};
}

Result<stats::SampleStats> SampleStatsFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  stats::SampleStats s;
  Reader r(j, where);
  INFERENG_RETURN_IF_ERROR(r.Int("count", &s.count));
  if (s.count < 0) return Status::InvalidArgument(where + ".count: must be >= 0");
  if (s.count == 0) return s;
  for (auto [key, field] : {std::pair{"p50", &s.p50}, {"p90", &s.p90}, {"p95", &s.p95},
                            {"p99", &s.p99}, {"p99_9", &s.p99_9}, {"mean", &s.mean},
                            {"min", &s.min}, {"max", &s.max}}) {
    INFERENG_RETURN_IF_ERROR(r.Double(key, field, /*required=*/true));
  }
  INFERENG_RETURN_IF_ERROR(r.Double("stddev", &s.stddev));
  return s;
}

json HistogramToJson(const LogHistogram& h) {
  json counts = json::array();
  const auto& c = h.bucket_counts();
  for (size_t i = 0; i < c.size(); ++i) {
    if (c[i] != 0) counts.push_back(json::array({i, c[i]}));
  }
  return json{{"lowest", h.options().lowest},
              {"highest", h.options().highest},
              {"sub_buckets", h.options().sub_buckets},
              {"relative_error", h.relative_error()},
              {"count", h.count()},
              {"sum", h.sum()},
              {"min", h.min()},
              {"max", h.max()},
              {"overflow", h.overflow()},
              {"buckets", std::move(counts)}};
}

Result<LogHistogram> HistogramFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  Reader r(j, where);
  HistogramOptions o;
  int64_t sub = o.sub_buckets, overflow = 0, count = 0;
  double sum = 0, mn = 0, mx = 0;
  INFERENG_RETURN_IF_ERROR(r.Double("lowest", &o.lowest, true));
  INFERENG_RETURN_IF_ERROR(r.Double("highest", &o.highest, true));
  INFERENG_RETURN_IF_ERROR(r.Int("sub_buckets", &sub));
  INFERENG_RETURN_IF_ERROR(r.Int("count", &count));
  INFERENG_RETURN_IF_ERROR(r.Int("overflow", &overflow));
  INFERENG_RETURN_IF_ERROR(r.Double("sum", &sum));
  INFERENG_RETURN_IF_ERROR(r.Double("min", &mn));
  INFERENG_RETURN_IF_ERROR(r.Double("max", &mx));
  if (sub < 1 || sub > (1 << 16) || overflow < 0) {
    return Status::InvalidArgument(where + ": sub_buckets must be 1..65536 and overflow >= 0");
  }
  o.sub_buckets = static_cast<int>(sub);
  auto it = j.find("buckets");
  if (it == j.end() || !it->is_array()) return Status::InvalidArgument(where + ".buckets: expected an array");
  std::vector<uint64_t> counts;
  const LogHistogram probe(o);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& e = (*it)[i];
    if (!e.is_array() || e.size() != 2 || !e[0].is_number_unsigned() || !e[1].is_number_unsigned()) {
      return Status::InvalidArgument(where + ".buckets[" + std::to_string(i) +
                                     "]: expected [index, count] with non-negative integers");
    }
    const uint64_t idx = e[0].get<uint64_t>();
    if (idx >= static_cast<uint64_t>(probe.NumBuckets())) {
      return Status::InvalidArgument(where + ".buckets[" + std::to_string(i) + "]: index " +
                                     std::to_string(idx) + " out of range");
    }
    if (counts.size() <= idx) counts.resize(idx + 1, 0);
    counts[idx] += e[1].get<uint64_t>();
  }
  auto h = LogHistogram::FromParts(o, std::move(counts), sum, mn, mx, static_cast<uint64_t>(overflow));
  if (!h.ok()) return h.status().WithContext(where);
  if (static_cast<int64_t>(h->count()) != count) {
    return Status::InvalidArgument(where + ".count: " + std::to_string(count) +
                                   " does not match the bucket total " + std::to_string(h->count()));
  }
  return h;
}

json SummaryToJson(const Summary& s) {
  json j;
  j["schema"] = Summary::kSchema;
  j["source"] = s.source;
  j["partial"] = s.partial;
  j["open_loop"] = s.open_loop;
  j["percentiles"] = {{"method", s.percentile_method}, {"relative_error", s.histogram_relative_error}};
  j["window"] = {{"start_s", s.window_start_s},
                 {"end_s", s.window_end_s},
                 {"rate_basis_s", s.rate_basis_s},
                 {"rate_basis", s.rate_basis}};
  for (const DistributionField& f : SummaryDistributions()) {
    // An embeddings run has no token stream: its TTFT/ITL/TPOT... are absent, not zero.
    if (s.embeddings && (s.*(f.member)).count == 0) continue;
    j[f.key] = SampleStatsToJson(s.*(f.member));
  }
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["visible_output_tokens_per_s"] = s.visible_output_tokens_per_s;
  j["reasoning_share"] = s.reasoning_share;
  j["requests_per_s"] = s.requests_per_s;
  j["offered_rps"] = s.offered_rps;
  j["achieved_rps"] = s.achieved_rps;
  j["goodput_rps"] = s.goodput_rps;
  j["slo_attainment"] = s.slo_attainment;
  j["schedule_lag_flagged"] = s.schedule_lag_flagged;

  json targets = json::array();
  for (const SloResult& r : s.slo) {
    targets.push_back({{"metric", r.metric},
                       {"measured_as", r.measured_as},
                       {"percentile", r.percentile},
                       {"threshold_ms", r.threshold_ms},
                       {"value_ms", r.value_ms},
                       {"pass", r.pass},
                       {"samples", r.samples},
                       {"requests_checked", r.requests_checked},
                       {"requests_met", r.requests_met}});
  }
  json thresholds = json::array();
  std::vector<card::RequestThreshold> bars;
  for (const ThresholdResult& t : s.goodput_thresholds) {
    thresholds.push_back({{"metric", t.threshold.metric},
                          {"threshold_ms", t.threshold.threshold_ms},
                          {"percentile", t.threshold.percentile},
                          {"origin", t.threshold.origin},
                          {"requests_checked", t.requests_checked},
                          {"requests_met", t.requests_met}});
    bars.push_back(t.threshold);
  }
  json slo = {{"pass", s.slo_pass},
              {"attainment", {{"value", s.slo_attainment},
                              {"target", s.slo_attainment_target},
                              {"pass", s.slo_attainment_pass}}},
              {"targets", std::move(targets)},
              {"goodput_thresholds", std::move(thresholds)},
              {"goodput_thresholds_text", card::DescribeGoodputThresholds(bars)}};
  if (s.min_output_tokens_per_s) {
    slo["min_output_tokens_per_s"] = {{"threshold", *s.min_output_tokens_per_s},
                                      {"value", s.output_tokens_per_s},
                                      {"pass", s.output_tokens_per_s >= *s.min_output_tokens_per_s}};
  }
  j["slo"] = std::move(slo);
  j["errors"] = s.errors;
  j["tokens"] = {{"source", s.token_source}, {"by_source", s.token_sources}};

  const SummaryCounts& c = s.counts;
  j["counts"] = {{"records", c.records},
                 {"in_window", c.in_window},
                 {"excluded_before", c.excluded_before},
                 {"excluded_after", c.excluded_after},
                 {"succeeded", c.succeeded},
                 {"failed", c.failed},
                 {"slo_met", c.slo_met},
                 {"good", c.good},
                 {"quality_checked", c.quality_checked},
                 {"quality_passed", c.quality_passed},
                 {"output_tokens", c.output_tokens},
                 {"window_output_tokens", c.window_output_tokens},
                 {"window_completed", c.window_completed},
                 {"zero_output", c.zero_output},
                 {"with_reasoning", c.with_reasoning},
                 {"reasoning_tokens", c.reasoning_tokens},
                 {"reasoning_from_usage", c.reasoning_from_usage},
                 {"reasoning_from_stream", c.reasoning_from_stream},
                 {"cold", c.cold},
                 {"interrupted", c.interrupted},
                 {"server_timings_malformed", c.server_timings_malformed},
                 {"ttft_split_without_queue", c.ttft_split_without_queue}};

  json buckets = json::array();
  for (const TimeBucket& b : s.timeseries) {
    buckets.push_back({{"start_s", b.start_s},
                       {"width_s", b.width_s},
                       {"sent", b.sent},
                       {"completed", b.completed},
                       {"errors", b.errors},
                       {"output_tokens", b.output_tokens},
                       {"in_flight", b.in_flight},
                       {"ttft_count", b.ttft_count},
                       {"ttft_mean_ms", Num(b.ttft_mean_ms, b.ttft_count > 0)},
                       {"ttft_p99_ms", Num(b.ttft_p99_ms, b.ttft_count > 0)}});
  }
  j["timeseries"] = {{"bucket_s", s.timeseries_bucket_s}, {"buckets", std::move(buckets)}};
  if (s.sessions) j["sessions"] = SessionsToJson(*s.sessions);
  if (s.embeddings) j[EmbeddingsKey(*s.embeddings)] = EmbeddingsToJson(*s.embeddings);
  if (s.vision) j["vision"] = VisionToJson(*s.vision);
  if (s.audio) j["audio"] = AudioToJson(*s.audio);
  if (!s.histograms.empty()) {
    json h = json::object();
    for (const auto& [key, hist] : s.histograms) h[key] = HistogramToJson(hist);
    j["histograms"] = std::move(h);
  }
  return j;
}

Result<Summary> SummaryFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("summary: expected a JSON object");
  Summary s;
  Reader r(j, "summary");
  std::string schema;
  INFERENG_RETURN_IF_ERROR(r.String("schema", &schema));
  if (schema != Summary::kSchema) {
    return Status::InvalidArgument("summary.schema: expected \"" + std::string(Summary::kSchema) +
                                   "\", got \"" + schema + "\"");
  }
  INFERENG_RETURN_IF_ERROR(r.String("source", &s.source));
  INFERENG_RETURN_IF_ERROR(r.Bool("partial", &s.partial));
  INFERENG_RETURN_IF_ERROR(r.Bool("open_loop", &s.open_loop));
  INFERENG_ASSIGN_OR_RETURN(const json* pct, r.Object("percentiles"));
  if (pct) {
    Reader p(*pct, r.At("percentiles"));
    INFERENG_RETURN_IF_ERROR(p.String("method", &s.percentile_method));
    INFERENG_RETURN_IF_ERROR(p.Double("relative_error", &s.histogram_relative_error));
  }
  INFERENG_ASSIGN_OR_RETURN(const json* win, r.Object("window"));
  if (!win) return Status::InvalidArgument("summary.window: missing");
  Reader w(*win, r.At("window"));
  INFERENG_RETURN_IF_ERROR(w.Double("start_s", &s.window_start_s, true));
  INFERENG_RETURN_IF_ERROR(w.Double("end_s", &s.window_end_s, true));
  INFERENG_RETURN_IF_ERROR(w.Double("rate_basis_s", &s.rate_basis_s));
  INFERENG_RETURN_IF_ERROR(w.String("rate_basis", &s.rate_basis));

  for (const DistributionField& f : SummaryDistributions()) {
    auto it = j.find(f.key);
    if (it == j.end() || it->is_null()) continue;
    INFERENG_ASSIGN_OR_RETURN(s.*(f.member), SampleStatsFromJson(*it, r.At(f.key)));
  }
  INFERENG_RETURN_IF_ERROR(r.Double("output_tokens_per_s", &s.output_tokens_per_s));
  s.visible_output_tokens_per_s = s.output_tokens_per_s;  // older summaries: no reasoning split
  INFERENG_RETURN_IF_ERROR(r.Double("visible_output_tokens_per_s", &s.visible_output_tokens_per_s));
  INFERENG_RETURN_IF_ERROR(r.Double("reasoning_share", &s.reasoning_share));
  INFERENG_RETURN_IF_ERROR(r.Double("requests_per_s", &s.requests_per_s));
  INFERENG_RETURN_IF_ERROR(r.Double("offered_rps", &s.offered_rps));
  INFERENG_RETURN_IF_ERROR(r.Double("achieved_rps", &s.achieved_rps));
  INFERENG_RETURN_IF_ERROR(r.Double("goodput_rps", &s.goodput_rps));
  INFERENG_RETURN_IF_ERROR(r.Double("slo_attainment", &s.slo_attainment));
  INFERENG_RETURN_IF_ERROR(r.Bool("schedule_lag_flagged", &s.schedule_lag_flagged));

  INFERENG_ASSIGN_OR_RETURN(const json* slo, r.Object("slo"));
  if (slo) {
    Reader sr(*slo, r.At("slo"));
    INFERENG_RETURN_IF_ERROR(sr.Bool("pass", &s.slo_pass));
    INFERENG_ASSIGN_OR_RETURN(const json* att, sr.Object("attainment"));
    if (att) {
      Reader a(*att, sr.At("attainment"));
      INFERENG_RETURN_IF_ERROR(a.Double("target", &s.slo_attainment_target));
      INFERENG_RETURN_IF_ERROR(a.Bool("pass", &s.slo_attainment_pass));
    }
    INFERENG_ASSIGN_OR_RETURN(const json* floor, sr.Object("min_output_tokens_per_s"));
    if (floor) {
      double v = 0;
      INFERENG_RETURN_IF_ERROR(Reader(*floor, sr.At("min_output_tokens_per_s")).Double("threshold", &v, true));
      s.min_output_tokens_per_s = v;
    }
    auto tit = slo->find("targets");
    if (tit != slo->end()) {
      if (!tit->is_array()) return Status::InvalidArgument("summary.slo.targets: expected an array");
      for (size_t i = 0; i < tit->size(); ++i) {
        const std::string where = "summary.slo.targets[" + std::to_string(i) + "]";
        if (!(*tit)[i].is_object()) return Status::InvalidArgument(where + ": expected an object");
        Reader t((*tit)[i], where);
        SloResult res;
        INFERENG_RETURN_IF_ERROR(t.String("metric", &res.metric));
        INFERENG_RETURN_IF_ERROR(t.String("measured_as", &res.measured_as));
        INFERENG_RETURN_IF_ERROR(t.Double("percentile", &res.percentile, true));
        INFERENG_RETURN_IF_ERROR(t.Double("threshold_ms", &res.threshold_ms, true));
        INFERENG_RETURN_IF_ERROR(t.Double("value_ms", &res.value_ms));
        INFERENG_RETURN_IF_ERROR(t.Bool("pass", &res.pass));
        INFERENG_RETURN_IF_ERROR(t.Int("requests_checked", &res.requests_checked));
        INFERENG_RETURN_IF_ERROR(t.Int("requests_met", &res.requests_met));
        res.samples = -1;  // older summaries: the size of the distribution it names
        INFERENG_RETURN_IF_ERROR(t.Int("samples", &res.samples));
        for (const DistributionField& f : SummaryDistributions()) {
          if (res.samples < 0 && res.measured_as == f.key) res.samples = (s.*(f.member)).count;
        }
        res.samples = std::max<int64_t>(res.samples, 0);
        s.slo.push_back(std::move(res));
      }
    }
    auto git = slo->find("goodput_thresholds");
    if (git != slo->end() && !git->is_null()) {
      if (!git->is_array()) return Status::InvalidArgument("summary.slo.goodput_thresholds: expected an array");
      for (size_t i = 0; i < git->size(); ++i) {
        const std::string where = "summary.slo.goodput_thresholds[" + std::to_string(i) + "]";
        if (!(*git)[i].is_object()) return Status::InvalidArgument(where + ": expected an object");
        Reader t((*git)[i], where);
        ThresholdResult res;
        INFERENG_RETURN_IF_ERROR(t.String("metric", &res.threshold.metric));
        INFERENG_RETURN_IF_ERROR(t.Double("threshold_ms", &res.threshold.threshold_ms, true));
        INFERENG_RETURN_IF_ERROR(t.Double("percentile", &res.threshold.percentile));
        INFERENG_RETURN_IF_ERROR(t.String("origin", &res.threshold.origin));
        INFERENG_RETURN_IF_ERROR(t.Int("requests_checked", &res.requests_checked));
        INFERENG_RETURN_IF_ERROR(t.Int("requests_met", &res.requests_met));
        s.goodput_thresholds.push_back(std::move(res));
      }
    }
  }
  auto eit = j.find("errors");
  if (eit != j.end() && !eit->is_null()) {
    INFERENG_ASSIGN_OR_RETURN(s.errors, CountMap(*eit, "summary.errors"));
  }
  INFERENG_ASSIGN_OR_RETURN(const json* tokens, r.Object("tokens"));
  if (tokens) {
    Reader t(*tokens, r.At("tokens"));
    INFERENG_RETURN_IF_ERROR(t.String("source", &s.token_source));
    auto bit = tokens->find("by_source");
    if (bit != tokens->end()) {
      INFERENG_ASSIGN_OR_RETURN(s.token_sources, CountMap(*bit, "summary.tokens.by_source"));
    }
  }
  INFERENG_ASSIGN_OR_RETURN(const json* counts, r.Object("counts"));
  if (counts) {
    Reader c(*counts, r.At("counts"));
    SummaryCounts& k = s.counts;
    for (auto [key, field] : {std::pair{"records", &k.records}, {"in_window", &k.in_window},
                              {"excluded_before", &k.excluded_before},
                              {"excluded_after", &k.excluded_after}, {"succeeded", &k.succeeded},
                              {"failed", &k.failed}, {"slo_met", &k.slo_met}, {"good", &k.good},
                              {"quality_checked", &k.quality_checked},
                              {"quality_passed", &k.quality_passed},
                              {"output_tokens", &k.output_tokens},
                              {"window_output_tokens", &k.window_output_tokens},
                              {"window_completed", &k.window_completed},
                              {"zero_output", &k.zero_output},
                              {"with_reasoning", &k.with_reasoning}, {"cold", &k.cold},
                              {"reasoning_tokens", &k.reasoning_tokens},
                              {"reasoning_from_usage", &k.reasoning_from_usage},
                              {"reasoning_from_stream", &k.reasoning_from_stream},
                              {"interrupted", &k.interrupted},
                              {"server_timings_malformed", &k.server_timings_malformed},
                              {"ttft_split_without_queue", &k.ttft_split_without_queue}}) {
      INFERENG_RETURN_IF_ERROR(c.Int(key, field));
    }
  }
  INFERENG_ASSIGN_OR_RETURN(const json* ts, r.Object("timeseries"));
  if (ts) {
    Reader t(*ts, r.At("timeseries"));
    INFERENG_RETURN_IF_ERROR(t.Double("bucket_s", &s.timeseries_bucket_s));
    auto bit = ts->find("buckets");
    if (bit != ts->end()) {
      if (!bit->is_array()) return Status::InvalidArgument("summary.timeseries.buckets: expected an array");
      for (size_t i = 0; i < bit->size(); ++i) {
        const std::string where = "summary.timeseries.buckets[" + std::to_string(i) + "]";
        if (!(*bit)[i].is_object()) return Status::InvalidArgument(where + ": expected an object");
        Reader b((*bit)[i], where);
        TimeBucket tb;
        INFERENG_RETURN_IF_ERROR(b.Double("start_s", &tb.start_s));
        INFERENG_RETURN_IF_ERROR(b.Double("width_s", &tb.width_s));
        INFERENG_RETURN_IF_ERROR(b.Int("sent", &tb.sent));
        INFERENG_RETURN_IF_ERROR(b.Int("completed", &tb.completed));
        INFERENG_RETURN_IF_ERROR(b.Int("errors", &tb.errors));
        INFERENG_RETURN_IF_ERROR(b.Int("output_tokens", &tb.output_tokens));
        INFERENG_RETURN_IF_ERROR(b.Double("in_flight", &tb.in_flight));
        INFERENG_RETURN_IF_ERROR(b.Int("ttft_count", &tb.ttft_count));
        INFERENG_RETURN_IF_ERROR(b.Double("ttft_mean_ms", &tb.ttft_mean_ms));
        INFERENG_RETURN_IF_ERROR(b.Double("ttft_p99_ms", &tb.ttft_p99_ms));
        s.timeseries.push_back(tb);
      }
    }
  }
  INFERENG_ASSIGN_OR_RETURN(const json* sessions, r.Object("sessions"));
  if (sessions) {
    INFERENG_ASSIGN_OR_RETURN(SessionSummary x, SessionsFromJson(*sessions, r.At("sessions")));
    s.sessions = std::move(x);
  }
  INFERENG_ASSIGN_OR_RETURN(const json* vision, r.Object("vision"));
  if (vision) {
    INFERENG_ASSIGN_OR_RETURN(VisionSummary v, VisionFromJson(*vision, r.At("vision")));
    s.vision = v;
  }
  INFERENG_ASSIGN_OR_RETURN(const json* audio, r.Object("audio"));
  if (audio) {
    INFERENG_ASSIGN_OR_RETURN(AudioSummary a, AudioFromJson(*audio, r.At("audio")));
    s.audio = a;
  }
  for (const char* key : {"embeddings", "rerank"}) {  // one block: a run is one modality
    INFERENG_ASSIGN_OR_RETURN(const json* embeddings, r.Object(key));
    if (embeddings) {
      INFERENG_ASSIGN_OR_RETURN(EmbeddingsSummary e, EmbeddingsFromJson(*embeddings, r.At(key)));
      e.rerank = std::string_view(key) == "rerank";
      s.embeddings = std::move(e);
    }
  }
  INFERENG_ASSIGN_OR_RETURN(const json* hists, r.Object("histograms"));
  if (hists) {
    for (const auto& [key, hj] : hists->items()) {
      INFERENG_ASSIGN_OR_RETURN(LogHistogram h, HistogramFromJson(hj, "summary.histograms." + key));
      s.histograms.emplace(key, std::move(h));
    }
  }
  return s;
}

Status WriteSummaryFile(const std::string& path, const Summary& summary) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return Status::IoError(path + ": cannot open for writing");
  out << SummaryToJson(summary).dump(2) << "\n";
  out.flush();
  if (!out) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

Result<Summary> ReadSummaryFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  auto s = SummaryFromJson(j);
  if (!s.ok()) return s.status().WithContext(path);
  return s;
}

}  // namespace infereng::metrics
