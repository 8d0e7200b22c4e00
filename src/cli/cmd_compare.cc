// `infereng compare A B`: what changed between two runs (or two sweeps) and whether it made
// a detectable difference; exit 1 when an acceptance check fails (CI gate), 2 on bad input.
// The work is job::CompareDirs (job/compare.h); this file owns flags, printing, exit codes.
#include <CLI/CLI.hpp>

#include "card/card_parser.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "job/compare.h"
#include "job/compare_report.h"
#include "job/manifest.h"

namespace infereng::cli {

int RunCompare(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Compare two runs (or two sweeps): what changed, per-metric deltas with 95% bootstrap intervals,\n"
               "verdicts (better / worse / no detectable difference), quality, acceptance (exit 1 on failure).",
               argv[0]);
  std::string a_dir, b_dir, card_path, md_path, html_path;
  std::vector<std::string> accept;
  bool json = false, all = false;
  int resamples = 1000;
  uint64_t seed = 20261201;
  app.add_option("a", a_dir, "Baseline: a run directory (summary.json, requests.jsonl, manifest.json) or a sweep directory")
      ->required();
  app.add_option("b", b_dir, "Candidate: the same kind of directory")->required();
  app.add_option("--accept", accept,
                 "Acceptance on the change from A to B, e.g. 'ttft_ms.p99<=-10%', 'e2e_ms.mean<=+20ms', "
                 "'goodput_rps>=0', 'error_rate<=+0.5pp' (repeatable; exit 1 when one fails)");
  app.add_option("--card", card_path, "Also judge B against this card's SLOs and quality floor");
  app.add_flag("--json", json, "Print the comparison as JSON instead of the table");
  app.add_option("--md", md_path, "Also write the comparison as Markdown to this file");
  app.add_option("--html", html_path, "Also write a self-contained HTML page to this file");
  app.add_flag("--all", all, "Show every compared distribution (also TTFT/E2E incl. the client's queue)");
  app.add_option("--resamples", resamples, "Bootstrap resamples per run")->check(InRange(100, 100000));
  app.add_option("--seed", seed, "Bootstrap seed (same seed, same intervals)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  job::CompareOptions options;
  options.bootstrap.resamples = resamples;
  options.bootstrap.seed = seed;
  auto exprs = job::ParseAcceptExprs(accept);
  if (!exprs.ok()) return ReportError(io, "compare", exprs.status());
  options.accept = std::move(*exprs);
  card::WorkloadCard card;
  if (!card_path.empty()) {
    auto loaded = LoadCard(card_path, io);
    if (!loaded.ok()) return ReportError(io, "compare", loaded.status());
    card = std::move(*loaded);
    options.card = &card;
  }

  auto c = job::CompareDirs(a_dir, b_dir, options);
  if (!c.ok()) return ReportError(io, "compare", c.status());
  if (!md_path.empty()) {
    if (Status st = job::WriteTextFile(md_path, job::ComparisonMarkdown(*c)); !st.ok()) return ReportError(io, "compare", st);
  }
  if (!html_path.empty()) {
    if (Status st = job::WriteTextFile(html_path, job::ComparisonHtml(*c)); !st.ok()) return ReportError(io, "compare", st);
  }
  if (json) {
    io.out << job::ComparisonToJson(*c).dump(2) << "\n";
  } else {
    io.out << job::FormatComparisonText(*c, {.all_metrics = all});
    if (!md_path.empty()) io.out << "wrote " << md_path << "\n";
    if (!html_path.empty()) io.out << "wrote " << html_path << "\n";
  }
  return c->accepted ? kExitOk : kExitCheckFailed;
}

}  // namespace infereng::cli
