#include "job/bench_job.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "bench/prompt_setup.h"
#include "client/engine_metrics.h"
#include "client/prometheus.h"
#include "job/manifest.h"
#include "job/phase.h"
#include "job/session.h"
#include "job/summary_extras.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "metrics/trials.h"
#include "workload/generator.h"

namespace infereng::job {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The model id every request names: --model, else the card's model.id, else the first model
// the server lists. None at all: refuse before sending load (every request would be a 400
// "you must provide a model parameter"). A card model the server does not list: say so now.
Status ResolveModel(Session& s) {
  const bench::BenchOptions& o = s.opt;
  const std::string& served = s.server.model_id;
  s.model_id = !o.model.empty() ? o.model : !o.card.model.id.empty() ? o.card.model.id : served;
  if (s.model_id.empty()) {
    const json& st = s.server.probes.contains("/v1/models") ? s.server.probes["/v1/models"] : json(0);
    return Status::InvalidArgument("no model id to send: the card has no model.id and the server's GET /v1/models " +
                                   (st == 200 ? std::string("lists no model") : "answered HTTP " + st.dump()) +
                                   "; pass --model NAME (the model the server serves)");
  }
  if (o.model.empty() && !served.empty() && served != s.model_id) {
    const std::string msg = "the card's model \"" + s.model_id + "\" is not the model the server lists (\"" + served +
                            "\"): requests will ask for \"" + s.model_id + "\" (pass --model " + served +
                            " to use the served one)";
    s.notes.push_back(msg);
    if (o.on_notice) o.on_notice(msg);
  }
  return Status::Ok();
}

Status Setup(Session& s) {
  const bench::BenchOptions& o = s.opt;
  INFERENG_ASSIGN_OR_RETURN(s.plan, bench::ResolveLoadPlan(o));
  INFERENG_ASSIGN_OR_RETURN(s.shard, PlanShard(o, &s.plan));  // usage errors before any connection
  INFERENG_ASSIGN_OR_RETURN(s.shard_clock, MeasureShardClock(o));  // before any load, as the shards start
  INFERENG_ASSIGN_OR_RETURN(bench::Target target, bench::ParseTarget(o.target));
  if (!target.endpoint.empty()) {
    // A full endpoint URL names the API: it wins over the card, but must agree with --endpoint.
    if (o.endpoint && *o.endpoint != target.endpoint) {
      return Status::InvalidArgument("--target names the " + target.endpoint + " endpoint but --endpoint is " +
                                     *o.endpoint + " (pass the base URL, e.g. " + target.root + "/v1)");
    }
    INFERENG_ASSIGN_OR_RETURN(s.plan.endpoint, bench::ParseApiEndpoint(target.endpoint, "--target"));
    if (!bench::EndpointFitsCard(s.plan.endpoint, o.card.product)) {
      return Status::InvalidArgument("--target names the " + target.endpoint + " endpoint but the card's product.modality is " +
                                     o.card.product.modality);
    }
  }
  INFERENG_ASSIGN_OR_RETURN(s.api_key, bench::LoadApiKey(o.api_key));
  s.client.base_url = target.root;
  if (!s.api_key.empty()) s.client.headers.push_back({"Authorization", "Bearer " + s.api_key});
  s.client.insecure = o.insecure;
  s.client.ca_file = o.ca_file;
  s.client.unix_socket = o.unix_socket;
  s.client.request_timeout = s.plan.timeout;
  s.client.stall_timeout = std::min<Nanos>(s.plan.timeout, 120 * kNanosPerSecond);
  s.client.expected_concurrency = static_cast<size_t>(std::max(s.plan.concurrency, 64));

  if (s.plan.endpoint == bench::ApiEndpoint::kEmbeddings && !o.dataset.empty()) {
    return Status::InvalidArgument("--dataset: not supported with an embeddings card yet (inputs are synthetic texts "
                                   "of traffic.input_tokens each)");
  }
  if (s.plan.endpoint == bench::ApiEndpoint::kTranscriptions && !o.dataset.empty()) {
    return Status::InvalidArgument("--dataset: not supported with a transcription card (each request is a synthetic "
                                   "clip of traffic.audio.seconds)");
  }
  if (s.plan.endpoint == bench::ApiEndpoint::kRerank && !o.dataset.empty()) {
    return Status::InvalidArgument("--dataset: not supported with a rerank card yet (the query and documents are "
                                   "synthetic texts of traffic.input_tokens and traffic.document_tokens)");
  }
  if (const std::optional<card::ImagesSpec>& images = o.card.traffic.images) {
    // Image parts exist only in chat messages; the synthetic prompt carries them.
    if (s.plan.endpoint != bench::ApiEndpoint::kChat) {
      return Status::InvalidArgument(std::string("traffic.images: images go only on the chat endpoint, not ") +
                                     bench::EndpointPath(s.plan.endpoint) + " (drop --endpoint or the images)");
    }
    if (!o.dataset.empty()) {
      return Status::InvalidArgument("--dataset: not supported with traffic.images yet (images go with synthetic prompts)");
    }
    INFERENG_ASSIGN_OR_RETURN(bench::SyntheticPng png, bench::SyntheticPng::Make(images->width, images->height));
    s.image = std::move(png);
  }
  // Inputs first: a bad file is a usage error whatever the target does.
  if (!o.dataset.empty()) {
    INFERENG_ASSIGN_OR_RETURN(s.dataset, bench::LoadDataset(o.dataset, o.dataset_format));
  }
  if (o.card.traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace) {
    // The whole trace is read once here: a bad line is a usage error before any connection.
    INFERENG_ASSIGN_OR_RETURN(workload::ReplayInfo replay, workload::ScanTraceReplay(o.card.traffic.arrival));
    s.trace = trace::ReplayInfoToJson(replay, o.card.traffic.arrival.trace_speed * s.plan.rate_scale);
    s.notes.push_back(trace::ReplayPrefixNote(replay));
    if (const std::string note = trace::ReplaySessionNote(replay);
        !note.empty() && !o.card.traffic.arrival.trace_sessions.empty()) {
      s.notes.push_back(note);
    }
  }
  if (!o.card.quality.eval_set.empty()) {
    std::error_code ec;
    if (!fs::exists(o.card.quality.eval_set, ec) && o.card.Assumed("quality.eval_set")) {
      // An assumed (placeholder) eval set that does not exist yet: say so, run without it.
      s.notes.push_back("quality not checked: the card's quality.eval_set " + o.card.quality.eval_set +
                        " is marked assumed and does not exist");
    } else {
      INFERENG_ASSIGN_OR_RETURN(s.evals, bench::LoadEvalSet(o.card.quality.eval_set));
    }
  }

  {
    Result<bench::ServerInfo> info = bench::ProbeServer(s.client, 5 * kNanosPerSecond);
    if (!info.ok()) return Status::Unavailable(Scrub(s, info.status().message()));
    s.server = std::move(info).value();
  }
  if (o.cold_start_requests > 0) {
    // Cold start: wait for /health, then look again (a loading server answers 503 to
    // /tokenize and friends); the first generation requests are the cold ones.
    INFERENG_RETURN_IF_ERROR(bench::WaitHealthy(s.client, 600 * kNanosPerSecond));
    Result<bench::ServerInfo> info = bench::ProbeServer(s.client, 5 * kNanosPerSecond);
    if (!info.ok()) return Status::Unavailable(Scrub(s, info.status().message()));
    s.server = std::move(info).value();
  }
  INFERENG_RETURN_IF_ERROR(ResolveModel(s));
  s.body.model = s.model_id;
  s.body.endpoint = s.plan.endpoint;
  s.body.stream = s.plan.stream;
  s.body.response_format = o.response_format;
  s.body.caps = bench::CapsForEngine(s.server.engine);
  INFERENG_RETURN_IF_ERROR(bench::ApplyLengthControl(o.length_control, &s.body.caps));
  const bool transcription = s.plan.endpoint == bench::ApiEndpoint::kTranscriptions;
  if (transcription) {
    s.notes.push_back("transcription: each request is a synthetic clip (quiet noise, 16 kHz WAV) of the card's "
                      "traffic.audio.seconds; the transcript's length is the engine's (the embedded engine's follows "
                      "traffic.audio.transcript_tokens_per_s; a real model transcribes noise as it will)");
    if (o.response_format == "verbose_json") {
      s.notes.push_back("transcription: response_format verbose_json (its segments count the decoder's tokens); an "
                        "engine may take longer to write it than json (whisper.cpp's server ~2x, docs/engines.md)");
    }
  } else if (!s.body.caps.length_controlled() && !bench::PrefillOnly(s.plan.endpoint)) {
    s.notes.push_back(o.length_control == "none"
                          ? std::string("output length not controlled (--length-control none): max_tokens only")
                          : "output length not controlled: engine \"" + s.server.engine +
                                "\" is not known to accept ignore_eos or min_tokens (max_tokens only; "
                                "--length-control ignore_eos|min_tokens|both sends them anyway)");
  }
  if (s.dataset.empty() && !transcription) {  // a transcription sends no prompt text
    bench::PromptSetupInputs pi;
    pi.client = &s.client;
    pi.server = &s.server;
    pi.endpoint = s.plan.endpoint;
    pi.model = s.model_id;
    pi.seed = s.plan.seed;
    pi.timeout = std::min<Nanos>(s.plan.timeout, 60 * kNanosPerSecond);
    s.prompt_setup = bench::SetUpPrompts(pi);
    for (const std::string& n : s.prompt_setup.notes) s.notes.push_back(Scrub(s, n));
    s.prompts = s.prompt_setup.builder.get();
  }
  bench::HttpTransportOptions to;
  to.client = s.client;
  to.endpoint = s.plan.endpoint;
  to.stream = s.plan.stream;
  to.io_threads = o.io_threads.value_or(bench::DefaultIoThreads(std::thread::hardware_concurrency()));
  INFERENG_ASSIGN_OR_RETURN(s.transport, bench::HttpTransport::Create(std::move(to)));
  return Status::Ok();
}

Result<metrics::Summary> Summarize(const Session& s, const PhaseResult& ph, Nanos warmup, Nanos window_end,
                                   bool partial) {
  metrics::AccumulatorOptions ao;
  ao.open_loop = !s.plan.closed_loop;
  ao.slo = s.opt.card.slo;
  ao.session_tasks = s.opt.card.SessionsAreTasks();
  ao.warmup = warmup;
  const bool from_file = !ph.records_path.empty();
  ao.t0 = from_file ? 0 : ph.stats.t0;  // the file's times are relative to t0
  if (window_end >= 0) ao.window_end = from_file ? window_end - ph.stats.t0 : window_end;
  metrics::SummaryAccumulator acc(ao);
  if (from_file) {
    INFERENG_RETURN_IF_ERROR(metrics::ForEachRecordInFile(ph.records_path, [&](metrics::RequestRecord&& r) {
      acc.Add(r);
      return Status::Ok();
    }));
  } else {
    for (const metrics::RequestRecord& r : ph.records) acc.Add(r);
  }
  acc.SetPartial(partial);
  return acc.Finish();
}

std::string OutputLengthControl(const bench::EngineCaps& c) {
  if (c.ignore_eos && c.min_tokens) return "ignore_eos+min_tokens";
  if (c.ignore_eos) return "ignore_eos";
  if (c.min_tokens) return "min_tokens";
  return "not controlled";
}

// GET /metrics into `path` (named in `into`[key]); the parsed scrape, or nullopt with a note.
std::optional<client::Scrape> ScrapeTo(Session& s, const std::string& path, json* into, const char* key) {
  if (!s.server.has_metrics) return std::nullopt;
  Result<std::string> text = bench::ScrapeMetrics(s.client);
  if (!text.ok()) {
    s.notes.push_back(std::string("GET /metrics (") + key + ") failed: " + Scrub(s, text.status().message()));
    return std::nullopt;
  }
  if (!path.empty()) {
    if (Status w = WriteTextFile(path, *text); w.ok()) {
      (*into)[key] = fs::path(path).filename().string();
    } else {
      s.notes.push_back(std::string("GET /metrics (") + key + "): not saved: " + w.message());
    }
  }
  Result<client::Scrape> parsed = client::ParsePrometheusText(*text);
  if (!parsed.ok()) {
    s.notes.push_back(std::string("GET /metrics (") + key + "): " + parsed.status().message());
    return std::nullopt;
  }
  return std::move(parsed).value();
}

// DIR/name, or "" when the run keeps nothing on disk.
std::string PathIn(const std::string& out, const std::string& name) {
  return out.empty() ? std::string() : (fs::path(out) / name).string();
}

// What manifest.json says at the start (the prompt calibration is updated at the end).
ManifestInputs ManifestFor(const Session& s, const std::string& start_wall) {
  const bench::BenchOptions& options = s.opt;
  ManifestInputs mi;
  mi.options = &options;
  mi.plan = &s.plan;
  mi.server = &s.server;
  mi.target_display = bench::ParseTarget(options.target)->display;
  if (!options.unix_socket.empty()) mi.target_display += " via unix:" + options.unix_socket;
  mi.model_id = s.model_id;
  mi.model_revision = !options.card.model.revision.empty() ? options.card.model.revision : s.server.model_revision;
  mi.prompt_source = options.dataset.empty() ? "synthetic" : "dataset:" + options.dataset;
  mi.length_calibration = !options.dataset.empty() ? "none (dataset prompts)" : bench::CalibrationLabel(s.prompt_setup);
  mi.length_model = s.prompts ? s.prompts->model() : bench::LengthModel{};
  mi.output_length_control = OutputLengthControl(s.body.caps);
  mi.api_key_source = s.api_key.empty() ? "none"
                      : !options.api_key.file.empty() ? "file:" + options.api_key.file
                                                      : "env:" + (options.api_key.env_name.empty() ? std::string("OPENAI_API_KEY")
                                                                                                  : options.api_key.env_name);
  mi.start_wall = start_wall;
  mi.mean_rate_rps = s.plan.mean_rate_rps;
  mi.trace = s.trace;
  mi.shard_clock = s.shard_clock;
  return mi;
}

workload::GeneratorOptions GeneratorFor(const Session& s) {
  workload::GeneratorOptions go;
  go.seed = s.plan.seed;
  go.closed_loop = s.plan.closed_loop;
  if (!s.plan.closed_loop) go.rate_scale = s.plan.rate_scale;
  return go;
}

// Cold start: the first requests after /health turns 200, one at a time.
Result<metrics::Summary> RunColdStart(Session& s, const workload::GeneratorOptions& go, const std::string& records) {
  workload::GeneratorOptions cg = go;
  cg.closed_loop = true;
  card::WorkloadCard single = s.opt.card;
  single.traffic.sessions.reset();  // cold start measures first calls, one at a time
  INFERENG_ASSIGN_OR_RETURN(workload::SessionPlanner gen, workload::SessionPlanner::FromCard(single, cg));
  if (s.prompts) INFERENG_RETURN_IF_ERROR(bench::PreparePhasePrompts(*s.prompts, s.opt.card, cg).status());
  bench::RunnerOptions ro;
  ro.mode = bench::RunnerOptions::Mode::kClosedLoop;
  ro.concurrency = 1;
  ro.max_requests = s.opt.cold_start_requests;
  ro.drain_timeout = DrainTimeout(s.plan);
  INFERENG_ASSIGN_OR_RETURN(PhaseResult ph, RunPhase(s, ro, gen, {.records_path = records, .cold = true}));
  return Summarize(s, ph, 0, ph.stats.t_last_sched, ph.stats.interrupted);
}

// A trial's saturation signals into the run's: stamps merged, the busiest io thread, and the
// schedule lag of the steady phase (after the warm-up, the ramp and the first completion).
void AddSaturationSignals(Session& s, PhaseResult& ph, Nanos window_end) {
  s.rx_stamps.Merge(ph.stamps);
  if (ph.io_cpu_share && (!s.io_cpu_share || *ph.io_cpu_share > *s.io_cpu_share)) s.io_cpu_share = ph.io_cpu_share;
  const Nanos steady_from = ph.stats.t0 + std::max(s.plan.warmup, s.plan.ramp);
  std::vector<double> lag = ph.lag.SteadyLagMs(steady_from, window_end);
  s.steady_lag_ms.insert(s.steady_lag_ms.end(), lag.begin(), lag.end());
}

// A trial's runner options; `planned` is its planned length (0 in requests mode).
bench::RunnerOptions TrialRunnerOptions(const Session& s, Nanos* planned) {
  bench::RunnerOptions ro;
  ro.mode = s.plan.closed_loop ? bench::RunnerOptions::Mode::kClosedLoop : bench::RunnerOptions::Mode::kOpenLoop;
  ro.concurrency = s.plan.concurrency;
  ro.ramp = s.plan.ramp;
  ro.measure_from = s.plan.warmup;
  ro.drain_timeout = DrainTimeout(s.plan);
  *planned = 0;
  if (s.plan.requests >= 0) {
    ro.max_requests = s.plan.requests;
    ro.cooldown = s.plan.cooldown;
  } else {
    ro.measure_until = s.plan.warmup + s.plan.duration;
    ro.stop_after = ro.measure_until + s.plan.cooldown;
    *planned = ro.stop_after;
  }
  if (s.shard) ApplyShardPlan(*s.shard, s.plan, &ro, planned);
  return ro;
}

// Notes on what went wrong in the client during a trial.
void NoteTrialTrouble(Session& s, const PhaseResult& ph, const bench::RunnerOptions& ro) {
  if (ph.stats.lost > 0) {
    s.notes.push_back(std::to_string(ph.stats.lost) + " request(s) never reported back (client bug): run marked partial");
  }
  if (ph.stats.held_by_ceiling > 0) {
    s.notes.push_back(std::to_string(ph.stats.held_by_ceiling) + " request(s) waited in the client for its limit of " +
                      std::to_string(ro.max_in_flight) + " in flight (t_send - t_sched shows the wait)");
  }
  if (ph.stats.fell_behind) {
    s.notes.push_back("the client could not keep up with the offered rate: still behind schedule " +
                      std::to_string(static_cast<int64_t>(NanosToSeconds(ro.drain_timeout))) +
                      " s after the window, it stopped sending; the rest of the window was never sent (partial)");
  }
}

// The phase's t0 on the steady clock: --start-at's wall-clock instant (every shard the same),
// or -1 (now). A start already past is refused: the shards would not start together.
Result<Nanos> SharedStart(const Session& s) {
  if (!s.opt.start_at_unix_ns) return Nanos{-1};
  Clock& clock = SteadyClock::Instance();
  const Nanos t0 = bench::SteadyAtWall(*s.opt.start_at_unix_ns, clock);
  const Nanos late = clock.Now() - t0;
  if (late > kNanosPerSecond) {
    return Status::FailedPrecondition("--start-at " + bench::UnixNsIso8601(*s.opt.start_at_unix_ns) + " passed " +
                                      std::to_string(late / kNanosPerMilli) +
                                      " ms ago (after the engine probe and prompt setup): give a later start");
  }
  return t0;
}

// One trial into DIR (or DIR/trial-K with --trials > 1); its summary goes to res->trials.
// Returns whether the trial was partial (the trials stop there).
Result<bool> RunTrial(Session& s, const workload::GeneratorOptions& go, int trial, bench::BenchResult* res) {
  const std::string& out = s.opt.out_dir;
  INFERENG_ASSIGN_OR_RETURN(workload::SessionPlanner gen, workload::SessionPlanner::FromCard(s.opt.card, go));
  if (s.prompts) {
    // Prompts for this trial are built (and checked with /tokenize) now, not on the hot path.
    s.prompts->SetSalt(s.plan.prompt_salt + static_cast<uint64_t>(trial));
    INFERENG_RETURN_IF_ERROR(bench::PreparePhasePrompts(*s.prompts, s.opt.card, go).status());
  }
  Nanos planned = 0;
  const bench::RunnerOptions ro = TrialRunnerOptions(s, &planned);
  std::string dir = out;
  if (!out.empty() && s.plan.trials > 1) {
    dir = (fs::path(out) / ("trial-" + std::to_string(trial))).string();
    fs::create_directories(dir);
  }
  const std::string records = dir.empty() ? std::string() : (fs::path(dir) / "requests.jsonl").string();
  INFERENG_ASSIGN_OR_RETURN(const Nanos t0, SharedStart(s));
  INFERENG_ASSIGN_OR_RETURN(PhaseResult ph, RunPhase(s, ro, gen,
                                                     {.records_path = records, .trial = trial, .planned = planned, .t0 = t0}));
  const bool partial = ph.stats.interrupted || ph.target_down || ph.stats.lost > 0 || ph.stats.fell_behind;
  res->interrupted = res->interrupted || (ph.stats.interrupted && !ph.target_down);
  res->target_down = res->target_down || ph.target_down;
  res->partial = res->partial || partial;
  NoteTrialTrouble(s, ph, ro);
  const Nanos window_end = ph.stats.t_last_measured >= 0 ? ph.stats.t_last_measured : ph.stats.t_last_sched;
  AddSaturationSignals(s, ph, window_end);
  INFERENG_ASSIGN_OR_RETURN(metrics::Summary sum, Summarize(s, ph, s.plan.warmup, window_end, partial));
  if (trial == 1 && !s.evals.empty()) {
    // The quality report of the charted trial, on the summary's window.
    res->quality = metrics::BuildQualityReport(
        ph.quality,
        {.t0 = ph.stats.t0, .start = ph.stats.t0 + s.plan.warmup,
         .end = window_end >= 0 ? std::optional<Nanos>(window_end) : std::nullopt,
         .bucket_s = sum.timeseries_bucket_s > 0 ? sum.timeseries_bucket_s : 1.0},
        s.opt.card.quality.pass_threshold);
  }
  if (s.shard) {
    const int64_t start_at = s.opt.start_at_unix_ns.value_or(ph.t0_unix_ns);
    s.shard_facts = {{"t0_unix_ns", ph.t0_unix_ns},
                     {"t0_utc", bench::UnixNsIso8601(ph.t0_unix_ns)},
                     {"start_lateness_ms", static_cast<double>(ph.t0_unix_ns - start_at) / 1e6},
                     {"window_end_ns", window_end >= 0 ? window_end - ph.stats.t0 : 0},
                     {"partial", partial}};
  }
  if (s.plan.trials > 1 && !dir.empty()) {
    INFERENG_RETURN_IF_ERROR(metrics::WriteSummaryFile((fs::path(dir) / "summary.json").string(), sum));
  }
  res->trials.push_back(std::move(sum));
  return partial;
}

// Notes that only the end of the run can write (retries, prompt-length exactness, the
// client's saturation verdict).
void AddClosingNotes(Session& s, const metrics::Summary& summary) {
  if (s.retried > 0) {
    char lost[32];
    std::snprintf(lost, sizeof lost, "%.1f", NanosToSeconds(s.retry_lost) * 1e3);
    s.notes.push_back(std::to_string(s.retried) + " request(s) were re-sent after a kept-alive connection failed before "
                      "any response byte (" + lost + " ms lost in total; `retries` in requests.jsonl)");
  }
  if (s.prompts) {
    if (std::string n = bench::LengthExactnessNote(s.prompt_setup); !n.empty()) s.notes.push_back(n);
  }
  const std::optional<double> itl_p50 = summary.itl_ms.count > 0 ? std::optional<double>(summary.itl_ms.p50) : std::nullopt;
  s.saturation = JudgeSaturation(s.rx_stamps, s.io_cpu_share, s.steady_lag_ms, SaturationLimits{}, itl_p50);
  if (std::string n = SaturationNote(*s.saturation); !n.empty()) s.notes.push_back(std::move(n));
}

SummaryExtras ExtrasFor(const Session& s, const bench::BenchResult& res, const std::string& output_length_control) {
  SummaryExtras e;
  const double tokens = static_cast<double>(res.summary.counts.window_output_tokens);
  const double cpu_s = NanosToSeconds(s.client_cpu);
  e.client = {.cpu_s = cpu_s,
              .cpu_s_per_1m_output_tokens = tokens > 0 ? std::optional<double>(cpu_s / tokens * 1e6) : std::nullopt,
              .connections_opened = static_cast<int64_t>(s.transport->ConnectionsOpened()),
              .stale_connections_dropped = static_cast<int64_t>(s.transport->StaleConnectionsDropped()),
              .requests_retried = s.retried,
              .retry_time_lost_s = NanosToSeconds(s.retry_lost),
              .io_threads = s.transport->io_threads(),
              .preconnect = std::nullopt,
              .saturation = std::nullopt};
  if (s.saturation) e.client.saturation = SaturationToJson(*s.saturation);
  if (s.preconnect && s.preconnect->requested > 0) {
    const client::PreconnectResult& p = *s.preconnect;
    Nanos slowest = 0;
    for (Nanos t : p.connect_times) slowest = std::max(slowest, t);
    e.client.preconnect = ClientCost::Preconnect{.requested = static_cast<int64_t>(p.requested),
                                                 .opened = static_cast<int64_t>(p.opened),
                                                 .failed = static_cast<int64_t>(p.failed),
                                                 .seconds = NanosToSeconds(p.elapsed),
                                                 .connect_ms_max = NanosToMillis(slowest)};
  }
  if (s.prompts) e.prompt_lengths = s.prompts->Report();
  e.output_length_control = output_length_control;
  e.quality = res.quality;
  if (!s.trace.is_null()) e.trace = s.trace;
  if (res.cold) e.cold_start = metrics::SummaryToJson(*res.cold);
  if (res.trials.size() > 1) {
    json trials = metrics::TrialStatsToJson(metrics::AggregateTrials(res.trials));
    trials["verdict"] = metrics::TrialsVerdictToJson(res.trials, res.gate);
    e.trials = std::move(trials);
  }
  e.notes = res.notes;
  return e;
}

}  // namespace

Result<bench::BenchResult> RunBench(const bench::BenchOptions& options) {
  Session s(options);
  const std::string start_wall = WallTimeIso8601();
  INFERENG_RETURN_IF_ERROR(Setup(s));
  bench::BenchResult res;
  const std::string& out = options.out_dir;
  if (!out.empty()) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return Status::IoError("--out " + out + ": " + ec.message());
  }
  // manifest.json first: an interrupted run still says what it was.
  ManifestInputs mi = ManifestFor(s, start_wall);
  const workload::GeneratorOptions go = GeneratorFor(s);
  if (!out.empty()) INFERENG_RETURN_IF_ERROR(WriteJsonFile(PathIn(out, "manifest.json"), BuildManifest(mi)));
  json engine_metrics_files = json::object();
  std::optional<client::Scrape> before = ScrapeTo(s, PathIn(out, "engine_metrics_before.prom"), &engine_metrics_files, "before");

  if (options.cold_start_requests > 0) {
    INFERENG_ASSIGN_OR_RETURN(res.cold, RunColdStart(s, go, PathIn(out, "cold_requests.jsonl")));
  }
  for (int trial = 1; trial <= s.plan.trials; ++trial) {
    if (options.interrupt != nullptr && options.interrupt->load()) break;
    INFERENG_ASSIGN_OR_RETURN(bool partial, RunTrial(s, go, trial, &res));
    if (partial) break;
  }
  if (res.trials.empty()) return Status::Cancelled("interrupted before the first trial started");
  std::optional<client::Scrape> after = ScrapeTo(s, PathIn(out, "engine_metrics_after.prom"), &engine_metrics_files, "after");

  res.summary = res.trials.front();
  res.has_slos = !options.card.slo.latency.empty() || !options.card.slo.goodput.empty() ||
                 options.card.slo.min_output_tokens_per_s.has_value();
  res.first_error = s.first_error;
  AddClosingNotes(s, res.summary);
  res.gate = {.has_slos = res.has_slos, .quality_threshold = options.card.quality.pass_threshold};
  res.verdict = metrics::JudgeTrials(res.trials, res.gate);
  for (std::string& n : s.notes) res.notes.push_back(std::move(n));

  SummaryExtras extras = ExtrasFor(s, res, mi.output_length_control);
  extras.engine_metrics_files = engine_metrics_files;
  if (before && after) extras.engine_metrics = client::EngineMetricsDelta(*before, *after);
  json sj = metrics::SummaryToJson(res.summary);
  AddExtrasToJson(extras, &sj);
  res.summary_json = sj;

  mi.length_model = s.prompts ? s.prompts->model() : bench::LengthModel{};
  if (s.prompts) mi.length_calibration = bench::CalibrationLabel(s.prompt_setup);  // with the warm-up re-fit, if any
  json manifest = BuildManifest(mi);
  manifest["end_time_utc"] = WallTimeIso8601();
  manifest["partial"] = res.partial;
  // Where the event times came from (stamped_socket.h): kernel receive stamps or the fallback.
  if (s.saturation) manifest["rx_timestamps"] = s.saturation->stamp_source;
  if (s.shard && !s.shard_facts.is_null()) manifest["shard"].update(s.shard_facts);
  res.manifest = manifest;
  if (!out.empty()) {
    INFERENG_RETURN_IF_ERROR(WriteJsonFile(PathIn(out, "summary.json"), sj));
    INFERENG_RETURN_IF_ERROR(WriteJsonFile(PathIn(out, "manifest.json"), manifest));
  }
  return res;
}

}  // namespace infereng::job
