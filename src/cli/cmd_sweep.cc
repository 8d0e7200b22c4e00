// `infereng sweep CARD`: sweeps the offered load to find the saturation point and the max
// goodput under the card's SLOs (search.h), each point a full run under OUT/points/, then
// prints the table and writes sweep.json, sweep.csv and the report. Without --target the
// points run against the embedded engine (in-process, --speedup); --simulate runs the
// same sweep on the twin in virtual time. A measured rate sweep also asks the twin for its
// prediction at the same loads (when the card resolves), drawn beside the measurement.
// Exit codes: 0 a max goodput under the SLOs was found, 1 no load met them, 3 a point
// failed to run, 130 (143) interrupted by SIGINT (SIGTERM) with the finished points written.
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "card/card_parser.h"
#include "card/limits.h"
#include "card/slo.h"
#include "cli/cli_util.h"
#include "cli/profile_flag.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/interrupt.h"
#include "cli/output_dir.h"
#include "core/units.h"
#include "report/report.h"
#include "job/sweep_points.h"
#include "sweep/runner.h"
#include "sweep/search.h"
#include "sweep/sweep_io.h"

namespace infereng::cli {
namespace {

// The card's limits (card.h), as --rate and --concurrency have them.
double MaxLoad(sweep::LoadKind kind) {
  return kind == sweep::LoadKind::kRate ? card::kMaxRateRps : static_cast<double>(card::kMaxConcurrency);
}

Result<std::vector<double>> ParsePoints(const std::string& text, sweep::LoadKind kind) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    auto r = units::ParseRate(item, "rps");
    if (!r.ok() || !(*r > 0)) {
      return Status::InvalidArgument(fmt::format("--points: \"{}\" is not a positive load (e.g. 1,2.5,4 or 10rps)", item));
    }
    if (!(*r <= MaxLoad(kind))) {
      return Status::InvalidArgument(fmt::format("--points: \"{}\" exceeds the card's limit of {:g}", item, MaxLoad(kind)));
    }
    out.push_back(*r);
  }
  if (out.empty()) return Status::InvalidArgument("--points: expected a comma-separated list of loads, e.g. 1,2,4,8");
  return out;
}

}  // namespace

int RunSweep(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Sweep the load: probe upward until saturation, then bisect on SLO attainment to find the\n"
               "max goodput under the card's SLOs. Each point is a full run under OUT/points/.",
               argv[0]);
  std::string card_path, target, out_dir, by = "rate", points_text, point_duration, warmup;
  bool simulate = false, no_early_stop = false, no_predict = false, force = false, no_scrape = false;
  std::string scrape_interval;
  int max_points = 10;
  double speedup = 4, growth = 2, tolerance = 0.05;
  std::string start;
  std::vector<std::string> sets;
  app.add_option("card", card_path, "Workload card (YAML)")->required();
  app.add_option("--target", target, "Sweep this server (URL) instead of the embedded engine");
  app.add_option("--out", out_dir, "Output directory, new or empty (default: sweep-<card name>-<UTC time>)");
  app.add_flag("--force", force, "--out holds an earlier sweep or run: remove its files first");
  app.add_option("--by", by, "What to vary: rate (open loop, req/s) or concurrency (closed loop)")
      ->check(CLI::IsMember({"rate", "concurrency"}));
  app.add_option("--points", points_text, "Run exactly these loads (comma-separated) instead of searching");
  app.add_flag("--simulate", simulate, "Run the sweep on the twin in virtual time (seconds)");
  app.add_option("--max-points", max_points, "Most points the search may run")->check(CLI::Range(1, 100));
  app.add_option("--point-duration", point_duration,
                 "Measurement window per point, e.g. 20s (default: min(card bench.duration, 20s); twin: the card's)");
  app.add_option("--warmup", warmup, "Warm-up per point (default: min(card bench.warmup, duration/5))");
  app.add_option("--start", start, "First load of the search (default: half the card's rate, or concurrency 1)");
  app.add_option("--growth", growth, "Probe factor between loads")->check(InRange(1.1, 10));
  app.add_option("--tolerance", tolerance, "Bisection stops when the bracket is this tight (relative)")
      ->check(InRange(0.001, 1));
  app.add_option("--speedup", speedup, "Embedded engine: engine time runs this many times faster than wall time")
      ->check(InRange(0.01, 1000));
  std::string profile;
  app.add_option("--profile", profile,
                 "Measured profile (infereng profile/calibrate): the twin (--simulate, and a --target sweep's "
                 "predictions) prices steps with its table");
  app.add_option("--set", sets, "Twin knob override KEY=VALUE (engine.max_num_seqs=64); repeatable");
  app.add_flag("--no-early-stop", no_early_stop, "Run saturated points to the end instead of stopping them early");
  app.add_flag("--no-predict", no_predict, "Measured sweeps: skip the twin's prediction at the same loads");
  job::HistoryLocation history;
  AddHistoryFlags(app, &history);
  auto* scrape = app.add_option("--scrape-interval", scrape_interval,
                                "Measured sweeps: scrape /metrics this often into each point's engine_metrics.jsonl "
                                "(default 1s)");
  app.add_flag("--no-scrape", no_scrape, "Measured sweeps: no periodic /metrics scrape")->excludes(scrape);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  if (simulate && !target.empty()) return ReportError(io, "sweep", Status::InvalidArgument("--simulate and --target exclude each other"));

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "sweep", card.status());

  sweep::SweepRunOptions ro;
  ro.card = std::move(card).value();
  ro.kind = by == "rate" ? sweep::LoadKind::kRate : sweep::LoadKind::kConcurrency;
  ro.target = target;
  ro.speedup = speedup;
  ro.sets = sets;
  if (!profile.empty()) {
    if (!simulate && target.empty()) {
      return ReportError(io, "sweep", Status::InvalidArgument("--profile: applies to the twin (--simulate) and to the "
                                                              "predictions of a --target sweep, not to the embedded engine"));
    }
    auto measured = LoadProfileFlag(profile, &ro.sets);
    if (!measured.ok()) return ReportError(io, "sweep", measured.status());
    ro.measured_cost = (*measured)->cost;
    ro.measured_label = (*measured)->label;
  }
  ro.early_stop = !no_early_stop;
  if (!scrape_interval.empty()) {
    auto d = units::ParseDurationSeconds(scrape_interval, "s");
    if (!d.ok() || !(*d >= 0.01)) {
      return ReportError(io, "sweep", Status::InvalidArgument("--scrape-interval: expected a duration of at least 10ms, like 1s"));
    }
    ro.scrape_interval_s = *d;
  }
  if (no_scrape) ro.scrape_interval_s = 0;
  ro.interrupt = &InterruptFlag();
  ro.log = [&io](const std::string& line) { io.out << "  " << line << "\n"; };
  if (!point_duration.empty()) {
    auto d = units::ParseDurationSeconds(point_duration, "s");
    if (!d.ok() || !(*d > 0)) return ReportError(io, "sweep", Status::InvalidArgument("--point-duration: expected a duration like 20s"));
    ro.point_duration_s = *d;
  }
  if (!warmup.empty()) {
    auto d = units::ParseDurationSeconds(warmup, "s");
    if (!d.ok()) return ReportError(io, "sweep", Status::InvalidArgument("--warmup: expected a duration like 2s"));
    ro.warmup_s = *d;
  }
  // Each sweep keeps its own directory; a card's name never leads out of it (path_names.h).
  if (out_dir.empty()) out_dir = TimestampedOutputDir("sweep-", ro.card.name, "card");
  if (Status s = PrepareOutputDir(out_dir, force); !s.ok()) return ReportError(io, "sweep", s);
  ro.out_dir = out_dir;
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return ReportError(io, "sweep", Status::IoError(fmt::format("--out {}: {}", out_dir, ec.message())));

  sweep::SearchOptions so;
  so.kind = ro.kind;
  so.max_points = max_points;
  so.growth = growth;
  so.tolerance = tolerance;
  so.attainment_target = ro.card.slo.attainment;
  if (!points_text.empty()) {
    auto pts = ParsePoints(points_text, ro.kind);
    if (!pts.ok()) return ReportError(io, "sweep", pts.status());
    so.fixed_points = *pts;
  }
  if (!start.empty()) {
    auto s = units::ParseRate(start, "rps");
    if (!s.ok() || !(*s > 0) || !(*s <= MaxLoad(ro.kind))) {
      return ReportError(io, "sweep", Status::InvalidArgument(fmt::format("--start: expected a positive load up to {:g}", MaxLoad(ro.kind))));
    }
    so.start_load = *s;
  } else {
    so.start_load = ro.kind == sweep::LoadKind::kRate ? std::max(ro.card.traffic.arrival.rate_rps / 2, 0.1) : 1;
  }

  auto runner = simulate ? sweep::MakeTwinPointRunner(ro) : job::MakeBenchPointRunner(ro);
  if (!runner.ok()) return ReportError(io, "sweep", runner.status());

  std::string where = simulate ? "the twin (virtual time)"
                      : target.empty() ? fmt::format("the embedded engine (speedup {}x)", speedup) : target;
  io.out << fmt::format("Sweeping {} of '{}' on {} -> {}/\n", by, ro.card.name, where, out_dir);
  // Ctrl-C stops the search; the points that finished are still written below. The
  // handlers cover the search only: a Ctrl-C while writing the files ends the process.
  std::optional<InterruptScope> signals(std::in_place);
  auto result = sweep::RunSweepSearch(so, *runner, [&](const sweep::SweepPoint& p) {
    io.out << sweep::FormatPointLine(p, ro.kind) << "\n";
    io.out.flush();
  });
  signals.reset();
  const int interrupted_by = InterruptSignal();
  if (!result.ok()) {
    const int rc = ReportError(io, "sweep", result.status());
    return interrupted_by != 0 ? ExitCodeForSignal(interrupted_by) : rc;
  }

  sweep::SweepFile file;
  file.result = std::move(result).value();
  file.result.card_name = ro.card.name;
  file.result.source = simulate ? "simulated" : "measured";
  file.result.target = simulate ? "twin" : target.empty() ? fmt::format("embedded (speedup {}x)", speedup) : target;
  file.result.slos = sweep::SloLines(ro.card);
  file.result.goodput_thresholds = card::DescribeGoodputThresholds(card::GoodputThresholds(ro.card.slo));
  file.result.speedup = !simulate && target.empty() ? speedup : 1;
  if (!simulate && !no_predict && !file.result.points.empty() && interrupted_by != 0) {
    file.result.notes.push_back("no twin prediction: the sweep was interrupted");
  } else if (!simulate && !no_predict && !file.result.points.empty()) {
    auto predicted = sweep::PredictWithTwin(ro, file.result.points);
    if (predicted.ok()) {
      file.predicted = std::move(predicted).value();
    } else {
      file.result.notes.push_back("no twin prediction: " + predicted.status().message());
    }
  }

  io.out << "\n" << sweep::FormatSweepTable(file.result);
  std::string json_path = out_dir + "/sweep.json";
  if (Status s = sweep::WriteSweepJson(json_path, file); !s.ok()) return ReportError(io, "sweep", s);
  if (Status s = sweep::WriteSweepCsv(out_dir + "/sweep.csv", file.result); !s.ok()) return ReportError(io, "sweep", s);
  auto rep = report::WriteReport(out_dir);
  if (!rep.ok()) {
    const int rc = ReportError(io, "sweep", rep.status().WithContext("report"));
    return interrupted_by != 0 ? ExitCodeForSignal(interrupted_by) : rc;
  }
  io.out << fmt::format("\nWrote {}, {}/sweep.csv and {} ({} charts)\n", json_path, out_dir, rep->html, rep->charts);
  RegisterInHistory(history, job::EntryFromRunDir(out_dir, "sweep"), "sweep", io, true);

  if (interrupted_by != 0) {
    io.err << "infereng sweep: interrupted; the points that finished are in the files above\n";
    return ExitCodeForSignal(interrupted_by);
  }
  if (!file.result.error.empty()) {
    io.err << "infereng sweep: error: " << file.result.error << "\n";
    return kExitRuntime;
  }
  return file.result.max_goodput ? kExitOk : kExitCheckFailed;
}

}  // namespace infereng::cli
