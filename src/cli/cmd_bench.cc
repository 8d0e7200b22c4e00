// `infereng bench --target URL --card FILE`: truthful load against any OpenAI-compatible
// endpoint (job/bench_job.h does the work; cli/bench_flags.h the shared flags).
// Without --card, a quick look from vLLM-style flags (bench/quick_card.h): fixed
// --input-len / --output-len, --num-requests, every request at once unless --rate or
// --concurrency say otherwise.
#include <string>
#include <string_view>

#include "bench/quick_card.h"
#include "card/card_parser.h"
#include "cli/bench_flags.h"
#include "cli/exit_codes.h"
#include "cli/trace_flags.h"

namespace infereng::cli {
namespace {

// vLLM `bench serve` flags infereng does not take, with what to use instead: a vLLM
// command line fails with a pointer, not CLI11's bare "not expected". (Its --request-rate,
// --max-concurrency, --num-prompts, --result-dir, --base-url, --model, --dataset-path,
// --random-input-len and --random-output-len are accepted as they are.)
struct VllmHint {
  std::string_view flag, hint;
};
constexpr VllmHint kVllmHints[] = {
    {"--backend", "not needed: infereng speaks the OpenAI API to any server; --endpoint chat|completions picks the route"},
    {"--dataset-name", "random is the default without --card (--input-len, --output-len); ShareGPT: --dataset FILE "
                       "--dataset-format sharegpt"},
    {"--host", "give the server as --target http://HOST:PORT"},
    {"--port", "give the server as --target http://HOST:PORT"},
    {"--save-result", "results are always written with --out DIR (or --result-dir DIR)"},
    {"--tokenizer", "not needed: prompt lengths are calibrated with the server's /tokenize or its usage counts"},
    {"--ignore-eos", "output lengths are enforced when the server allows it (manifest: output_length_control)"},
    {"--burstiness", "--rate R is a Poisson process; for burstier traffic write traffic.arrival in a card (gamma, cv)"},
    {"--percentile-metrics", "summary.json has P50/P90/P95/P99/P99.9 of every metric; the table shows them too"},
    {"--metric-percentiles", "summary.json has P50/P90/P95/P99/P99.9 of every metric; the table shows them too"},
};

// The hint for the first vLLM-only flag on the command line ("" when none).
std::string VllmFlagHint(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (const VllmHint& h : kVllmHints) {
      if (arg == h.flag || (arg.starts_with(h.flag) && arg.size() > h.flag.size() && arg[h.flag.size()] == '=')) {
        return std::string(h.flag) + " is a vLLM bench flag, not infereng's: " + std::string(h.hint);
      }
    }
  }
  return "";
}

// The card from --card, or the one synthesised from the quick-look flags (recorded in
// opt->card_from_flags). Sets opt->card.
Status LoadOrSynthesiseCard(const std::string& card_path, const bench::QuickCardFlags& quick, CommandIo& io,
                            bench::BenchOptions* opt) {
  if (!card_path.empty()) {
    INFERENG_ASSIGN_OR_RETURN(opt->card, LoadCard(card_path, io));
    return Status::Ok();
  }
  INFERENG_ASSIGN_OR_RETURN(opt->card, bench::QuickCard(quick));
  opt->card_from_flags = bench::QuickCardJson(quick);
  return Status::Ok();
}

}  // namespace

int RunBenchCommand(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Benchmark an OpenAI-compatible endpoint with a workload card's load, or without a card\n"
               "a quick look: --input-len/--output-len tokens, --num-requests requests, all at once unless\n"
               "--rate or --concurrency (vLLM's bench flag names work too).\n"
               "Latency is measured from the intended send time (no coordinated omission); see\n"
               "summary.json for every metric's P50/P90/P95/P99/P99.9 and the SLO verdict.",
               argv[0]);
  std::string target, card_path;
  bench::QuickCardFlags quick;
  LoadFlags load;
  ClientFlags client;
  OutputFlags out;
  app.add_option("--target,--base-url", target, "Server URL, e.g. http://127.0.0.1:8000 or https://host/v1")->required();
  CLI::Option* card_opt = app.add_option("--card", card_path, "Workload card (YAML); without it, a quick look from the flags below");
  app.add_option("--input-len,--random-input-len", quick.input_len, "Without --card: prompt tokens per request (default 1024)")
      ->excludes(card_opt);
  app.add_option("--output-len,--random-output-len", quick.output_len,
                 "Without --card: output tokens per request (default 128)")
      ->excludes(card_opt);
  std::string shard, start_at, clock_ref;
  std::optional<double> clock_uncertainty;
  app.add_option("--shard", shard,
                 "Run shard K of N (K from 0) of the one schedule: the requests whose index % N == K; "
                 "closed loop: C/N of the users. Merge the shards with `infereng merge` (docs/scale-out.md)");
  app.add_option("--start-at", start_at,
                 "Sharded: start the load at this UTC time (2026-12-02T00:10:00Z) or +30s; give every shard the same");
  app.add_option("--clock-uncertainty", clock_uncertainty,
                 "Sharded: this host clock's error against the shared time reference, ms (chronyc tracking), "
                 "recorded for the merge")
      ->check(AtLeast(0));
  app.add_option("--clock-ref", clock_ref,
                 "Sharded: before the load, measure this host's clock offset to this reference (an `infereng serve` "
                 "URL, its GET /clock) and record it as shard.clock; `infereng merge` realigns the shards with it");
  AddOutputFlags(app, &out);
  AddLoadFlags(app, &load);
  AddClientFlags(app, &client);
  TraceFlags trace;
  AddTraceFlags(app, &trace);
  if (std::string hint = VllmFlagHint(argc, argv); !hint.empty()) {
    return ReportError(io, "bench", Status::InvalidArgument(hint));
  }
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  if (card_path.empty()) {
    if (load.rate.empty() && !load.concurrency && trace.file.empty()) {
      if (!load.duration.empty()) {
        return ReportError(io, "bench", Status::InvalidArgument("--duration without --card: say the load with --rate R "
                                                                "or --concurrency C (without them, --requests N at once)"));
      }
      load.rate = "inf";  // vLLM's default --request-rate: every request at once
    }
    quick.model = client.model;
    quick.num_requests = load.requests.value_or(bench::QuickCardFlags::kDefaultRequests);
    quick.request_rate = load.rate;
    quick.max_concurrency = load.concurrency;
    quick.duration = load.duration;
    quick.num_requests_given = load.requests.has_value();
  }
  bench::BenchOptions opt;
  opt.target = target;
  if (Status s = LoadOrSynthesiseCard(card_path, quick, io, &opt); !s.ok()) return ReportError(io, "bench", s);
  if (Status s = ApplyTraceFlags(trace, &opt.card); !s.ok()) return ReportError(io, "bench", s);
  if (trace.given()) {
    // A trace replays its own window: without --requests/--duration, all of it.
    Result<workload::ReplayInfo> info =
        SetUpTraceRun(trace, load.requests.has_value() || !load.duration.empty(), !load.warmup.empty(), &opt.card);
    if (!info.ok()) return ReportError(io, "bench", info.status());
  }
  if (Status s = ApplyFlags(load, client, &opt); !s.ok()) return ReportError(io, "bench", s);
  if (!shard.empty()) {
    Result<bench::Shard> sh = bench::ParseShard(shard);
    if (!sh.ok()) return ReportError(io, "bench", sh.status());
    opt.shard = *sh;
  }
  if (!start_at.empty()) {
    Result<int64_t> at = bench::ParseStartAt(start_at, bench::WallNowUnixNs());
    if (!at.ok()) return ReportError(io, "bench", at.status());
    opt.start_at_unix_ns = *at;
  }
  opt.clock_uncertainty_ms = clock_uncertainty;
  opt.clock_ref = clock_ref;
  return ExecuteBench(opt, out, "bench", io);
}

}  // namespace infereng::cli
