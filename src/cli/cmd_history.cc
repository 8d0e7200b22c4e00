// `infereng history list|show|trend|import|export`: the run history (job/history.h,
// store/history_db.h). Reading commands exit 2 on a bad id or metric, 3 when the
// database cannot be opened.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "core/clock.h"
#include "job/compare.h"
#include "job/compare_report.h"
#include "job/history.h"
#include "job/history_views.h"
#include "job/manifest.h"

namespace infereng::cli {
namespace {

struct Filters {
  std::string card, target, since, kind;
  int64_t limit = 0;
};

void AddFilterFlags(CLI::App* app, Filters* f) {
  app->add_option("--card", f->card, "Only runs of this card (its name)");
  app->add_option("--target", f->target, "Only runs against this target URL");
  app->add_option("--since", f->since, "Only runs registered since a date (2026-12-01), a UTC time or an age (7d, 12h)");
  app->add_option("--kind", f->kind, "Only run | bench | sweep | simulate | merge | canary | probe");
}

Result<store::ListFilter> ToFilter(const Filters& f) {
  store::ListFilter lf{.card = f.card, .target = f.target, .kind = f.kind, .limit = f.limit};
  if (!f.since.empty()) {
    INFERENG_ASSIGN_OR_RETURN(lf.since, job::ParseSince(f.since, WallTimeIso8601()));
  }
  return lf;
}

Result<std::unique_ptr<store::HistoryDb>> OpenHistory(const job::HistoryLocation& loc) {
  INFERENG_ASSIGN_OR_RETURN(std::string path, job::ResolveHistoryPath({.path = loc.path}));
  if (path.empty()) return Status::InvalidArgument("history is off (INFERENG_HISTORY=off): pass --history PATH");
  return store::HistoryDb::Open(path);
}

int Import(store::HistoryDb& db, const std::vector<std::string>& dirs, CommandIo& io) {
  int failed = 0;
  for (const std::string& d : dirs) {
    Result<store::RunEntry> e = job::EntryFromRunDir(d);
    Result<job::Registered> r = e.ok() ? job::RegisterEntry(db, *e) : Result<job::Registered>(e.status());
    if (!r.ok()) {
      io.err << "infereng history import: " << r.status().message() << "\n";
      ++failed;
      continue;
    }
    io.out << d << ": run #" << r->id << (r->existing ? " (already registered)" : "") << "\n";
  }
  return failed == 0 ? kExitOk : kExitUsage;
}

// The request-level statistics `history check` gates on: a "worse" verdict on any of them is
// a regression. Token-level ones (ITL, TPOT) are left to --accept: between two runs their
// bootstrap can call a replicate different (docs/compare.md, "Replicates").
constexpr const char* kCheckedMetrics[] = {"ttft_ms.p50", "ttft_ms.p90", "ttft_ms.p99", "e2e_ms.p50",
                                           "e2e_ms.p90",  "e2e_ms.p99",  "requests_per_s", "goodput_rps",
                                           "error_rate",  "quality_pass_rate"};

// history check: the newest registered run (within the filters) against a baseline, with
// compare's statistics; exit 1 on a regression or a failed --accept, 2 on bad input.
int Check(store::HistoryDb& db, const std::vector<store::RunEntry>& entries, const std::string& baseline_ref,
          const std::vector<std::string>& accept, CommandIo& io) {
  std::vector<const store::RunEntry*> runs;
  for (const store::RunEntry& e : entries) {
    // Run directories only: a sweep, a canary (two runs) or a probe suite is not compared.
    if (!e.dir.empty() && store::IsComparableRunKind(e.kind)) runs.push_back(&e);
  }
  if (runs.size() < 2) {
    return ReportError(io, "history check",
                       Status::FailedPrecondition("needs two registered runs with a run directory (found " +
                                                  std::to_string(runs.size()) + " matching the filters)"));
  }
  const store::RunEntry& newest = *runs.back();
  std::optional<store::RunEntry> base;
  if (baseline_ref == "latest-passing") {
    for (auto it = runs.rbegin() + 1; it != runs.rend(); ++it) {
      if ((*it)->slo_pass.value_or(false) && !(*it)->partial) {
        base = **it;
        break;
      }
    }
    if (!base) {
      return ReportError(io, "history check",
                         Status::NotFound("no passing run before run #" + std::to_string(newest.id) +
                                          " to use as the baseline (give one with --baseline ID)"));
    }
  } else {
    Result<store::RunEntry> e = job::FindBaseline(db, baseline_ref, {});
    if (!e.ok()) return ReportError(io, "history check", e.status());
    base = *e;
  }
  if (base->id == newest.id) {
    return ReportError(io, "history check", Status::InvalidArgument("the baseline is the newest run itself (#" +
                                                                    std::to_string(newest.id) + ")"));
  }
  auto exprs = job::ParseAcceptExprs(accept);
  if (!exprs.ok()) return ReportError(io, "history check", exprs.status());
  job::CompareOptions options;
  options.accept = std::move(*exprs);
  auto c = job::CompareDirs(base->dir, newest.dir, options);
  if (!c.ok()) return ReportError(io, "history check", c.status());
  io.out << "baseline: run #" << base->id << " (" << base->dir << ")\nnewest:   run #" << newest.id << " ("
         << newest.dir << ")\n\n"
         << job::FormatComparisonText(*c);
  std::vector<std::string> regressions;
  for (const char* key : kCheckedMetrics) {
    const job::MetricDelta* d = c->Find(key);
    if (d != nullptr && d->verdict == job::DeltaVerdict::kWorse) regressions.push_back(d->label);
  }
  if (regressions.empty() && c->accepted) {
    io.out << "\nhistory check: PASS (no request-level metric worse than the baseline";
    io.out << (options.accept.empty() ? ")\n" : ", every --accept held)\n");
    return kExitOk;
  }
  io.err << "history check: FAIL:";
  for (const std::string& r : regressions) io.err << " " << r << " worse;";
  if (!c->accepted) io.err << " an acceptance check failed;";
  io.err << " against run #" << base->id << "\n";
  return kExitCheckFailed;
}

}  // namespace

int RunHistory(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("The run history: every run, bench, sweep, simulate and merge registers itself\n"
               "(manifest facts, headline metrics, SLO verdicts, run directory) in a SQLite database.",
               argv[0]);
  app.require_subcommand(1);
  job::HistoryLocation loc;
  app.add_option("--history", loc.path, "History database (default: $INFERENG_HISTORY, else ~/.local/share/infereng/history.db)");
  Filters f;
  std::string id, metric, html;
  std::vector<std::string> dirs;
  bool csv = false;
  CLI::App* list = app.add_subcommand("list", "List registered runs, oldest first");
  AddFilterFlags(list, &f);
  list->add_option("--last", f.limit, "Only the newest N");
  CLI::App* show = app.add_subcommand("show", "Show one run: its facts, SLO verdicts and metrics");
  show->add_option("id", id, "Run id, or latest-passing")->required();
  CLI::App* trend = app.add_subcommand("trend", "A metric over time: table, sparkline, and an HTML chart with --html");
  trend->add_option("metric", metric, "e.g. ttft_ms.p99, itl_ms.p50, output_tokens_per_s, goodput_rps")->required();
  AddFilterFlags(trend, &f);
  trend->add_option("--html", html, "Also write a self-contained HTML chart here");
  CLI::App* import = app.add_subcommand("import", "Register existing run or sweep directories");
  import->add_option("dirs", dirs, "Run or sweep directories")->required();
  std::string baseline = "latest-passing";
  std::vector<std::string> accept;
  CLI::App* check = app.add_subcommand(
      "check", "The newest run against a baseline (compare's statistics): exit 1 on a regression (a CI gate)");
  check->add_option("--baseline", baseline, "Run id, or latest-passing (default: the newest passing run before it)");
  check->add_option("--accept", accept, "Acceptance expressions as for compare, e.g. 'ttft_ms.p99<=+5%' (repeatable)");
  AddFilterFlags(check, &f);
  CLI::App* exp = app.add_subcommand("export", "Export the history (one row per run, one column per metric)");
  exp->add_flag("--csv", csv, "CSV on stdout (the only format for now)")->required();
  AddFilterFlags(exp, &f);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  Result<std::unique_ptr<store::HistoryDb>> db = OpenHistory(loc);
  if (!db.ok()) return ReportError(io, "history", db.status());
  Result<store::ListFilter> filter = ToFilter(f);
  if (!filter.ok()) return ReportError(io, "history", filter.status());

  if (*import) return Import(**db, dirs, io);
  if (*show) {
    Result<store::RunEntry> e = job::FindBaseline(**db, id, {});
    if (!e.ok()) return ReportError(io, "history show", e.status());
    io.out << job::FormatHistoryEntry(*e);
    return kExitOk;
  }
  Result<std::vector<store::RunEntry>> entries = (*db)->List(*filter);
  if (!entries.ok()) return ReportError(io, "history", entries.status());
  if (*list) {
    io.out << job::FormatHistoryList(*entries);
    return kExitOk;
  }
  if (*check) return Check(**db, *entries, baseline, accept, io);
  if (*exp) {
    io.out << job::HistoryCsv(*entries);
    return kExitOk;
  }
  Result<std::vector<job::TrendPoint>> points = job::TrendOf(*entries, metric);
  if (!points.ok()) return ReportError(io, "history trend", points.status());
  io.out << job::FormatTrend(metric, *points);
  if (!html.empty()) {
    if (Status s = job::WriteTextFile(html, job::TrendHtml(metric, *points)); !s.ok()) {
      return ReportError(io, "history trend", s);
    }
    io.out << "wrote " << html << "\n";
  }
  return kExitOk;
}

}  // namespace infereng::cli
