// What `canary` writes: canary.json (for machines and CI) and canary.md (the verdict, its
// reasons and each step's comparison, compare's Markdown reused). URLs go through
// bench::ParseTarget's display form; the API key is never part of CanaryOptions' output.
#include <fmt/format.h>

#include <cmath>

#include "bench/target.h"
#include "job/canary.h"
#include "job/compare_report.h"

namespace infereng::job {
namespace {

std::string DisplayUrl(const std::string& url) {
  Result<bench::Target> t = bench::ParseTarget(url);
  return t.ok() ? t->display : bench::RedactUrl(url);
}

std::string Percent(double f) { return fmt::format("{:g}%", std::round(1000 * f) / 10); }

}  // namespace

std::vector<std::string> CanaryCriteria(const CanaryOptions& o) {
  std::vector<std::string> c;
  if (o.accept.empty()) {
    c.push_back(fmt::format("TTFT, ITL and E2E P99 not detectably worse (95% bootstrap interval excludes 0) by more "
                            "than {:g}%",
                            100 * o.min_effect));
    c.push_back(fmt::format("TTFT, TPOT and E2E per request (paired: both targets got request i at the same instant) "
                            "not detectably slower (Wilcoxon signed-rank p >= {:g}%) by a median of more than {:g}% "
                            "of the baseline's",
                            100 * (1 - o.bootstrap.confidence), 100 * o.min_effect));
    c.push_back("error rate not detectably higher (two-proportion interval)");
  } else {
    for (const AcceptExpr& e : o.accept) c.push_back("--accept " + e.text);
  }
  c.push_back("quality pass rate not lower (when the card has an eval set; interval excludes 0)");
  if (!o.bench.card.slo.latency.empty() || o.bench.card.slo.min_output_tokens_per_s) {
    c.push_back("the card's SLOs met by the candidate");
  }
  if (o.bench.card.quality.pass_threshold > 0) c.push_back("the card's quality floor met by the candidate");
  return c;
}

nlohmann::json CanaryToJson(const CanaryResult& r, const CanaryOptions& o) {
  nlohmann::json steps = nlohmann::json::array();
  for (const CanaryStep& s : r.steps) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const CanaryReason& why : s.reasons) reasons.push_back({{"criterion", why.criterion}, {"text", why.text}});
    steps.push_back({{"fraction", s.fraction},
                     {"every_nth_request", s.shard_n},
                     {"dir", s.dir},
                     {"baseline_dir", s.baseline_dir},
                     {"candidate_dir", s.candidate_dir},
                     {"go", s.go},
                     {"partial", s.partial},
                     {"slo", {{"baseline", s.baseline_slo_pass}, {"candidate", s.candidate_slo_pass}}},
                     {"reasons", std::move(reasons)},
                     {"notes", s.notes},
                     {"comparison", ComparisonToJson(s.comparison)},
                     {"paired", PairedToJson(s.paired)}});
  }
  return {{"schema", "infereng.canary/1"},
          {"go", r.go},
          {"verdict", r.interrupted ? "interrupted" : r.go ? "go" : "no-go"},
          {"interrupted", r.interrupted},
          {"gradual", o.gradual},
          {"baseline", DisplayUrl(o.baseline)},
          {"candidate", DisplayUrl(o.candidate)},
          {"criteria", r.criteria},
          {"steps", std::move(steps)}};
}

std::string CanaryMarkdown(const CanaryResult& r, const CanaryOptions& o) {
  std::string md = fmt::format("# Canary: {}\n\nBaseline `{}`, candidate `{}`.\n\n",
                               r.interrupted ? "interrupted" : r.go ? "GO" : "NO-GO", DisplayUrl(o.baseline),
                               DisplayUrl(o.candidate));
  md += "Go means:\n\n";
  for (const std::string& c : r.criteria) md += "- " + c + "\n";
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const CanaryStep& s = r.steps[i];
    md += fmt::format("\n## Step {}: {} of the requests — {}\n\n", i + 1, Percent(s.fraction), s.go ? "go" : "no-go");
    md += fmt::format("Runs: `{}` (baseline), `{}` (candidate). Card SLOs: baseline {}, candidate {}.\n\n",
                      s.baseline_dir, s.candidate_dir, s.baseline_slo_pass ? "met" : "missed",
                      s.candidate_slo_pass ? "met" : "missed");
    for (const CanaryReason& why : s.reasons) md += fmt::format("- **{}**: {}\n", why.criterion, why.text);
    if (!s.reasons.empty()) md += "\n";
    if (s.paired.pairs > 0) {
      md += fmt::format("Paired per-request differences (candidate - baseline, {} requests ok on both):\n\n",
                        s.paired.pairs);
      for (const PairedMetric& m : s.paired.metrics) {
        md += fmt::format("- {} — {}\n", PairedText(m), PairedVerdictName(m.verdict));
      }
      md += "\n";
    }
    md += ComparisonMarkdown(s.comparison);
  }
  return md;
}

}  // namespace infereng::job
