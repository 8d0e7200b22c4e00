// Flags and output shared by `infereng bench` and `infereng run` (cmd_bench.cc,
// cmd_run.cc): the load overrides, connection and prompt flags, and ExecuteBench, which
// runs a bench::BenchOptions with SIGINT/SIGTERM handling, a progress line on a TTY, and
// prints the summary table (or JSON) and where the files went. Exit codes: 0 ok, 1 the run
// worked but an SLO (or the quality threshold) failed, 2 bad input, 3 target unreachable /
// target died mid-run / every measured request failed (the first error is printed),
// 130 (143) interrupted by SIGINT (SIGTERM), partial results written.
#pragma once

#include <optional>
#include <string>

#include "bench/bench_options.h"
#include "cli/cli_util.h"
#include "job/history.h"
#include "job/run_report.h"

namespace infereng::cli {

struct LoadFlags {
  std::string rate, duration, warmup, cooldown, ramp;
  std::optional<int> concurrency;
  std::optional<int64_t> requests;
  std::optional<int> trials;
  std::optional<uint64_t> seed;
  std::optional<uint64_t> prompt_salt;
};

struct ClientFlags {
  std::string endpoint, timeout, api_key_env, api_key_file, ca_file, dataset;
  std::string dataset_format = "auto";
  bool insecure = false;
  bool no_preconnect = false;
  std::string unix_socket;
  std::string model;                     // --model (shared with `bench` without a card)
  std::string length_control = "auto";   // --length-control
  std::string response_format = "json";  // --response-format (transcriptions)
  int quality_every = 10;
  int cold_start = 0;
  std::string scrape_interval;  // --scrape-interval (default 1s)
  bool no_scrape = false;       // --no-scrape
  std::optional<int> io_threads;  // --io-threads (default: bench::DefaultIoThreads)
};

struct OutputFlags {
  std::string out;
  bool force = false;  // --force: replace an earlier run's files in --out (cli/output_dir.h)
  bool json = false;
  bool quiet = false;
  bool explain = false;  // print the metric boundaries and other tools' names under the table
  job::HistoryLocation history;  // --history PATH / --no-history (cli/history_flags.h)
};

void AddLoadFlags(CLI::App& app, LoadFlags* f);
void AddClientFlags(CLI::App& app, ClientFlags* f);
void AddOutputFlags(CLI::App& app, OutputFlags* f);

// Fills `opt` from the flags (durations and rates parsed with units). InvalidArgument
// naming the flag on bad values. `opt->card` must be set first: `--rate inf` (vLLM's
// default: every request sent at once) becomes a closed loop with one slot per request,
// so it needs a request count (--requests or the card's bench.requests).
Status ApplyFlags(const LoadFlags& load, const ClientFlags& client, bench::BenchOptions* opt);

// Runs the bench job (job::RunBench) and prints the result; returns the exit code (from
// job::JudgeRun). With an output directory it then writes the report there, and first the
// twin's prediction when `report.predict` (job::WriteRunReport; run asks for it).
int ExecuteBench(bench::BenchOptions& opt, const OutputFlags& out, std::string_view command, CommandIo& io,
                 const job::RunReportOptions& report = {});

}  // namespace infereng::cli
