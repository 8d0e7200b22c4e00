// canary: paired runs against two targets, compare's statistics, the go / no-go verdict
// and gradual widening (canary.h). Writing canary.json and the Markdown are in
// canary_report.cc.
#include "job/canary.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <thread>

#include "bench/engine_probe.h"
#include "bench/shard.h"
#include "bench/target.h"
#include "job/bench_job.h"
#include "job/compare_report.h"
#include "job/manifest.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

// The latency criteria of the default acceptance, in report order.
constexpr const char* kDefaultLatencyKeys[] = {"ttft_ms.p99", "itl_ms.p99", "e2e_ms.p99"};

std::string Num(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

std::string Pct(double f) { return fmt::format("{:+.1f}%", 100 * f); }

// A step's share as a percentage: "5", "25", "12.5".
std::string Share(double f) { return fmt::format("{:g}", 100 * f); }

// "TTFT P99 worse: 41.2 -> 88.0 ms (+113.6% [+95.0%, +130.1%])".
std::string DeltaText(const MetricDelta& d) {
  const std::string unit = d.unit.empty() ? "" : " " + d.unit;
  std::string s = fmt::format("{} {}: baseline {}{} -> candidate {}{}", d.label, DeltaVerdictName(d.verdict),
                              Num(d.ci.a), unit, Num(d.ci.b), unit);
  if (d.unit.empty()) {
    s += fmt::format(" ({:+.2f}pp [{:+.2f}pp, {:+.2f}pp])", 100 * d.ci.delta, 100 * d.ci.low, 100 * d.ci.high);
  } else if (d.ci.rel) {
    s += " (" + Pct(*d.ci.rel);
    if (d.ci.rel_low && d.ci.rel_high) s += fmt::format(" [{}, {}]", Pct(*d.ci.rel_low), Pct(*d.ci.rel_high));
    s += ")";
  }
  return s;
}

Status CheckFractions(const std::vector<double>& fractions) {
  if (fractions.empty()) return Status::InvalidArgument("--steps: no steps");
  double prev = 0;
  for (double f : fractions) {
    const std::string what = fmt::format("--steps: {}%", Share(f));
    if (!(f > prev && f <= 1)) return Status::InvalidArgument(what + ": steps must increase, each in (0, 100]");
    const double n = 1 / f;
    if (std::fabs(n - std::round(n)) > 1e-6 * n) {
      return Status::InvalidArgument(what + " is not 1/N of the requests (use 5, 10, 20, 25, 50, 100, ...)");
    }
    prev = f;
  }
  if (fractions.back() != 1) return Status::InvalidArgument("--steps: the last step must be 100%");
  return Status::Ok();
}

// Both targets answer before any load is sent: an unreachable one is Unavailable (exit 3)
// naming which, instead of a full run against the other.
Status CheckReachable(const std::string& role, const std::string& url, const CanaryOptions& o) {
  Result<bench::Target> t = bench::ParseTarget(url);
  if (!t.ok()) return t.status().WithContext("--" + role);
  INFERENG_ASSIGN_OR_RETURN(std::string key, bench::LoadApiKey(o.bench.api_key));
  client::ClientOptions co;
  co.base_url = t->root;
  if (!key.empty()) co.headers.push_back({"Authorization", "Bearer " + key});
  co.insecure = o.bench.insecure;
  co.ca_file = o.bench.ca_file;
  co.connect_timeout = 5 * kNanosPerSecond;
  Result<bench::ServerInfo> info = bench::ProbeServer(co, 5 * kNanosPerSecond);
  if (!info.ok()) {
    return Status::Unavailable(
        bench::ScrubSecret(fmt::format("{} ({}): {}", role, t->display, info.status().message()), key));
  }
  return Status::Ok();
}

struct PairRuns {
  Result<bench::BenchResult> baseline = Status::Internal("not run");
  Result<bench::BenchResult> candidate = Status::Internal("not run");
};

// The two bench jobs of one step, on two threads, with one shared start instant: request i
// leaves for both targets at the same intended time.
PairRuns RunPair(const CanaryOptions& o, const CanaryStep& step) {
  bench::BenchOptions base = o.bench;
  base.on_progress = nullptr;  // two runs at once: the canary reports per step, not per run
  base.on_notice = nullptr;
  base.shard = bench::Shard{.k = 0, .n = step.shard_n};
  base.start_at_unix_ns = bench::WallNowUnixNs() + o.start_delay;
  // Paired: request i carries the same prompt text to both targets (one salt for the pair,
  // a fresh one per step unless --prompt-salt gave it).
  if (!base.prompt_salt) base.prompt_salt = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  bench::BenchOptions cand = base;
  base.target = o.baseline;
  base.out_dir = step.baseline_dir;
  cand.target = o.candidate;
  cand.out_dir = step.candidate_dir;
  PairRuns runs;
  std::thread t([&] { runs.candidate = RunBench(cand); });
  runs.baseline = RunBench(base);
  t.join();
  return runs;
}

Status RunStep(const CanaryOptions& o, CanaryStep* step, bool* interrupted) {
  std::error_code ec;
  fs::create_directories(step->baseline_dir, ec);
  fs::create_directories(step->candidate_dir, ec);
  if (ec) return Status::IoError(step->dir + ": cannot be created: " + ec.message());
  PairRuns runs = RunPair(o, *step);
  for (auto [role, r] : {std::pair{"baseline", &runs.baseline}, std::pair{"candidate", &runs.candidate}}) {
    if (!r->ok()) return r->status().WithContext(fmt::format("{} run", role));
    for (const std::string& n : (*r)->notes) step->notes.push_back(fmt::format("{}: {}", role, n));
    if ((*r)->target_down) {
      return Status::Unavailable(fmt::format("the {} target stopped answering mid-run (its partial run is in {})", role,
                                             role == std::string("baseline") ? step->baseline_dir : step->candidate_dir));
    }
    if ((*r)->interrupted) *interrupted = true;
    if ((*r)->partial) step->partial = true;
  }
  step->baseline_slo_pass = runs.baseline->verdict.pass;
  step->candidate_slo_pass = runs.candidate->verdict.pass;
  if (*interrupted) return Status::Ok();

  INFERENG_ASSIGN_OR_RETURN(RunInputs a, LoadRunInputs(step->baseline_dir));
  INFERENG_ASSIGN_OR_RETURN(RunInputs b, LoadRunInputs(step->candidate_dir));
  CompareOptions co;
  co.bootstrap = o.bootstrap;
  co.accept = o.accept;
  co.card = &o.bench.card;
  INFERENG_ASSIGN_OR_RETURN(step->comparison, CompareRuns(a, b, co));
  PairedOptions po{.resamples = o.bootstrap.resamples, .confidence = o.bootstrap.confidence, .seed = o.bootstrap.seed};
  INFERENG_ASSIGN_OR_RETURN(step->paired, ComparePairedDirs(step->baseline_dir, step->candidate_dir, po));
  JudgeCanaryStep(o, step);
  if (!step->dir.empty()) {
    INFERENG_RETURN_IF_ERROR(
        WriteTextFile((fs::path(step->dir) / "comparison.html").string(), ComparisonHtml(step->comparison)));
  }
  return Status::Ok();
}

std::string StepDirName(std::size_t i, double fraction) {
  return fmt::format("step-{}-{}pct", i + 1, Share(fraction));
}

}  // namespace

void JudgeCanaryStep(const CanaryOptions& options, CanaryStep* step) {
  const Comparison& c = step->comparison;
  step->reasons.clear();
  if (options.accept.empty()) {
    for (const char* key : kDefaultLatencyKeys) {
      // The paired test: a consistent per-request slowdown beyond min_effect.
      if (const PairedMetric* p = step->paired.Find(key);
          p && p->verdict == PairedVerdict::kWorse && p->relative() > options.min_effect) {
        step->reasons.push_back({p->key + ".paired", PairedText(*p)});
      }
      const MetricDelta* d = c.Find(key);
      if (!d || d->verdict != DeltaVerdict::kWorse) continue;
      if (d->ci.rel && *d->ci.rel <= options.min_effect) continue;  // detectable, but negligible
      step->reasons.push_back({key, DeltaText(*d)});
    }
    if (const MetricDelta* d = c.Find("error_rate"); d && d->verdict == DeltaVerdict::kWorse) {
      step->reasons.push_back({"error_rate", DeltaText(*d)});
    }
  }
  // --accept expressions, the card's SLOs and quality floor on the candidate, and compare's
  // quality rule (a pass-rate drop whose interval excludes 0).
  for (const AcceptResult& r : c.acceptance) {
    if (r.pass) continue;
    std::string text = r.detail;
    if (r.source == "quality") {
      if (const MetricDelta* q = c.Find("quality_pass_rate")) text = DeltaText(*q);
    }
    const std::string criterion = r.source == "--accept" ? "--accept '" + r.expression + "'"
                                  : r.source == "quality" ? std::string("quality_pass_rate")
                                                          : r.source + ": " + r.expression;
    step->reasons.push_back({criterion, text});
  }
  step->go = step->reasons.empty();
}

Result<CanaryResult> RunCanary(const CanaryOptions& options) {
  if (options.out_dir.empty()) return Status::InvalidArgument("canary: an output directory is required");
  if (options.baseline.empty() || options.candidate.empty()) {
    return Status::InvalidArgument("canary: both --baseline and --candidate are required");
  }
  if (!options.bench.unix_socket.empty()) {
    return Status::InvalidArgument("--unix-socket: a canary has two targets; give each as a URL");
  }
  if (options.bench.trials && *options.bench.trials > 1) {
    return Status::InvalidArgument("--trials: a canary makes one paired run per step (run it again for another)");
  }
  if (options.bench.cold_start_requests > 0) {
    return Status::InvalidArgument("--cold-start: not part of a canary (`infereng probe --only cold-start` measures it)");
  }
  const std::vector<double> fractions = options.gradual ? options.fractions : std::vector<double>{1.0};
  INFERENG_RETURN_IF_ERROR(CheckFractions(fractions));
  INFERENG_RETURN_IF_ERROR(CheckReachable("baseline", options.baseline, options));
  INFERENG_RETURN_IF_ERROR(CheckReachable("candidate", options.candidate, options));

  CanaryResult res;
  res.criteria = CanaryCriteria(options);
  for (std::size_t i = 0; i < fractions.size(); ++i) {
    CanaryStep step;
    step.fraction = fractions[i];
    step.shard_n = static_cast<int>(std::lround(1 / fractions[i]));
    step.dir = options.gradual ? (fs::path(options.out_dir) / StepDirName(i, fractions[i])).string() : options.out_dir;
    step.baseline_dir = (fs::path(step.dir) / "baseline").string();
    step.candidate_dir = (fs::path(step.dir) / "candidate").string();
    if (options.on_step) {
      options.on_step(options.gradual ? fmt::format("step {}/{}: {}% of the requests (1 in {}) to both targets", i + 1,
                                                    fractions.size(), Share(step.fraction), step.shard_n)
                                      : std::string("the workload to both targets, paired"));
    }
    Status st = RunStep(options, &step, &res.interrupted);
    if (!st.ok()) {
      if (options.gradual) st = st.WithContext(fmt::format("step {} ({}%)", i + 1, Share(step.fraction)));
      return st;
    }
    res.steps.push_back(std::move(step));
    if (res.interrupted || !res.steps.back().go) break;
  }
  res.go = !res.interrupted && !res.steps.empty() && res.steps.back().go && res.steps.size() == fractions.size();
  INFERENG_RETURN_IF_ERROR(WriteJsonFile((fs::path(options.out_dir) / "canary.json").string(), CanaryToJson(res, options)));
  INFERENG_RETURN_IF_ERROR(WriteTextFile((fs::path(options.out_dir) / "canary.md").string(), CanaryMarkdown(res, options)));
  return res;
}

}  // namespace infereng::job
