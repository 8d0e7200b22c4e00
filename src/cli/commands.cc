// The command table and the top-level dispatcher.
#include <algorithm>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "core/strings.h"
#include "infereng/version_info.h"

namespace infereng::cli {

// Handlers, one per file cli/cmd_<name>.cc.
int RunVersion(int argc, const char* const* argv, CommandIo& io);
int RunReport(int argc, const char* const* argv, CommandIo& io);
int RunSweep(int argc, const char* const* argv, CommandIo& io);
int RunFit(int argc, const char* const* argv, CommandIo& io);
int RunModels(int argc, const char* const* argv, CommandIo& io);
int RunAccelerators(int argc, const char* const* argv, CommandIo& io);
int RunServe(int argc, const char* const* argv, CommandIo& io);
int RunSimulate(int argc, const char* const* argv, CommandIo& io);
int RunCapacity(int argc, const char* const* argv, CommandIo& io);
int RunBudget(int argc, const char* const* argv, CommandIo& io);
int RunBenchCommand(int argc, const char* const* argv, CommandIo& io);  // the `bench` command (job::RunBench runs the load)
int RunRun(int argc, const char* const* argv, CommandIo& io);
int RunCard(int argc, const char* const* argv, CommandIo& io);
int RunHistory(int argc, const char* const* argv, CommandIo& io);
int RunMerge(int argc, const char* const* argv, CommandIo& io);
int RunK8s(int argc, const char* const* argv, CommandIo& io);
int RunProbe(int argc, const char* const* argv, CommandIo& io);
int RunCanary(int argc, const char* const* argv, CommandIo& io);
int RunProfile(int argc, const char* const* argv, CommandIo& io);
int RunCalibrate(int argc, const char* const* argv, CommandIo& io);
int RunCompare(int argc, const char* const* argv, CommandIo& io);
int RunCharacterize(int argc, const char* const* argv, CommandIo& io);
int RunDiagnose(int argc, const char* const* argv, CommandIo& io);
int RunPlan(int argc, const char* const* argv, CommandIo& io);

namespace {

constexpr Command kCommands[] = {
    {"card", "Write a workload-card template; check a card and list its assumptions", RunCard},
    {"characterize", "Characterise request traces: rate, burstiness, lengths, prefix reuse; fit a card's traffic", RunCharacterize},
    {"run", "Run a card's baseline benchmark (embedded engine unless --target)", RunRun},
    {"bench", "Benchmark an OpenAI-compatible endpoint with a card's load", RunBenchCommand},
    {"merge", "Merge the shards of a sharded bench (bench --shard K/N) into one run directory, exactly", RunMerge},
    {"k8s", "Render Kubernetes manifests that run a card's bench as N shards (Indexed Job)", RunK8s},
    {"sweep", "Sweep the load: saturation point and max goodput under the SLOs (curves + report)", RunSweep},
    {"history", "The run history (SQLite): list, show, trend of a metric, import run dirs, export CSV", RunHistory},
    {"compare", "Compare two runs or sweeps: what changed, deltas with 95% intervals, acceptance (exit 1)", RunCompare},
    {"report", "Write a self-contained HTML report (+ Markdown, CSV) for a run or sweep directory", RunReport},
    {"diagnose", "Why a run is slow: measurement validity, then ranked bottleneck hypotheses with evidence", RunDiagnose},
    {"plan", "Ranked one-variable experiments for a card, evaluated on the twin, with acceptance criteria", RunPlan},
    {"simulate", "Simulate a card on the digital twin (virtual time): latency, KV, cost", RunSimulate},
    {"capacity", "Cheapest accelerator x count x replicas meeting a card's SLOs at peak (fit + twin)", RunCapacity},
    {"budget", "Split each latency SLO into network, queue, prefill, decode; limits that follow", RunBudget},
    {"probe", "Probe a live endpoint for production readiness (overload, cancel, cold start, cache isolation)", RunProbe},
    {"canary", "Canary a candidate URL against the baseline: paired load, compare's statistics, go / no-go (exit 1)", RunCanary},
    {"profile", "Measure a live endpoint's step times into a profile the twin runs (--profile FILE)", RunProfile},
    {"calibrate", "Fit the twin's cost parameters to profiles or runs, with uncertainty and --set lines", RunCalibrate},
    {"serve", "Serve an OpenAI-compatible API driven by the twin (wall clock, /metrics, faults)", RunServe},
    {"fit", "Does a model fit an accelerator setup: memory line items, KV capacity, roofline", RunFit},
    {"models", "List the model catalog (parameters, attention, KV bytes per token)", RunModels},
    {"accelerators", "List the accelerator catalog (memory, bandwidth, FLOPS, link, price)", RunAccelerators},
    {"version", "Print the version and git commit", RunVersion},
};

void PrintUsage(std::ostream& os) {
  os << "infereng " << build::kVersion << " — a workbench for inference engineering\n\n"
     << "Usage: infereng <command> [options]     (infereng <command> --help for details)\n\n"
     << "Commands:\n";
  for (const Command& c : kCommands) {
    os << "  " << c.name << std::string(c.name.size() < 14 ? 14 - c.name.size() : 1, ' ') << c.help << "\n";
  }
  os << "\nExit codes: 0 success, 1 the run worked but a check/SLO failed, 2 bad usage or bad input,\n"
     << "            3 runtime failure (target unreachable, I/O error, ...),\n"
     << "            130 (143) run/bench/sweep interrupted by Ctrl-C (SIGTERM): partial results written.\n";
}

}  // namespace

std::span<const Command> Commands() { return kCommands; }

int RunMain(int argc, const char* const* argv, CommandIo& io) {
  if (argc < 2) {
    PrintUsage(io.err);
    return kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(io.out);
    return kExitOk;
  }
  if (name == "--version" || name == "-V") name = "version";
  for (const Command& c : kCommands) {
    if (c.name == name) {
      std::string prog = "infereng " + std::string(c.name);
      std::vector<const char*> args;
      args.push_back(prog.c_str());
      for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
      return c.run(static_cast<int>(args.size()), args.data(), io);
    }
  }
  io.err << "infereng: unknown command '" << name << "'\n";
  std::string_view best;
  std::size_t best_d = 99;
  for (const Command& c : kCommands) {
    std::size_t d = EditDistance(name, c.name);
    if (d < best_d) { best_d = d; best = c.name; }
  }
  if (best_d <= 2 || (!best.empty() && best.starts_with(name))) {
    io.err << "Did you mean '" << best << "'?\n";
  }
  io.err << "\n";
  PrintUsage(io.err);
  return kExitUsage;
}

}  // namespace infereng::cli
