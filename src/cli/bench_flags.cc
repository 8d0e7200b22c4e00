#include "cli/bench_flags.h"

#include <cctype>
#include <csignal>
#include <cstdio>

#include "job/bench_job.h"
#include "bench/request_body.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/interrupt.h"
#include "cli/output_dir.h"
#include "core/units.h"
#include "metrics/quality.h"
#include "metrics/summary_table.h"
#include "metrics/trials_table.h"

namespace infereng::cli {
namespace {

Status ParseDurationFlag(const std::string& flag, const std::string& text, std::optional<Nanos>* out) {
  if (text.empty()) return Status::Ok();
  Result<Nanos> d = units::ParseDuration(text, "s");
  if (!d.ok()) return Status::InvalidArgument(flag + ": " + d.status().message());
  *out = *d;
  return Status::Ok();
}

// --endpoint chat | completions | embeddings | rerank | transcriptions; vLLM's route form (/v1/chat/completions, ...)
// is taken too. Anything else is passed on for ResolveLoadPlan to reject by name.
std::string EndpointName(const std::string& text) {
  if (text.ends_with("/chat/completions")) return "chat";
  if (text.ends_with("/completions")) return "completions";
  if (text.ends_with("/embeddings")) return "embeddings";
  if (text.ends_with("/rerank")) return "rerank";
  if (text.ends_with("/audio/transcriptions")) return "transcriptions";
  return text;
}

// vLLM's --request-rate default, "inf": no arrival process, every request at t0.
bool IsInfiniteRate(const std::string& text) {
  std::string t;
  for (char c : text) {
    if (c != ' ') t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return t == "inf" || t == "infinity";
}

// --rate inf: all N requests at once is a closed loop with N slots (each slot sends once;
// with --concurrency C, C at a time, as vLLM's --max-concurrency).
Status ApplyInfiniteRate(const LoadFlags& load, bench::BenchOptions* opt) {
  if (!load.duration.empty()) {
    return Status::InvalidArgument("--rate inf: sends every request at once, so it takes --requests N, not --duration");
  }
  const std::optional<int64_t> n = load.requests ? load.requests : opt->card.bench.requests;
  if (!n) return Status::InvalidArgument("--rate inf: sends every request at once: give their number with --requests N");
  if (*n < 1 || *n > 100000) return Status::InvalidArgument("--rate inf: --requests must be 1..100000");
  opt->concurrency = load.concurrency.value_or(static_cast<int>(*n));
  return Status::Ok();
}

}  // namespace

void AddLoadFlags(CLI::App& app, LoadFlags* f) {
  // The second names are vLLM's `bench serve` flags, so its command lines carry over.
  app.add_option("--rate,--request-rate", f->rate,
                 "Open loop at this mean rate (20, 20rps, 1200/min), the card's arrival shape; "
                 "inf: every request at once (needs --requests)");
  app.add_option("--concurrency,--max-concurrency", f->concurrency,
                 "Closed loop with exactly C in flight (with --rate: a cap)");
  app.add_option("--duration", f->duration, "Measurement window (60s, 5m); default: the card's bench.duration");
  app.add_option("--requests,--num-requests,--num-prompts", f->requests, "Measure N requests instead of a duration");
  app.add_option("--warmup", f->warmup, "Warm-up before the window (excluded); default: the card's");
  app.add_option("--cooldown", f->cooldown, "Load kept on after the window (excluded)");
  app.add_option("--ramp", f->ramp, "Ramp the rate (or concurrency) up linearly over this long");
  app.add_option("--trials", f->trials, "Repeat the run N times; report a 95% CI across trials");
  app.add_option("--seed", f->seed, "Workload seed (default: the card's bench.seed)");
  app.add_option("--prompt-salt", f->prompt_salt,
                 "Salt of each request's own prompt text (default: fresh per run, so a server's prompt cache warmed by "
                 "an earlier run cannot serve this one; a manifest's prompts.salt resends that run's prompts)");
}

void AddClientFlags(CLI::App& app, ClientFlags* f) {
  app.add_option("--endpoint", f->endpoint,
                 "chat | completions | embeddings | rerank | transcriptions (or vLLM's /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/rerank, /v1/audio/transcriptions; default: the card's bench.endpoint)");
  app.add_option("--timeout", f->timeout, "Per-request timeout, also the stall timeout (default: card product.timeout)");
  app.add_flag("--insecure", f->insecure, "TLS: do not verify the certificate");
  app.add_flag("--no-preconnect", f->no_preconnect,
               "Open connections inside the measured phase (to measure connection setup on purpose); "
               "by default the closed loop's C (or the open loop's cap) are opened before it");
  app.add_option("--io-threads", f->io_threads,
                 "Client io threads the connections are sharded across (default: 1 on up to 4 cores, else "
                 "cores/4 up to 8); summary.json client.io_threads says what ran")
      ->check(CLI::Range(1, 64));
  app.add_option("--ca-file", f->ca_file, "TLS: PEM bundle of CAs to trust");
  app.add_option("--unix-socket", f->unix_socket,
                 "Connect to this Unix-domain socket instead of the URL's host:port (as curl; e.g. serve --uds)");
  auto* env = app.add_option("--api-key-env", f->api_key_env, "Read the API key from this variable (default OPENAI_API_KEY)");
  app.add_option("--api-key-file", f->api_key_file, "Read the API key from this file's first line")->excludes(env);
  app.add_option("--dataset,--dataset-path", f->dataset, "Prompts from a JSONL or ShareGPT file instead of synthetic text");
  app.add_option("--dataset-format", f->dataset_format, "jsonl | sharegpt | auto");
  app.add_option("--model", f->model,
                 "Model id to send in every request (default: the card's model.id, else the server's /v1/models)");
  app.add_option("--length-control", f->length_control,
                 "Output-length fields to send: auto (what the engine is known to accept) | ignore_eos | "
                 "min_tokens | both | none");
  app.add_option("--response-format", f->response_format,
                 "A transcription's answer: json (the default) | verbose_json (its segments count the decoder's "
                 "tokens where json has no usage, e.g. whisper.cpp; the engine may take longer to write it)")
      ->check(CLI::IsMember({"json", "verbose_json"}));
  app.add_option("--quality-every", f->quality_every, "One request in N carries a quality.eval_set item (1 = all)");
  app.add_option("--cold-start", f->cold_start, "Measure the first N requests after /health is 200, apart");
  auto* scrape = app.add_option("--scrape-interval", f->scrape_interval,
                                "Scrape the engine's /metrics this often during the run into engine_metrics.jsonl "
                                "(default 1s)");
  app.add_flag("--no-scrape", f->no_scrape, "Scrape /metrics only before and after the run")->excludes(scrape);
}

void AddOutputFlags(CLI::App& app, OutputFlags* f) {
  app.add_option("--out,--result-dir", f->out,
                 "Write requests.jsonl, summary.json, manifest.json and report.html here (a new or empty directory)");
  app.add_flag("--force", f->force, "--out holds an earlier run: remove that run's files first");
  app.add_flag("--json", f->json, "Print summary.json instead of the table");
  app.add_flag("--quiet,-q", f->quiet, "No progress line");
  app.add_flag("--explain", f->explain,
               "Under the table, say what each metric measures and its name in other tools (also in the report)");
  AddHistoryFlags(app, &f->history);
}

Status ApplyFlags(const LoadFlags& load, const ClientFlags& client, bench::BenchOptions* opt) {
  if (IsInfiniteRate(load.rate)) {
    INFERENG_RETURN_IF_ERROR(ApplyInfiniteRate(load, opt));
  } else if (!load.rate.empty()) {
    Result<double> r = units::ParseRate(load.rate, "rps");
    if (!r.ok()) return Status::InvalidArgument("--rate: " + r.status().message());
    opt->rate_rps = *r;
  }
  if (!IsInfiniteRate(load.rate)) opt->concurrency = load.concurrency;
  opt->requests = load.requests;
  opt->trials = load.trials;
  opt->seed = load.seed;
  opt->prompt_salt = load.prompt_salt;
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--duration", load.duration, &opt->duration));
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--warmup", load.warmup, &opt->warmup));
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--cooldown", load.cooldown, &opt->cooldown));
  std::optional<Nanos> ramp;
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--ramp", load.ramp, &ramp));
  opt->ramp = ramp.value_or(0);
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--timeout", client.timeout, &opt->timeout));
  if (!client.endpoint.empty()) opt->endpoint = EndpointName(client.endpoint);
  opt->insecure = client.insecure;
  opt->preconnect = !client.no_preconnect;
  opt->io_threads = client.io_threads;
  // Files the flags name are input: a missing one is exit 2 here, not an unreachable target.
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--ca-file", client.ca_file},
                                   {"--api-key-file", client.api_key_file},
                                   {"--dataset", client.dataset}}) {
    INFERENG_RETURN_IF_ERROR(CheckInputFile(flag, path));
  }
  opt->ca_file = client.ca_file;
  opt->unix_socket = client.unix_socket;
  opt->api_key.env_name = client.api_key_env;
  opt->api_key.file = client.api_key_file;
  opt->dataset = client.dataset;
  opt->model = client.model;
  opt->length_control = client.length_control;
  opt->response_format = client.response_format;
  bench::EngineCaps check;
  INFERENG_RETURN_IF_ERROR(bench::ApplyLengthControl(client.length_control, &check));  // a bad value: before any probe
  opt->dataset_format = client.dataset_format;
  if (client.quality_every < 1) return Status::InvalidArgument("--quality-every: must be >= 1");
  opt->quality_every = client.quality_every;
  if (client.cold_start < 0) return Status::InvalidArgument("--cold-start: must be >= 0");
  opt->cold_start_requests = client.cold_start;
  std::optional<Nanos> scrape;
  INFERENG_RETURN_IF_ERROR(ParseDurationFlag("--scrape-interval", client.scrape_interval, &scrape));
  if (scrape && *scrape < 10 * kNanosPerMilli) {
    return Status::InvalidArgument("--scrape-interval: must be at least 10ms (got " + client.scrape_interval + ")");
  }
  opt->scrape_interval = client.no_scrape ? 0 : scrape.value_or(kNanosPerSecond);
  return Status::Ok();
}

// Failing quality cases printed under the quality line (the report and summary.json keep more).
constexpr size_t kQualityCasesShown = 3;

int ExecuteBench(bench::BenchOptions& opt, const OutputFlags& out, std::string_view command, CommandIo& io,
                 const job::RunReportOptions& report) {
  // Before any load: a run never lands on an earlier run's files (stale trial-K/ ...).
  if (!out.out.empty()) {
    if (Status s = PrepareOutputDir(out.out, out.force); !s.ok()) return ReportError(io, command, s);
  }
  InterruptScope signals;
  opt.interrupt = &InterruptFlag();
  opt.out_dir = out.out;
  const bool live = io.out_is_tty && !out.json && !out.quiet;
  opt.on_notice = [&io, command](const std::string& msg) { io.err << "infereng " << command << ": warning: " << msg << "\n"; };
  if (live) {
    opt.on_progress = [&io](const bench::Progress& p) {
      char line[256];
      const double eta = p.total_s > 0 ? std::max(0.0, p.total_s - p.elapsed_s) : -1;
      std::snprintf(line, sizeof line, "\r[%s%s] %5.1fs%s  %6.1f req/s  in flight %lld  done %lld  errors %lld\x1b[K",
                    p.phase.c_str(),
                    p.trials > 1 ? (" " + std::to_string(p.trial) + "/" + std::to_string(p.trials)).c_str() : "",
                    p.elapsed_s, eta >= 0 ? (" ETA " + std::to_string(static_cast<int>(eta + 0.5)) + "s").c_str() : "",
                    p.rate_rps, static_cast<long long>(p.in_flight), static_cast<long long>(p.finished),
                    static_cast<long long>(p.errors));
      io.out << line << std::flush;
    };
  }
  Result<bench::BenchResult> res = job::RunBench(opt);
  if (live) io.out << "\r\x1b[K" << std::flush;
  if (!res.ok()) {
    const int rc = ReportError(io, command, res.status());
    return InterruptSignal() != 0 ? ExitCodeForSignal(InterruptSignal()) : rc;
  }

  if (out.json) {
    io.out << res->summary_json.dump(2) << "\n";
  } else {
    metrics::TableOptions to;
    to.color = io.out_is_tty;
    to.show_boundaries = false;  // the glossary is behind --explain (and in the report)
    if (res->trials.size() > 1) io.out << "Trial 1 of " << res->trials.size() << " (every trial and the verdict below):\n";
    io.out << metrics::FormatSummaryTable(res->summary, to);
    // Quality beside latency: a faster configuration that fails the task is no win.
    if (res->quality) io.out << metrics::FormatQualityLines(*res->quality, kQualityCasesShown, io.out_is_tty);
    if (res->trials.size() > 1) io.out << "\n" << metrics::FormatTrialsTable(res->trials, res->gate);
    if (res->cold) {
      io.out << "\nCold start (first " << res->cold->counts.records << " requests after /health = 200):\n"
             << metrics::FormatSummaryTable(*res->cold, metrics::TableOptions{.show_boundaries = false});
    }
    for (const std::string& n : res->notes) io.out << "note: " << n << "\n";
    if (out.explain) io.out << "\n" << metrics::MetricBoundariesText() << "\n" << metrics::ToolAliasesText();
    if (!opt.out_dir.empty()) io.out << "wrote " << opt.out_dir << "/{requests.jsonl,summary.json,manifest.json}\n";
  }
  if (!opt.out_dir.empty()) {
    const job::RunReport rep = job::WriteRunReport(opt, *res, report);
    // A report without a prediction must not puzzle: the reason is said.
    if (!rep.prediction.ok() && !out.json) io.err << "note: no twin prediction: " << rep.prediction.message() << "\n";
    if (rep.fidelity && !out.json) io.out << job::FidelityLine(*rep.fidelity) << "\n";
    if (!rep.diagnosis.ok()) io.err << "note: no diagnosis: " << rep.diagnosis.message() << "\n";
    if (!rep.report.ok()) {
      io.err << "infereng " << command << ": report not written: " << rep.report.ToString() << "\n";
    } else {
      if (!out.json) io.out << "report: " << rep.files.html << "\n";
      for (const std::string& w : rep.files.warnings) io.err << "infereng " << command << ": warning: " << w << "\n";
    }
  }
  // Every finished run (a partial one too) goes into the history, whatever its verdict.
  RegisterInHistory(out.history, job::EntryFromRun(command, res->manifest, res->summary_json, opt.out_dir), command, io,
                    !out.json);
  switch (job::JudgeRun(*res)) {
    case job::RunOutcome::kInterrupted:
      io.err << "infereng " << command << ": interrupted: the summary covers the requests that finished (partial)\n";
      return ExitCodeForSignal(InterruptSignal() != 0 ? InterruptSignal() : SIGINT);
    case job::RunOutcome::kTargetDown:
      io.err << "infereng " << command << ": the target stopped accepting connections: partial results kept\n";
      return kExitRuntime;
    case job::RunOutcome::kAllFailed: {
      const auto& c = res->summary.counts;
      io.err << "infereng " << command << ": every measured request failed (" << c.failed << " of " << c.in_window
             << "); first error: " << (res->first_error.empty() ? "unknown" : res->first_error) << "\n";
      return kExitRuntime;
    }
    case job::RunOutcome::kCheckFailed: {
      // The verdict names what failed (a quality miss with no latency SLOs would otherwise
      // exit 1 under a "success rate 100%" line).
      std::string why;
      for (const std::string& r : job::CheckFailureReasons(*res)) why += (why.empty() ? "" : "; ") + r;
      io.err << "infereng " << command << ": FAIL: " << (why.empty() ? "a check failed" : why) << "\n";
      return kExitCheckFailed;
    }
    case job::RunOutcome::kPass:
      break;
  }
  return kExitOk;
}

}  // namespace infereng::cli
