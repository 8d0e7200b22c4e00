// `infereng run CARD [--target URL]`: the main job — the card's baseline benchmark. Without
// --target it starts the embedded engine in-process (bench/embedded.h) on a free loopback
// port and benchmarks that; with --target it is `bench` with the card's defaults.
#include "bench/embedded.h"
#include "bench/prediction.h"
#include "card/card_parser.h"
#include "cli/bench_flags.h"
#include "cli/exit_codes.h"
#include "cli/output_dir.h"

namespace infereng::cli {

int RunRun(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Run a workload card's baseline benchmark. Without --target, against the\n"
               "embedded engine started in-process on a free loopback port. Results, the twin's\n"
               "prediction and report.html go to --out (default runs/<card name>-<UTC time>).",
               argv[0]);
  std::string card_path, target, faults;
  double speedup = 1.0;
  LoadFlags load;
  ClientFlags client;
  OutputFlags out;
  app.add_option("card", card_path, "Workload card (YAML)")->required();
  app.add_option("--target", target, "Benchmark this server instead of the embedded engine");
  app.add_option("--speedup", speedup, "Embedded engine: engine time runs this many times faster than wall time");
  app.add_option("--faults", faults, "Embedded engine: fault injection spec (see `infereng serve --help`)");
  AddOutputFlags(app, &out);
  AddLoadFlags(app, &load);
  AddClientFlags(app, &client);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  Result<card::WorkloadCard> card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "run", card.status());
  bench::BenchOptions opt;
  opt.card = std::move(card).value();
  if (Status s = ApplyFlags(load, client, &opt); !s.ok()) return ReportError(io, "run", s);

  bench::Embedded embedded;
  if (target.empty()) {
    bench::EmbeddedOptions eo;
    eo.speedup = speedup;
    eo.seed = opt.seed.value_or(opt.card.bench.seed);
    eo.faults = faults;
    eo.unix_socket = opt.unix_socket;  // --unix-socket: the embedded engine listens there
    Result<bench::Embedded> e = bench::StartEmbedded(opt.card, eo);
    if (!e.ok()) return ReportError(io, "run", e.status());
    embedded = std::move(e).value();
    if (!embedded.note.empty() && !out.json) io.err << "note: " << embedded.note << "\n";
    opt.target = embedded.url;
    opt.extra_manifest = embedded.manifest;
  } else {
    opt.target = target;
  }
  // runs/<card name>-<UTC time>: every run keeps its own directory.
  if (out.out.empty()) out.out = TimestampedOutputDir("runs/", opt.card.name, "run");
  const bool embedded_engine = target.empty();
  auto predict = [&](const bench::BenchResult& res) {
    // The twin's prediction beside the measurement, over the charted trial's window: the
    // report draws both. Skipped or failed, the reason is said: a report without a
    // prediction must not puzzle.
    Status s = bench::WriteTwinPrediction(opt, embedded_engine ? speedup : 1.0, out.out, &res.summary);
    if (!s.ok() && !out.json) io.err << "note: no twin prediction: " << s.message() << "\n";
  };
  const int rc = ExecuteBench(opt, out, "run", io, predict);
  if (embedded.server) embedded.server->Stop();
  return rc;
}

}  // namespace infereng::cli
