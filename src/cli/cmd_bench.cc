// `infereng bench --target URL --card FILE`: truthful load against any OpenAI-compatible
// endpoint (bench/bench_session.h does the work; cli/bench_flags.h the shared flags).
#include "card/card_parser.h"
#include "cli/bench_flags.h"
#include "cli/exit_codes.h"

namespace infereng::cli {

int RunBench(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Benchmark an OpenAI-compatible endpoint with a workload card's load.\n"
               "Latency is measured from the intended send time (no coordinated omission); see\n"
               "summary.json for every metric's P50/P90/P95/P99/P99.9 and the SLO verdict.",
               argv[0]);
  std::string target, card_path;
  LoadFlags load;
  ClientFlags client;
  OutputFlags out;
  app.add_option("--target", target, "Server URL, e.g. http://127.0.0.1:8000 or https://host/v1")->required();
  app.add_option("--card", card_path, "Workload card (YAML)")->required();
  AddOutputFlags(app, &out);
  AddLoadFlags(app, &load);
  AddClientFlags(app, &client);
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  Result<card::WorkloadCard> card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "bench", card.status());
  bench::BenchOptions opt;
  opt.target = target;
  opt.card = std::move(card).value();
  if (Status s = ApplyFlags(load, client, &opt); !s.ok()) return ReportError(io, "bench", s);
  return ExecuteBench(opt, out, "bench", io);
}

}  // namespace infereng::cli
