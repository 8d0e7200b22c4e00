#include "metrics/trials_table.h"

#include <fmt/format.h>

namespace infereng::metrics {
namespace {

// The TTFT the SLOs are judged on: incl. queue in open loop (summary.h).
const SampleStats& SloTtft(const Summary& s) { return s.open_loop ? s.ttft_incl_queue_ms : s.ttft_ms; }

std::string Num(double v) { return fmt::format("{:.4g}", v); }

// "12.3 [11.0, 13.6]" or "12.3 [CI n/a]"; a '*' marks an interval cut to the metric's range.
std::string MeanAndCi(const TrialCi& c, double scale = 1) {
  if (!c.defined) return fmt::format("{} [CI n/a]", Num(c.mean * scale));
  return fmt::format("{} [{}, {}]{}", Num(c.mean * scale), Num(c.low * scale), Num(c.high * scale), c.clamped ? "*" : "");
}

}  // namespace

std::string FormatTrialsTable(const std::vector<Summary>& trials, const TrialGate& gate) {
  if (trials.size() < 2) return "";
  std::string out;
  auto line = [&out](const std::string& l) { out += l + "\n"; };
  const bool open = trials.front().open_loop;
  line(fmt::format("Trials ({}): the table above is trial 1; each trial:", trials.size()));
  line(fmt::format("  {:<7}{:<7}{:>10}{:>12}{:>12}{:>14}{:>16}{:>8}", "trial", "result", "attain%", "goodput/s",
                   "requests/s", "output tok/s", open ? "TTFT+q p99 ms" : "TTFT p99 ms", "failed"));
  for (size_t i = 0; i < trials.size(); ++i) {
    const Summary& t = trials[i];
    const SampleStats& ttft = SloTtft(t);
    line(fmt::format("  {:<7}{:<7}{:>10.2f}{:>12}{:>12}{:>14}{:>16}{:>8}{}", i + 1, TrialPasses(t, gate) ? "PASS" : "FAIL",
                     t.slo_attainment * 100, Num(t.goodput_rps), Num(t.requests_per_s), Num(t.output_tokens_per_s),
                     ttft.empty() ? "-" : Num(ttft.p99), t.counts.failed, t.partial ? "  [partial]" : ""));
  }
  const TrialStats st = AggregateTrials(trials);
  line("  across trials: mean [95% CI; Student t cut to the possible range, * = cut; n/a below 3 trials]");
  line(fmt::format("    attainment {}%  goodput {}/s  requests {}/s  output {} tok/s", MeanAndCi(st.scalars.at("slo_attainment"), 100),
                   MeanAndCi(st.scalars.at("goodput_rps")), MeanAndCi(st.scalars.at("requests_per_s")),
                   MeanAndCi(st.scalars.at("output_tokens_per_s"))));
  if (auto q = st.scalars.find("quality_pass_rate"); q != st.scalars.end()) {
    line(fmt::format("    quality pass rate {}% (trials that checked eval items: {})", MeanAndCi(q->second, 100), q->second.n));
  }
  const char* ttft_key = open ? "ttft_incl_queue_ms" : "ttft_ms";
  if (auto it = st.distributions.find(ttft_key); it != st.distributions.end() && it->second.count("p99")) {
    line(fmt::format("    {} p99 {} ms", open ? "TTFT incl. queue" : "TTFT", MeanAndCi(it->second.at("p99"))));
  }
  const TrialsVerdict v = JudgeTrials(trials, gate);
  std::string failed;
  for (int t : v.failed_trials) failed += (failed.empty() ? "" : ", ") + std::to_string(t);
  line(fmt::format("Verdict over {} trials: {} ({}){}", trials.size(), v.pass ? "PASS" : "FAIL", kTrialsRule,
                   v.pass ? "" : "; failed: trial " + failed));
  return out;
}

}  // namespace infereng::metrics
