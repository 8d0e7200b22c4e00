// `infereng merge DIR... --out DIR`: one run directory from the shards of a sharded bench
// (job/merge.h does the work): the summary table, the alignment uncertainty the machines'
// clocks add, the report. Exit 2 when the shards do not belong together (the message says
// which directory and what), 1 when the merged run misses its SLOs, as bench.
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/output_dir.h"
#include "core/units.h"
#include "job/merge.h"
#include "metrics/summary_table.h"
#include "report/report.h"

namespace infereng::cli {

int RunMerge(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Merge the run directories of a sharded bench (bench --shard K/N) into one run directory:\n"
               "the raw records on one timeline, summarised as one client would have (docs/scale-out.md).",
               argv[0]);
  job::MergeOptions opt;
  bool force = false, json = false;
  job::HistoryLocation history;
  app.add_option("dirs", opt.dirs, "The shards' run directories (every K of 0..N-1 once)")->required();
  app.add_option("--out", opt.out, "The merged run directory (new or empty)")->required();
  app.add_option("--card", opt.card_path, "The card the shards ran (default: the path in their manifests)");
  app.add_flag("--force", force, "--out holds an earlier run: remove its files first");
  app.add_flag("--json", json, "Print summary.json instead of the table");
  AddHistoryFlags(app, &history);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  for (const std::string& d : opt.dirs) {
    if (d == opt.out) return ReportError(io, "merge", Status::InvalidArgument("--out " + d + " is one of the shards"));
  }
  if (Status s = PrepareOutputDir(opt.out, force); !s.ok()) return ReportError(io, "merge", s);
  Result<job::MergeResult> res = job::MergeShards(opt);
  if (!res.ok()) return ReportError(io, "merge", res.status());

  if (json) {
    io.out << res->summary_json.dump(2) << "\n";
  } else {
    io.out << "merged " << res->shards << " shards, " << res->records << " records\n";
    metrics::TableOptions to;
    to.color = io.out_is_tty;
    to.show_boundaries = false;
    io.out << metrics::FormatSummaryTable(res->summary, to);
    io.out << "alignment between shards: +/- " << units::FormatSignificant(res->alignment_uncertainty_ms, 3)
           << " ms (start skew + stated clock error; per-request latencies carry none)\n";
    for (const std::string& n : res->notes) io.out << "note: " << n << "\n";
    io.out << "wrote " << opt.out << "/{requests.jsonl,summary.json,manifest.json}\n";
  }
  if (Result<report::ReportFiles> rep = report::WriteRunReport(opt.out); rep.ok()) {
    if (!json) io.out << "report: " << rep->html << "\n";
  } else {
    io.err << "infereng merge: report not written: " << rep.status().ToString() << "\n";
  }
  RegisterInHistory(history, job::EntryFromRunDir(opt.out, "merge"), "merge", io, !json);
  const bool has_slos = !res->summary.slo.empty() || !res->summary.goodput_thresholds.empty() ||
                        res->summary.min_output_tokens_per_s.has_value();
  return has_slos && !res->summary.slo_pass ? kExitCheckFailed : kExitOk;
}

}  // namespace infereng::cli
