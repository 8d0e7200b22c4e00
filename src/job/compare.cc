// compare: per-metric deltas with intervals and verdicts, quality, acceptance (compare.h).
// Sweeps are in compare_sweep.cc.
#include "job/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "card/slo.h"

namespace infereng::job {
namespace {

struct StatSpec {
  const char* suffix;  // "p99"
  const char* label;   // "P99"
  metrics::Statistic stat;
};
const StatSpec kStats[] = {
    {"p50", "P50", metrics::Statistic::Percentile(50)}, {"p90", "P90", metrics::Statistic::Percentile(90)},
    {"p95", "P95", metrics::Statistic::Percentile(95)}, {"p99", "P99", metrics::Statistic::Percentile(99)},
    {"mean", "mean", metrics::Statistic::Mean()},
};

// FNV-1a: each metric its own random stream, whatever else is compared.
uint64_t StreamOf(std::string_view key) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

double SummaryStat(const stats::SampleStats& s, const StatSpec& spec) {
  return spec.stat.kind == metrics::Statistic::Kind::kMean ? s.mean : s.AtStandardPercentile(spec.stat.p);
}

const stats::SampleStats* SummaryDistribution(const metrics::Summary& s, const std::string& key) {
  for (const metrics::DistributionField& f : metrics::SummaryDistributions()) {
    if (key == f.key) return &(s.*f.member);
  }
  return nullptr;
}

DeltaVerdict Judge(const metrics::DeltaCi& ci, Better better) {
  if (!ci.defined) return DeltaVerdict::kUnknown;
  if (!ci.ExcludesZero()) return DeltaVerdict::kNoDifference;
  const bool up = ci.low > 0;
  return (up == (better == Better::kHigher)) ? DeltaVerdict::kBetter : DeltaVerdict::kWorse;
}

void Finish(MetricDelta& d) {
  d.verdict = Judge(d.ci, d.better);
  if (d.verdict == DeltaVerdict::kNoDifference) d.requests_to_detect = metrics::RequestsToDetect(d.ci);
}

std::string BootstrapMethod(const metrics::Replicates& a, const metrics::Replicates& b) {
  if (a.drawn < a.units || b.drawn < b.units) {
    return fmt::format("bootstrap, m-out-of-n ({} of {} / {} of {} requests per replicate)", a.drawn, a.units, b.drawn,
                       b.units);
  }
  return "bootstrap";
}

// P50..mean of one latency distribution.
void LatencyDeltas(const RunInputs& a, const RunInputs& b, const std::string& key, const std::string& label,
                   const metrics::BootstrapOptions& o, std::vector<MetricDelta>* out) {
  std::vector<metrics::Statistic> stats;
  for (const StatSpec& s : kStats) stats.push_back(s.stat);
  const bool intervals = a.has_records && b.has_records;
  std::vector<metrics::Replicates> ra, rb;
  if (intervals) {
    ra = metrics::Bootstrap(a.latency.at(key), stats, o, 2 * StreamOf(key));
    rb = metrics::Bootstrap(b.latency.at(key), stats, o, 2 * StreamOf(key) + 1);
  }
  for (std::size_t i = 0; i < std::size(kStats); ++i) {
    MetricDelta d;
    d.key = key + "." + kStats[i].suffix;
    d.label = label + " " + kStats[i].label;
    d.unit = "ms";
    d.better = Better::kLower;
    if (intervals) {
      d.ci = metrics::CompareReplicates(ra[i], rb[i], o.confidence);
      d.method = BootstrapMethod(ra[i], rb[i]);
    } else {
      const stats::SampleStats* sa = SummaryDistribution(a.summary, key);
      const stats::SampleStats* sb = SummaryDistribution(b.summary, key);
      d.ci.a = sa ? SummaryStat(*sa, kStats[i]) : 0;
      d.ci.b = sb ? SummaryStat(*sb, kStats[i]) : 0;
      d.ci.delta = d.ci.b - d.ci.a;
      if (d.ci.a > 0) d.ci.rel = d.ci.delta / d.ci.a;
      d.ci.n_a = sa ? sa->count : 0;
      d.ci.n_b = sb ? sb->count : 0;
      d.method = "summary only (no requests.jsonl: no interval)";
    }
    Finish(d);
    out->push_back(std::move(d));
  }
}

// A rate = (mean per-request contribution) x (in-window requests / s): the summary's figure,
// with the replicates of the mean contribution and of the request count (bootstrap.h).
MetricDelta RateDelta(const RunInputs& a, const RunInputs& b, const std::string& key, const std::string& label,
                      const std::string& unit, double rate_a, double rate_b, const metrics::UnitSample& ua,
                      const metrics::UnitSample& ub, const metrics::BootstrapOptions& o) {
  MetricDelta d;
  d.key = key;
  d.label = label;
  d.unit = unit;
  d.better = Better::kHigher;
  if (a.has_records && b.has_records) {
    const metrics::Statistic mean[] = {metrics::Statistic::Mean()};
    const metrics::Replicates ra =
        metrics::RateReplicates(metrics::Bootstrap(ua, mean, o, 2 * StreamOf(key))[0], rate_a, o.seed, 2 * StreamOf(key));
    const metrics::Replicates rb = metrics::RateReplicates(metrics::Bootstrap(ub, mean, o, 2 * StreamOf(key) + 1)[0],
                                                           rate_b, o.seed, 2 * StreamOf(key) + 1);
    d.ci = metrics::CompareReplicates(ra, rb, o.confidence);
    d.method = BootstrapMethod(ra, rb);
  } else {
    d.ci.a = rate_a;
    d.ci.b = rate_b;
    d.ci.delta = rate_b - rate_a;
    if (rate_a > 0) d.ci.rel = d.ci.delta / rate_a;
    d.method = "summary only (no requests.jsonl: no interval)";
  }
  Finish(d);
  return d;
}

MetricDelta ProportionDelta(const std::string& key, const std::string& label, Better better, int64_t xa, int64_t na,
                            int64_t xb, int64_t nb, double confidence) {
  MetricDelta d;
  d.key = key;
  d.label = label;
  d.better = better;
  d.ci = metrics::TwoProportionDelta(xa, na, xb, nb, confidence);
  if (d.ci.a > 0) d.ci.rel = d.ci.delta / d.ci.a;
  d.method = "two-proportion (Newcombe hybrid score)";
  Finish(d);
  return d;
}

std::string Num(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 0.01) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2g}", v);
}

std::string Pct(double f) { return fmt::format("{:+.1f}%", 100 * f); }

AcceptResult JudgeExpr(const AcceptExpr& e, const Comparison& c) {
  AcceptResult r;
  r.expression = e.text;
  r.source = "--accept";
  const MetricDelta* d = c.Find(e.metric);
  if (!d) {
    r.detail = e.metric == "quality_pass_rate" ? "not available: both runs need a quality check (an eval set)"
                                               : "not available in these runs";
    return r;  // a gate on a figure that is not there fails, never passes silently
  }
  if (e.relative) {
    if (!d->ci.rel) {
      r.detail = "relative change undefined: A's value is 0";
      return r;
    }
    r.pass = Holds(e.op, *d->ci.rel, e.value);
    r.confident = r.pass && d->ci.rel_low && d->ci.rel_high && Holds(e.op, *d->ci.rel_low, e.value) &&
                  Holds(e.op, *d->ci.rel_high, e.value);
    r.detail = fmt::format("B/A - 1 = {}", Pct(*d->ci.rel));
    if (d->ci.rel_low && d->ci.rel_high) r.detail += fmt::format(" [{}, {}]", Pct(*d->ci.rel_low), Pct(*d->ci.rel_high));
  } else {
    r.pass = Holds(e.op, d->ci.delta, e.value);
    r.confident = r.pass && d->ci.defined && Holds(e.op, d->ci.low, e.value) && Holds(e.op, d->ci.high, e.value);
    r.detail = fmt::format("B - A = {}{}", Num(d->ci.delta), d->unit.empty() ? "" : " " + d->unit);
    if (d->ci.defined) r.detail += fmt::format(" [{}, {}]", Num(d->ci.low), Num(d->ci.high));
  }
  return r;
}

// The distribution a card objective is judged on (open loop: incl. queue), as the summary does.
std::string ObjectiveKey(const std::string& metric, bool open_loop) {
  if (metric == "ttft_ms") return open_loop ? "ttft_incl_queue_ms" : "ttft_ms";
  if (metric == "e2e_ms") return open_loop ? "e2e_incl_queue_ms" : "e2e_ms";
  return metric;
}

double ObjectiveValue(const RunInputs& r, const std::string& key, double percentile) {
  if (r.has_records) {
    auto it = r.latency.find(key);
    if (it != r.latency.end()) return metrics::Evaluate(it->second.AllValues(), metrics::Statistic::Percentile(percentile));
  }
  const stats::SampleStats* s = SummaryDistribution(r.summary, key);
  return s ? s->AtStandardPercentile(percentile) : 0;
}

void JudgeCard(const card::WorkloadCard& card, const RunInputs& a, const RunInputs& b, Comparison* c) {
  for (const card::SloTarget& t : card.slo.latency) {
    const std::string key = ObjectiveKey(t.metric, b.summary.open_loop);
    AcceptResult r;
    r.source = "card SLO";
    r.expression = fmt::format("{} p{} <= {} ms", card::MetricShortName(t.metric), Num(t.percentile), Num(t.threshold_ms));
    const double vb = ObjectiveValue(b, key, t.percentile), va = ObjectiveValue(a, key, t.percentile);
    const bool has = b.has_records ? (b.latency.count(key) && b.latency.at(key).units() > 0)
                                   : (SummaryDistribution(b.summary, key) && SummaryDistribution(b.summary, key)->count > 0);
    r.pass = has && vb <= t.threshold_ms;
    r.detail = has ? fmt::format("B {} ms (A {} ms) on {}", Num(vb), Num(va), key) : "B has no " + key + " samples";
    c->acceptance.push_back(std::move(r));
  }
  if (card.slo.min_output_tokens_per_s) {
    AcceptResult r;
    r.source = "card SLO";
    r.expression = fmt::format("output >= {} tok/s", Num(*card.slo.min_output_tokens_per_s));
    r.pass = b.summary.output_tokens_per_s >= *card.slo.min_output_tokens_per_s;
    r.detail = fmt::format("B {} tok/s (A {})", Num(b.summary.output_tokens_per_s), Num(a.summary.output_tokens_per_s));
    c->acceptance.push_back(std::move(r));
  }
  if (card.quality.pass_threshold > 0) {
    AcceptResult r;
    r.source = "card quality";
    r.expression = fmt::format("quality pass rate >= {}", Num(card.quality.pass_threshold));
    if (b.quality && b.quality->PassRate()) {
      r.pass = *b.quality->PassRate() >= card.quality.pass_threshold;
      r.detail = fmt::format("B {} of {} passed ({})", b.quality->passed, b.quality->checked, Num(*b.quality->PassRate()));
    } else {
      r.detail = "B checked no eval-set items";
    }
    c->acceptance.push_back(std::move(r));
  }
}

void AddFindings(const RunInputs& a, const RunInputs& b, Comparison* c) {
  const ManifestDiff& m = c->manifest;
  std::string vars;
  for (const std::string& v : m.variables) vars += (vars.empty() ? "" : ", ") + v;
  switch (m.kind) {
    case ExperimentKind::kMultiVariable:
      c->findings.push_back({FindingKind::kNotOneVariable, true,
                             fmt::format("NOT a one-variable experiment: {} variables changed ({}); the differences "
                                         "below cannot be attributed to any one of them",
                                         m.variables.size(), vars)});
      break;
    case ExperimentKind::kReplicate:
      c->findings.push_back({FindingKind::kReplicate, false,
                             "replicate: only the seed changed, so any difference is noise; at 95% about 1 interval in "
                             "20 excludes 0 by chance"});
      break;
    case ExperimentKind::kIdentical:
      if (!a.manifest.is_null() && !b.manifest.is_null()) {
        c->findings.push_back({FindingKind::kIdentical, false, "the manifests show no change (the same configuration and seed)"});
      }
      break;
    case ExperimentKind::kOneVariable:
      c->findings.push_back({FindingKind::kNote, false, "one variable changed: " + vars});
      break;
  }
  for (const RunInputs* r : {&a, &b}) {
    const char* side = r == &a ? "A" : "B";
    if (r->summary.partial) {
      c->findings.push_back({FindingKind::kPartialRun, true,
                             fmt::format("{} was interrupted (partial): its figures cover what finished", side)});
    }
    if (!r->has_records) {
      c->findings.push_back({FindingKind::kNoRecords, true,
                             fmt::format("{} has no requests.jsonl: figures from summary.json, no intervals", side)});
    }
  }
  if (a.summary.source != b.summary.source) {
    c->findings.push_back({FindingKind::kSourceMix, true,
                           fmt::format("A is {} and B is {}: the difference includes the twin's error", a.summary.source,
                                       b.summary.source)});
  }
}

void JudgeQuality(Comparison* c) {
  const MetricDelta* q = c->Find("quality_pass_rate");
  if (!q || q->verdict != DeltaVerdict::kWorse) return;
  bool faster = false;
  for (const MetricDelta& d : c->metrics) {
    if (d.key != "quality_pass_rate" && d.key != "error_rate" && d.verdict == DeltaVerdict::kBetter) faster = true;
  }
  const std::string what = fmt::format("quality pass rate fell {} -> {} (interval {} .. {} excludes 0)", Num(q->ci.a),
                                       Num(q->ci.b), Num(q->ci.low), Num(q->ci.high));
  if (faster) {
    c->findings.insert(c->findings.begin(), {FindingKind::kQualityNotAWin, true, "NOT A WIN: faster, but " + what});
  } else {
    c->findings.insert(c->findings.begin(), {FindingKind::kQualityDropped, true, what});
  }
  c->acceptance.push_back({"quality did not drop", "quality", false, false, what});
}

}  // namespace

const char* DeltaVerdictName(DeltaVerdict v) {
  switch (v) {
    case DeltaVerdict::kBetter: return "better";
    case DeltaVerdict::kWorse: return "worse";
    case DeltaVerdict::kNoDifference: return "no detectable difference";
    case DeltaVerdict::kUnknown: return "n/a";
  }
  return "?";
}

const MetricDelta* Comparison::Find(const std::string& key) const {
  for (const MetricDelta& d : metrics) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

Result<Comparison> CompareRuns(const RunInputs& a, const RunInputs& b, const CompareOptions& options) {
  const metrics::BootstrapOptions& o = options.bootstrap;
  if (o.resamples < 100 || o.resamples > 100000) {
    return Status::InvalidArgument(fmt::format("--resamples: expected 100..100000, got {}", o.resamples));
  }
  if (!(o.confidence > 0.5 && o.confidence < 1)) return Status::InvalidArgument("confidence: expected (0.5, 1)");
  Comparison c;
  c.a_dir = a.dir;
  c.b_dir = b.dir;
  c.bootstrap = o;
  c.notes_a = a.notes;
  c.notes_b = b.notes;
  c.manifest = DiffManifests(a.manifest, b.manifest);

  const std::pair<const char*, const char*> latencies[] = {{"ttft_ms", "TTFT"},
                                                           {"itl_ms", "ITL"},
                                                           {"tpot_ms", "TPOT"},
                                                           {"e2e_ms", "E2E"},
                                                           {"ttft_incl_queue_ms", "TTFT incl. queue"},
                                                           {"e2e_incl_queue_ms", "E2E incl. queue"}};
  for (const auto& [key, label] : latencies) LatencyDeltas(a, b, key, label, o, &c.metrics);
  c.metrics.push_back(RateDelta(a, b, "output_tokens_per_s", "Output throughput", "tok/s", a.summary.output_tokens_per_s,
                                b.summary.output_tokens_per_s, a.tokens, b.tokens, o));
  c.metrics.push_back(RateDelta(a, b, "requests_per_s", "Request throughput", "req/s", a.summary.requests_per_s,
                                b.summary.requests_per_s, a.ok, b.ok, o));
  c.metrics.push_back(RateDelta(a, b, "goodput_rps", "Goodput", "req/s", a.summary.goodput_rps, b.summary.goodput_rps,
                                a.good, b.good, o));
  c.metrics.push_back(ProportionDelta("error_rate", "Error rate", Better::kLower, a.summary.counts.failed,
                                      a.summary.counts.in_window, b.summary.counts.failed, b.summary.counts.in_window,
                                      o.confidence));
  if (a.quality && b.quality && a.quality->checked > 0 && b.quality->checked > 0) {
    c.metrics.push_back(ProportionDelta("quality_pass_rate", "Quality pass rate", Better::kHigher, a.quality->passed,
                                        a.quality->checked, b.quality->passed, b.quality->checked, o.confidence));
  }

  AddFindings(a, b, &c);
  for (const AcceptExpr& e : options.accept) c.acceptance.push_back(JudgeExpr(e, c));
  if (options.card) JudgeCard(*options.card, a, b, &c);
  JudgeQuality(&c);
  for (const AcceptResult& r : c.acceptance) c.accepted = c.accepted && r.pass;
  return c;
}

Result<Comparison> CompareDirs(const std::string& a_dir, const std::string& b_dir, const CompareOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool sa = fs::exists(fs::path(a_dir) / "sweep.json", ec), sb = fs::exists(fs::path(b_dir) / "sweep.json", ec);
  if (sa != sb) {
    return Status::InvalidArgument(fmt::format("{} is a {} and {} a {}: compare two runs or two sweeps", a_dir,
                                               sa ? "sweep" : "run", b_dir, sb ? "sweep" : "run"));
  }
  if (sa) return CompareSweeps(a_dir, b_dir, options);
  INFERENG_ASSIGN_OR_RETURN(RunInputs a, LoadRunInputs(a_dir));
  INFERENG_ASSIGN_OR_RETURN(RunInputs b, LoadRunInputs(b_dir));
  return CompareRuns(a, b, options);
}

}  // namespace infereng::job
