// `infereng run CARD [--target URL]`: the main job — the card's baseline benchmark. Without
// --target it starts the embedded engine in-process (job/embedded_engine.h) on a free
// loopback port and benchmarks that; with --target it is `bench` with the card's defaults.
#include "job/embedded_engine.h"
#include "card/card_parser.h"
#include "cli/bench_flags.h"
#include "cli/exit_codes.h"
#include "cli/profile_flag.h"
#include "cli/trace_flags.h"
#include "cli/output_dir.h"

namespace infereng::cli {

int RunRun(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Run a workload card's baseline benchmark. Without --target, against the\n"
               "embedded engine started in-process on a free loopback port. Results, the twin's\n"
               "prediction and report.html go to --out (default runs/<card name>-<UTC time>).",
               argv[0]);
  std::string card_path, target, faults, profile;
  double speedup = 1.0;
  double quality_accuracy = 1.0;
  LoadFlags load;
  ClientFlags client;
  OutputFlags out;
  app.add_option("card", card_path, "Workload card (YAML)")->required();
  app.add_option("--target", target, "Benchmark this server instead of the embedded engine");
  app.add_option("--speedup", speedup, "Embedded engine: engine time runs this many times faster than wall time");
  app.add_option("--faults", faults, "Embedded engine: fault injection spec (see `infereng serve --help`)");
  app.add_option("--quality-accuracy", quality_accuracy,
                 "Embedded engine: answer the card's quality.eval_set right with this probability (x the twin's "
                 "factor for the card's weight precision; default 1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--profile", profile,
                 "Measured profile (infereng profile/calibrate): the run's twin prediction prices steps with its "
                 "table instead of the roofline");
  AddOutputFlags(app, &out);
  AddLoadFlags(app, &load);
  AddClientFlags(app, &client);
  TraceFlags trace;
  AddTraceFlags(app, &trace);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  // Before any load: a bad profile is exit 2 at once, not after the run.
  job::PredictionModel model;
  auto measured = LoadProfileFlag(profile, &model.sets);
  if (!measured.ok()) return ReportError(io, "run", measured.status());
  if (*measured) {
    model.cost = (*measured)->cost;
    model.cost_label = (*measured)->label;
  }
  Result<card::WorkloadCard> card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "run", card.status());
  bench::BenchOptions opt;
  opt.card = std::move(card).value();
  if (Status s = ApplyTraceFlags(trace, &opt.card); !s.ok()) return ReportError(io, "run", s);
  if (trace.given()) {
    // Before the embedded engine starts: a bad trace line is exit 2 at once.
    Result<workload::ReplayInfo> info =
        SetUpTraceRun(trace, load.requests.has_value() || !load.duration.empty(), !load.warmup.empty(), &opt.card);
    if (!info.ok()) return ReportError(io, "run", info.status());
  }
  if (Status s = ApplyFlags(load, client, &opt); !s.ok()) return ReportError(io, "run", s);

  job::EmbeddedOptions eo;
  eo.speedup = speedup;
  eo.seed = opt.seed.value_or(opt.card.bench.seed);
  eo.faults = faults;
  eo.quality_accuracy = quality_accuracy;
  eo.unix_socket = opt.unix_socket;  // --unix-socket: the embedded engine listens there
  Result<job::JobEngine> engine = job::JobEngine::Open(target, opt.card, eo);
  if (!engine.ok()) return ReportError(io, "run", engine.status());
  if (!engine->note().empty() && !out.json) io.err << "note: " << engine->note() << "\n";
  engine->Apply(&opt);
  // runs/<card name>-<UTC time>: every run keeps its own directory.
  if (out.out.empty()) out.out = TimestampedOutputDir("runs/", opt.card.name, "run");
  // The twin's prediction beside the measurement, over the charted trial's window: the
  // report draws both (job/run_report.h).
  return ExecuteBench(opt, out, "run", io, {.predict = true, .engine_speedup = engine->speedup(), .model = std::move(model)});
}

}  // namespace infereng::cli
