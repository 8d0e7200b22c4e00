// `infereng serve`: the OpenAI-compatible server driven by the digital twin against the
// wall clock (serve/server.h). Configured like `simulate`: --card FILE, or --model /
// --accelerator / --precision / --tp, plus --set engine.KEY=VALUE knobs. Runs until
// SIGINT/SIGTERM, then shuts down cleanly and prints a one-line summary.
#include <fmt/format.h>

#include <csignal>
#include <filesystem>
#include <pthread.h>

#include <tuple>

#include "bench/quality.h"
#include "card/card_parser.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "job/embedded_engine.h"
#include "serve/faults.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "serve/twin_engine.h"

namespace infereng::cli {

namespace {

const char* kFaultHelp =
    "Fault injection, comma-separated (seeded by --seed):\n"
    "  error5xx=P  stream_error=P  stall=P:DUR  drop=P  interval=K  cold_start=DUR\n"
    "  e.g. error5xx=0.05,stream_error=0.02,stall=0.01:500ms,drop=0.01,interval=4,cold_start=10s";

}  // namespace

int RunServe(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app(
      "Serve an OpenAI-compatible API (vLLM-style) whose tokens stream exactly when the digital\n"
      "twin says the engine would emit them. Endpoints: POST /v1/chat/completions, /v1/completions,\n"
      "/tokenize; GET /v1/models, /health, /version, /metrics. Prompt tokens = whitespace-separated\n"
      "words; output is deterministic pseudo-words.",
      argv[0]);
  std::string card_path, model, accelerator, precision = "bf16", host = "127.0.0.1", model_name, faults, trace;
  std::string engine_kind = "twin", timeout = "0", request_timeout = "0";
  int tp = 1, port = 8000, overload_status = 429;
  int64_t max_waiting = 1024, max_model_len = 0;
  double speedup = 1;
  uint64_t seed = 42;
  bool one_chunk_per_token = false, keep_generating = false, ready_lies = false;
  std::string retry_after = "0", cold_start, stream_buffer = "0", sse_heartbeat = "0", prefix_cache = "shared";
  std::string uds;
  int32_t eos_mean = 0;
  std::size_t max_body = serve::kDefaultMaxBodyBytes;
  std::vector<std::string> sets;
  app.add_option("--card", card_path, "Workload card (YAML): model, deployment and engine knobs");
  app.add_option("--model", model, "Model (catalog name or HF config.json path) when no --card");
  app.add_option("--accelerator", accelerator, "Accelerator catalog name when no --card");
  app.add_option("--precision", precision, "Weight precision when no --card (bf16|fp8|int8|int4)");
  app.add_option("--tp", tp, "Tensor-parallel degree when no --card")->check(InRange(1, 64));
  app.add_option("--set", sets, "Twin knob KEY=VALUE (engine.max_num_seqs=128, ...); repeatable");
  app.add_option("--engine", engine_kind, "twin (default) or paced (fixed 20 ms TTFT + 20 ms/token, for tests)")
      ->check(CLI::IsMember({"twin", "paced"}));
  app.add_option("--host", host, "Address or host name to listen on (localhost resolves to 127.0.0.1)");
  app.add_option("--port", port, "Port (0: pick a free one and print it)")->check(InRange(0, 65535));
  app.add_option("--uds", uds, "Listen on this Unix-domain socket path instead of --host/--port (same-host clients, "
                               "e.g. `bench --unix-socket PATH`; ~4x less kernel time per chunk than loopback TCP)");
  app.add_option("--served-model-name", model_name, "Model id the API reports (default: the card's model.id)");
  app.add_option("--speedup", speedup, "Engine time runs K times faster than wall time")->check(Positive());
  app.add_option("--max-waiting", max_waiting, "Waiting requests above which new ones are refused (0: unbounded)");
  app.add_option("--overload-status", overload_status, "HTTP status for refused requests (429 or 503)")
      ->check(CLI::IsMember({429, 503}));
  app.add_option("--request-timeout", request_timeout, "Abort requests older than this (e.g. 30s; 0: none)");
  app.add_option("--max-body", max_body, "Largest request body in bytes (larger: 413; 64 MiB by default when the card has model.vision or model.audio)");
  app.add_option("--max-model-len", max_model_len, "Context length (default: the twin's)");
  app.add_option("--eos-mean", eos_mean, "Without ignore_eos, stop after ~this many tokens on average (0: never)");
  app.add_option("--faults", faults, kFaultHelp);
  app.add_option("--trace-emissions", trace, "Write every emitted chunk (steady ns, request id, x-request-id) as CSV");
  app.add_option("--seed", seed, "Seed for faults and output text");
  app.add_flag("--one-chunk-per-token", one_chunk_per_token,
               "Never merge tokens that fell due together when the server is behind (default: merge, as vLLM)");
  std::string eval_set;
  double quality_accuracy = 1.0;
  app.add_option("--eval-set", eval_set, "Answer this eval set's prompts (quality JSONL; default: the card's "
                                         "quality.eval_set): right with probability --quality-accuracy, else wrongly");
  app.add_option("--quality-accuracy", quality_accuracy,
                 "Share of eval prompts answered right, in [0, 1] (x the twin's factor for the weight precision)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--retry-after", retry_after, "Refused requests carry Retry-After: this, in whole seconds (e.g. 2s; 0: no header)");
  app.add_flag("--no-abort-on-disconnect", keep_generating,
               "Keep generating a request whose client disconnected (still counted as running in /metrics)");
  app.add_option("--cold-start", cold_start, "Not ready for this long after start: /health and requests get 503 (e.g. 10s)");
  app.add_flag("--ready-lies", ready_lies, "During --cold-start, /health answers 200 though requests still get 503");
  app.add_option("--stream-buffer", stream_buffer,
                 "Hold stream bytes and flush them in bursts every this long, as a buffering proxy (e.g. 300ms; 0: off)");
  app.add_option("--sse-heartbeat", sse_heartbeat,
                 "Send an SSE comment (\": keep-alive\") every this long while a stream waits for its first token "
                 "(e.g. 10s; 0: off), as servers behind idle-timeout proxies do");
  app.add_option("--prefix-cache", prefix_cache,
                 "Prefix cache across tenants (API key or cache_salt): shared (default) or per-tenant (salted)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  serve::ServerOptions so;
  so.host = host;
  so.port = static_cast<uint16_t>(port);
  so.unix_socket = uds;
  so.speedup = speedup;
  so.seed = seed;
  so.max_waiting = max_waiting;
  so.overload_status = overload_status;
  so.max_body_bytes = max_body;
  so.max_model_len = max_model_len;
  so.eos_mean_tokens = eos_mean;
  so.trace_emissions_path = trace;
  so.merge_late_tokens = !one_chunk_per_token;
  if (auto t = serve::ParseDuration(request_timeout); t.ok()) {
    so.request_timeout = *t;
  } else {
    return ReportError(io, "serve", t.status().WithContext("--request-timeout"));
  }
  if (!faults.empty()) {
    auto f = serve::ParseFaultSpec(faults);
    if (!f.ok()) return ReportError(io, "serve", f.status());
    so.faults = *f;
  }
  so.abort_on_disconnect = !keep_generating;
  so.ready_lies = ready_lies;
  for (auto [flag, text, into] : {std::tuple{"--retry-after", &retry_after, &so.retry_after},
                                  std::tuple{"--stream-buffer", &stream_buffer, &so.stream_buffer},
                                  std::tuple{"--sse-heartbeat", &sse_heartbeat, &so.sse_heartbeat},
                                  std::tuple{"--cold-start", &cold_start, &so.faults.cold_start}}) {
    if (text->empty()) continue;
    auto d = serve::ParseDuration(*text);
    if (!d.ok()) return ReportError(io, "serve", d.status().WithContext(flag));
    *into = *d;
  }
  if (auto iso = serve::ParseCacheIsolation(prefix_cache); iso.ok()) {
    so.cache_isolation = *iso;
  } else {
    return ReportError(io, "serve", iso.status());
  }

  std::unique_ptr<serve::EnginePort> engine;
  std::string description;
  card::WorkloadCard card;
  if (engine_kind == "paced") {
    engine = std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{});
    description = "paced engine (20 ms TTFT, 20 ms/token)";
    if (!card_path.empty()) io.err << "infereng serve: note: --engine paced ignores --card\n";
  } else {
    if (!card_path.empty()) {
      auto c = LoadCard(card_path, io);
      if (!c.ok()) return ReportError(io, "serve", c.status());
      card = std::move(c).value();
    } else if (!model.empty() && !accelerator.empty()) {
      card.model.architecture = model;
      card.model.id = model;
      card.model.precision = precision;
      card.deployment.accelerator = accelerator;
      card.deployment.tp = tp;
      card.deployment.count = tp;
    } else {
      return ReportError(io, "serve", Status::InvalidArgument("give --card FILE, or --model and --accelerator "
                                                              "(or --engine paced)"));
    }
    twin::SetupOptions setup;
    setup.sets = sets;
    auto e = serve::MakeTwinEngineForCard(card, setup, &description);
    if (!e.ok()) return ReportError(io, "serve", e.status());
    engine = std::move(e).value();
  }
  so.model_name = !model_name.empty() ? model_name : !card.model.id.empty() ? card.model.id : so.model_name;
  if (eval_set.empty() && !card_path.empty() && engine_kind != "paced") {
    // The card's eval set, unless it is an assumed placeholder that does not exist yet.
    std::error_code ec;
    const std::string& e = card.quality.eval_set;
    if (!e.empty() && (std::filesystem::exists(e, ec) || !card.Assumed("quality.eval_set"))) eval_set = e;
  }
  if (!eval_set.empty()) {
    auto items = bench::LoadEvalSet(eval_set);
    if (!items.ok()) return ReportError(io, "serve", items.status());
    auto accuracy = job::EffectiveQualityAccuracy(quality_accuracy, card);
    if (!accuracy.ok()) return ReportError(io, "serve", accuracy.status());
    so.eval_answers = job::BuildEvalAnswers(*items);
    so.quality_accuracy = *accuracy;
    description += "; answers " + std::to_string(so.eval_answers->size()) + " eval prompts with accuracy " +
                   fmt::format("{:.3g}", so.quality_accuracy);
  }

  // Signals are taken synchronously by this thread; every thread started below inherits
  // the blocked mask, so SIGINT/SIGTERM cannot interrupt the server mid-write.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGTERM);
  // A shell starts background jobs with SIGINT ignored; `kill -INT` must still stop the
  // server, so take both signals back to their default (they stay blocked: sigwait gets them).
  struct sigaction dfl {}, old_int {}, old_term {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGINT, &dfl, &old_int);
  sigaction(SIGTERM, &dfl, &old_term);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &sigs, &old_mask);
  struct Restore {
    sigset_t mask;
    struct sigaction on_int, on_term;
    ~Restore() {
      pthread_sigmask(SIG_SETMASK, &mask, nullptr);
      sigaction(SIGINT, &on_int, nullptr);
      sigaction(SIGTERM, &on_term, nullptr);
    }
  } restore{old_mask, old_int, old_term};

  serve::Server server(so, std::move(engine));
  auto bound = server.Start();
  if (!bound.ok()) return ReportError(io, "serve", bound.status());
  const std::string where = uds.empty() ? "http://" + host + ":" + std::to_string(*bound) : "unix:" + uds;
  io.out << "infereng serve: listening on " << where << " (model " << so.model_name << "; "
         << description << "; speedup " << speedup << ")" << std::endl;
  int sig = 0;
  sigwait(&sigs, &sig);
  io.err << "infereng serve: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", shutting down" << std::endl;
  serve::ServerSnapshot s = server.Snapshot();
  server.Stop();
  io.out << "infereng serve: " << s.requests_total << " requests (" << s.requests_rejected << " refused, "
         << s.requests_aborted << " aborted), " << s.tokens_emitted << " tokens; emission lateness p50 "
         << NanosToMillis(s.lateness_p50) << " ms, p99 " << NanosToMillis(s.lateness_p99) << " ms, max "
         << NanosToMillis(s.lateness_max) << " ms" << std::endl;
  return kExitOk;
}

}  // namespace infereng::cli
