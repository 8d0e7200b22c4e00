#include "cli/trace_flags.h"

#include <filesystem>

#include "core/units.h"
#include "trace/formats.h"

namespace infereng::cli {

void AddTraceFlags(CLI::App& app, TraceFlags* f) {
  app.add_option("--trace", f->file,
                 "Replay this production trace (Mooncake JSONL with hash_ids, Azure CSV, BurstGPT CSV, JSONL/CSV "
                 "with named columns): its arrival times, lengths and prefix structure replace the card's");
  app.add_option("--trace-format", f->format, "auto | mooncake | azure | burstgpt | csv | jsonl (default auto)");
  app.add_option("--trace-speedup", f->speedup, "Replay the trace this many times faster (arrival gaps / X)")
      ->check(CLI::PositiveNumber);
  app.add_option("--trace-start", f->start, "Skip the trace's first S (e.g. 60s, 5m) after its first arrival");
  app.add_option("--trace-duration", f->duration, "Replay D of the trace from --trace-start (default: to its end)");
  app.add_option("--trace-requests", f->requests, "Replay at most N requests from --trace-start")->check(CLI::PositiveNumber);
  app.add_option("--trace-block-tokens", f->block_tokens, "Tokens per hash_ids block (default 512, Mooncake's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  app.add_option("--trace-sessions", f->sessions,
                 "sessions | tasks: replay the trace's session ids (without any, the conversations its hash_ids imply) "
                 "as sessions (or agent tasks): a call goes at its trace time but never before its session's previous "
                 "step ended (docs/replay.md)");
  app.add_option("--trace-parallel-window", f->parallel_window,
                 "With --trace-sessions: a session's calls within D of their step's first call are parallel calls of "
                 "one step (default 0: equal times only)");
}

Status ApplyTraceFlags(const TraceFlags& f, card::WorkloadCard* card) {
  if (!f.given()) return Status::Ok();
  card::ArrivalSpec& a = card->traffic.arrival;
  if (f.file.empty() && a.kind != card::ArrivalSpec::Kind::kTrace) {
    return Status::InvalidArgument("--trace-format, --trace-speedup, --trace-start, --trace-duration, --trace-requests, "
                                   "--trace-block-tokens, --trace-sessions and --trace-parallel-window need --trace FILE "
                                   "(or a card whose arrival is a trace)");
  }
  if (!f.file.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f.file, ec)) {
      return Status::InvalidArgument("--trace: cannot read trace file " + f.file);
    }
    a = card::ArrivalSpec{};
    a.kind = card::ArrivalSpec::Kind::kTrace;
    a.trace_file = f.file;
  }
  if (!f.format.empty()) {
    if (Result<trace::Format> fmt = trace::ParseFormat(f.format); !fmt.ok()) {
      return Status::InvalidArgument("--trace-format: unknown format \"" + f.format +
                                     "\"; expected auto, azure, mooncake, burstgpt, csv or jsonl");
    }
    a.trace_format = f.format;
  }
  if (f.speedup) a.trace_speed = *f.speedup;
  if (!f.start.empty()) {
    Result<double> s = units::ParseDurationSeconds(f.start, "s");
    if (!s.ok() || !(*s >= 0)) return Status::InvalidArgument("--trace-start: expected a duration like 60s, got \"" + f.start + "\"");
    a.trace_start_s = *s;
  }
  if (!f.duration.empty()) {
    Result<double> d = units::ParsePositiveDurationSeconds(f.duration, "s");
    if (!d.ok()) return Status::InvalidArgument("--trace-duration: expected a duration like 5m, got \"" + f.duration + "\"");
    a.trace_duration_s = *d;
  }
  if (f.requests) a.trace_requests = *f.requests;
  if (f.block_tokens) a.trace_block_tokens = *f.block_tokens;
  if (!f.sessions.empty()) {
    if (f.sessions != "sessions" && f.sessions != "tasks") {
      return Status::InvalidArgument("--trace-sessions: expected sessions or tasks, got \"" + f.sessions + "\"");
    }
    a.trace_sessions = f.sessions;
  }
  if (!f.parallel_window.empty()) {
    if (a.trace_sessions.empty()) {
      return Status::InvalidArgument("--trace-parallel-window needs --trace-sessions (or a card whose trace has sessions:)");
    }
    Result<double> w = units::ParseDurationSeconds(f.parallel_window, "s");
    if (!w.ok() || !(*w >= 0 && *w <= 3600)) {
      return Status::InvalidArgument("--trace-parallel-window: expected a duration from 0 to 1h like 100ms, got \"" +
                                     f.parallel_window + "\"");
    }
    a.trace_parallel_window_s = *w;
  }
  return Status::Ok();
}

Result<workload::ReplayInfo> SetUpTraceRun(const TraceFlags& f, bool count_given, bool warmup_given,
                                           card::WorkloadCard* card) {
  INFERENG_ASSIGN_OR_RETURN(workload::ReplayInfo info, workload::ScanTraceReplay(card->traffic.arrival));
  if (!f.file.empty()) {
    if (!count_given) card->bench.requests = info.requests;
    if (!warmup_given) card->bench.warmup_s = 0;
  }
  return info;
}

}  // namespace infereng::cli
