// `infereng canary --baseline URL --candidate URL --card FILE`: the card's workload sent to
// both targets, paired, then compare's statistics and a go / no-go verdict (job/canary.h).
// This file owns flags, printing and the exit code: 0 go, 1 no-go, 2 bad input, 3 a target
// unreachable or gone mid-run, 130/143 interrupted (the runs so far are kept).
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/bench_flags.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/interrupt.h"
#include "cli/output_dir.h"
#include "job/canary.h"
#include "job/compare_report.h"
#include "serve/faults.h"

namespace infereng::cli {
namespace {

Result<std::vector<double>> ParseSteps(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty() && item.back() == '%') item.pop_back();
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size()) {
      return Status::InvalidArgument("--steps: \"" + item + "\" is not a percentage (e.g. 5,25,50,100)");
    }
    out.push_back(v / 100);
  }
  return out;
}

void PrintResult(std::ostream& os, const job::CanaryResult& r, const std::string& out_dir) {
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const job::CanaryStep& s = r.steps[i];
    if (r.steps.size() > 1 || s.fraction < 1) {
      os << "step " << i + 1 << " (" << 100 * s.fraction << "% of the requests): " << (s.go ? "go" : "NO-GO") << "\n";
    }
    for (const std::string& n : s.notes) os << "  note: " << n << "\n";
  }
  if (!r.steps.empty() && !r.interrupted) os << job::FormatComparisonText(r.steps.back().comparison);
  os << "\ncanary: " << (r.interrupted ? "INTERRUPTED (no verdict)" : r.go ? "GO" : "NO-GO") << "\n";
  if (!r.steps.empty()) {
    for (const job::CanaryReason& why : r.steps.back().reasons) os << "  - " << why.criterion << ": " << why.text << "\n";
  }
  if (r.go || r.interrupted) {
    os << "go means:\n";
    for (const std::string& c : r.criteria) os << "  - " << c << "\n";
  }
  os << "wrote " << (std::filesystem::path(out_dir) / "canary.json").string() << ", canary.md and the runs\n";
}

}  // namespace

int RunCanary(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app(
      "Canary a candidate deployment against the baseline: the card's workload (same seed, same requests) is\n"
      "sent to both targets paired at the same intended times, then compared with compare's statistics and\n"
      "judged go / no-go (exit 1 on no-go). --gradual widens the share of requests 5% -> 25% -> 50% -> 100%\n"
      "while the verdict holds and stops at the first failing step.",
      argv[0]);
  std::string baseline, candidate, card_path, out, steps = "5,25,50,100", start_delay = "3s";
  std::vector<std::string> accept;
  bool gradual = false, quiet = false;
  int resamples = 1000;
  double min_effect_pct = 5;
  LoadFlags load;
  ClientFlags client;
  app.add_option("--baseline", baseline, "URL of the deployment serving today")->required();
  app.add_option("--candidate", candidate, "URL of the deployment to roll out")->required();
  app.add_option("--card", card_path, "Workload card: the load, eval set (quality) and SLOs")->required();
  app.add_option("--accept", accept,
                 "Acceptance on the change baseline -> candidate instead of the default criteria, e.g. "
                 "'ttft_ms.p99<=+10%', 'error_rate<=+0.5pp' (repeatable; compare's grammar)");
  app.add_option("--out", out, "Directory for both runs, canary.json and canary.md (default canary-<card>-<UTC time>)");
  app.add_flag("--gradual", gradual, "Widen the candidate's share of requests in steps while the verdict holds");
  app.add_option("--steps", steps, "Gradual steps, percent of the requests, each 100/N");
  app.add_option("--start-delay", start_delay, "Both runs start together this long after the canary starts (setup time)");
  app.add_option("--min-effect", min_effect_pct, "Default criteria: a latency P99 fails when worse by more than this %")
      ->check(InRange(0, 1000));
  app.add_option("--resamples", resamples, "Bootstrap resamples per run")->check(InRange(100, 100000));
  app.add_flag("--quiet,-q", quiet, "No step lines");
  job::HistoryLocation history;
  AddHistoryFlags(app, &history);
  AddLoadFlags(app, &load);
  AddClientFlags(app, &client);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  job::CanaryOptions o;
  o.baseline = baseline;
  o.candidate = candidate;
  o.gradual = gradual;
  o.min_effect = min_effect_pct / 100;
  o.bootstrap.resamples = resamples;
  auto exprs = job::ParseAcceptExprs(accept);
  if (!exprs.ok()) return ReportError(io, "canary", exprs.status());
  o.accept = std::move(*exprs);
  auto fractions = ParseSteps(steps);
  if (!fractions.ok()) return ReportError(io, "canary", fractions.status());
  o.fractions = std::move(*fractions);
  auto delay = serve::ParseDuration(start_delay);
  if (!delay.ok()) return ReportError(io, "canary", delay.status().WithContext("--start-delay"));
  o.start_delay = *delay;
  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "canary", card.status());
  o.bench.card = std::move(*card);
  if (Status st = ApplyFlags(load, client, &o.bench); !st.ok()) return ReportError(io, "canary", st);
  o.out_dir = out.empty() ? TimestampedOutputDir("canary-", o.bench.card.name, "card") : out;
  if (Status st = PrepareOutputDir(o.out_dir, /*force=*/false); !st.ok()) return ReportError(io, "canary", st);
  if (!quiet) o.on_step = [&io](const std::string& s) { io.err << "canary: " << s << "\n"; };

  InterruptScope scope;
  o.bench.interrupt = &InterruptFlag();
  auto r = job::RunCanary(o);
  if (!r.ok()) return ReportError(io, "canary", r.status());
  PrintResult(io.out, *r, o.out_dir);
  RegisterInHistory(history, job::EntryFromRunDir(o.out_dir), "canary", io, true);
  if (r->interrupted) return ExitCodeForSignal(InterruptSignal());
  return r->go ? kExitOk : kExitCheckFailed;
}

}  // namespace infereng::cli
