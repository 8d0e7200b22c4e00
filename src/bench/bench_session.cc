#include "bench/bench_session.h"

#include <time.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "bench/dataset.h"
#include "bench/engine_probe.h"
#include "bench/http_transport.h"
#include "bench/load_plan.h"
#include "bench/manifest.h"
#include "bench/prompt.h"
#include "bench/prompt_setup.h"
#include "bench/quality.h"
#include "bench/record_pipeline.h"
#include "client/prometheus.h"
#include "bench/load_runner.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "metrics/trials.h"
#include "workload/generator.h"

namespace infereng::bench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Nanos ThreadCpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

// Everything a run shares across its phases.
struct Session {
  explicit Session(const BenchOptions& o) : opt(o) {}
  const BenchOptions& opt;
  LoadPlan plan;
  std::string api_key;
  client::ClientOptions client;
  ServerInfo server;
  std::string model_id;
  BodyOptions body;
  PromptSetup prompt_setup;
  PromptBuilder* prompts = nullptr;  // prompt_setup.builder (null with a dataset)
  std::vector<DatasetItem> dataset;
  std::vector<EvalItem> evals;
  std::unique_ptr<HttpTransport> transport;
  std::vector<std::string> notes;
  Nanos client_cpu = 0;  // dispatcher + io + pipeline threads, all phases
  int64_t retried = 0;    // requests re-sent after a dead kept-alive connection, all phases
  Nanos retry_lost = 0;   // their first send -> re-send, summed
  std::string first_error;  // the first failed request of the run ("" when none)
};

std::string Scrub(const Session& s, const std::string& text) { return ScrubSecret(text, s.api_key); }

// Builds the request for one spec (dispatcher thread, before its send time).
Result<PreparedRequest> Prepare(Session& s, const workload::RequestSpec& spec, bool cold) {
  PreparedRequest r;
  r.record.id = spec.index;
  r.record.tenant = spec.tenant;
  r.record.cold = cold;
  r.path = EndpointPath(s.plan.endpoint);
  const int every = s.opt.quality_every;
  if (!s.evals.empty() && every > 0 && spec.index % static_cast<uint64_t>(every) == 0) {
    const size_t k = (spec.index / static_cast<uint64_t>(every)) % s.evals.size();
    const EvalItem& item = s.evals[k];
    BodyOptions b = s.body;
    b.caps.ignore_eos = b.caps.min_tokens = false;  // let the model answer naturally
    r.body = BuildRequestBody(b, item.prompt, item.max_tokens);
    r.keep_text = true;
    r.quality_item = static_cast<int>(k);
    r.record.output_tokens_target = item.max_tokens;
    return r;
  }
  int32_t out_tokens = std::max<int32_t>(spec.output_tokens, 1);
  if (!s.dataset.empty()) {
    const DatasetItem& item = s.dataset[(spec.index + s.plan.seed) % s.dataset.size()];
    if (item.output_tokens > 0) out_tokens = item.output_tokens;
    r.body = BuildRequestBody(s.body, item.prompt, out_tokens);
  } else {
    INFERENG_ASSIGN_OR_RETURN(std::string text, s.prompts->Build(spec));
    r.record.input_tokens_target = spec.input_tokens;
    r.body = BuildRequestBody(s.body, PromptContent{std::move(text), nullptr}, out_tokens);
  }
  r.record.output_tokens_target = out_tokens;
  return r;
}

// How long the end of a phase waits for requests still in flight. Longer than the request
// timeout: a drain that ended when the last request's own timeout fires would race it, and a
// late timer callback (a busy machine) would turn that request's "timeout" into a cancel.
Nanos DrainTimeout(const LoadPlan& plan) { return plan.timeout + 2 * kNanosPerSecond; }

// The model id every request names: --model, else the card's model.id, else the first model
// the server lists. None at all: refuse before sending load (every request would be a 400
// "you must provide a model parameter"). A card model the server does not list: say so now.
Status ResolveModel(Session& s) {
  const BenchOptions& o = s.opt;
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
  const BenchOptions& o = s.opt;
  INFERENG_ASSIGN_OR_RETURN(s.plan, ResolveLoadPlan(o));
  INFERENG_ASSIGN_OR_RETURN(Target target, ParseTarget(o.target));
  if (!target.endpoint.empty()) {
    // A full endpoint URL names the API: it wins over the card, but must agree with --endpoint.
    if (o.endpoint && *o.endpoint != target.endpoint) {
      return Status::InvalidArgument("--target names the " + target.endpoint + " endpoint but --endpoint is " +
                                     *o.endpoint + " (pass the base URL, e.g. " + target.root + "/v1)");
    }
    s.plan.endpoint = target.endpoint == "chat" ? ApiEndpoint::kChat : ApiEndpoint::kCompletions;
  }
  INFERENG_ASSIGN_OR_RETURN(s.api_key, LoadApiKey(o.api_key));
  s.client.base_url = target.root;
  if (!s.api_key.empty()) s.client.headers.push_back({"Authorization", "Bearer " + s.api_key});
  s.client.insecure = o.insecure;
  s.client.ca_file = o.ca_file;
  s.client.unix_socket = o.unix_socket;
  s.client.request_timeout = s.plan.timeout;
  s.client.stall_timeout = std::min<Nanos>(s.plan.timeout, 120 * kNanosPerSecond);
  s.client.expected_concurrency = static_cast<size_t>(std::max(s.plan.concurrency, 64));

  // Inputs first: a bad file is a usage error whatever the target does.
  if (!o.dataset.empty()) {
    INFERENG_ASSIGN_OR_RETURN(s.dataset, LoadDataset(o.dataset, o.dataset_format));
  }
  if (!o.card.quality.eval_set.empty()) {
    std::error_code ec;
    if (!fs::exists(o.card.quality.eval_set, ec) && o.card.Assumed("quality.eval_set")) {
      // An assumed (placeholder) eval set that does not exist yet: say so, run without it.
      s.notes.push_back("quality not checked: the card's quality.eval_set " + o.card.quality.eval_set +
                        " is marked assumed and does not exist");
    } else {
      INFERENG_ASSIGN_OR_RETURN(s.evals, LoadEvalSet(o.card.quality.eval_set));
    }
  }

  {
    Result<ServerInfo> info = ProbeServer(s.client, 5 * kNanosPerSecond);
    if (!info.ok()) return Status::Unavailable(Scrub(s, info.status().message()));
    s.server = std::move(info).value();
  }
  if (o.cold_start_requests > 0) {
    // Cold start: wait for /health, then look again (a loading server answers 503 to
    // /tokenize and friends); the first generation requests are the cold ones.
    INFERENG_RETURN_IF_ERROR(WaitHealthy(s.client, 600 * kNanosPerSecond));
    Result<ServerInfo> info = ProbeServer(s.client, 5 * kNanosPerSecond);
    if (!info.ok()) return Status::Unavailable(Scrub(s, info.status().message()));
    s.server = std::move(info).value();
  }
  INFERENG_RETURN_IF_ERROR(ResolveModel(s));
  s.body.model = s.model_id;
  s.body.endpoint = s.plan.endpoint;
  s.body.caps = CapsForEngine(s.server.engine);
  INFERENG_RETURN_IF_ERROR(ApplyLengthControl(o.length_control, &s.body.caps));
  if (!s.body.caps.length_controlled()) {
    s.notes.push_back(o.length_control == "none"
                          ? std::string("output length not controlled (--length-control none): max_tokens only")
                          : "output length not controlled: engine \"" + s.server.engine +
                                "\" is not known to accept ignore_eos or min_tokens (max_tokens only; "
                                "--length-control ignore_eos|min_tokens|both sends them anyway)");
  }
  if (s.dataset.empty()) {
    PromptSetupInputs pi;
    pi.client = &s.client;
    pi.server = &s.server;
    pi.endpoint = s.plan.endpoint;
    pi.model = s.model_id;
    pi.seed = s.plan.seed;
    pi.timeout = std::min<Nanos>(s.plan.timeout, 60 * kNanosPerSecond);
    s.prompt_setup = SetUpPrompts(pi);
    for (const std::string& n : s.prompt_setup.notes) s.notes.push_back(Scrub(s, n));
    s.prompts = s.prompt_setup.builder.get();
  }
  HttpTransportOptions to;
  to.client = s.client;
  to.endpoint = s.plan.endpoint;
  INFERENG_ASSIGN_OR_RETURN(s.transport, HttpTransport::Create(std::move(to)));
  return Status::Ok();
}

// A request the interrupt cancelled in flight: neither a success nor a failure of the server.
void MarkInterrupted(metrics::RequestRecord& r) {
  r.error = metrics::ErrorClass::kInterrupted;
  r.error_message = "cancelled in flight: the run was interrupted (not counted)";
}

struct PhaseResult {
  RunnerStats stats;
  bool target_down = false;
  std::vector<metrics::RequestRecord> records;  // when not written to a file
  std::string records_path;
};

// Runs one load phase (a trial, or the cold-start requests) into `records_path`.
Result<PhaseResult> RunPhase(Session& s, const RunnerOptions& ropt, workload::Generator& gen,
                             const std::string& records_path, bool cold, int trial, Nanos planned) {
  PhaseResult out;
  out.records_path = records_path;
  Clock& clock = SteadyClock::Instance();
  RunnerOptions ro = ropt;
  ro.t0 = clock.Now() + 2 * kNanosPerMilli;
  std::unique_ptr<metrics::RecordWriter> writer;
  if (!records_path.empty()) {
    INFERENG_ASSIGN_OR_RETURN(writer, metrics::RecordWriter::Open(records_path, ro.t0));
  }
  s.transport->Rearm();  // a drain timeout in the previous phase cancelled everything then
  LoadRunner runner(clock, *s.transport);
  std::atomic<bool> target_down{false};
  PipelineOptions po;
  po.writer = writer.get();
  po.keep_in_memory = writer == nullptr;
  po.prompts = s.prompts;
  po.evals = &s.evals;
  po.secret = s.api_key;
  po.on_target_down = [&] {
    target_down.store(true);
    runner.Stop();
  };
  RecordPipeline pipeline(po);

  // Watcher: interrupt flag, end-of-warm-up calibration, progress.
  std::atomic<bool> done{false};
  // Set before runner.Stop() on an interrupt: the requests it cancels are then recorded as
  // kInterrupted (not a server outcome), not as failures.
  std::atomic<bool> stopping{false};
  std::thread watcher([&] {
    bool refitted = false;
    int64_t last_finished = 0;
    Nanos last_report = ro.t0;
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (s.opt.interrupt != nullptr && s.opt.interrupt->load()) {
        stopping.store(true);
        runner.Stop();
      }
      const Nanos now = clock.Now();
      if (!refitted && s.prompts && now - ro.t0 >= s.plan.warmup) refitted = s.prompts->Refit() || true;
      if (s.opt.on_progress && now - last_report >= kNanosPerSecond) {
        Progress p;
        const Nanos el = now - ro.t0;
        p.phase = cold ? "cold-start"
                  : el < s.plan.warmup ? "warm-up"
                  : (planned > 0 && el >= planned - s.plan.cooldown) ? "cool-down/drain"
                                                                     : "measure";
        p.trial = trial;
        p.trials = s.plan.trials;
        p.elapsed_s = NanosToSeconds(el);
        p.total_s = NanosToSeconds(planned);
        p.issued = runner.Issued();
        p.in_flight = runner.InFlight();
        p.finished = pipeline.counters().finished.load();
        p.errors = pipeline.counters().errors.load();
        p.rate_rps = static_cast<double>(p.finished - last_finished) / NanosToSeconds(now - last_report);
        last_finished = p.finished;
        last_report = now;
        s.opt.on_progress(p);
      }
    }
  });

  const Nanos cpu0 = ThreadCpuNow();
  const Nanos io_cpu0 = s.transport->IoThreadCpu();
  Result<RunnerStats> st = runner.Run(
      ro, [&] { return gen.Next(); },
      [&](const workload::RequestSpec& spec) { return Prepare(s, spec, cold); },
      [&](Finished&& f) {
        if (f.record.error == metrics::ErrorClass::kCancelled && stopping.load()) MarkInterrupted(f.record);
        pipeline.Push(std::move(f));
      });
  done.store(true);
  watcher.join();
  Status closed = pipeline.Close();
  s.retried += pipeline.counters().retried.load();
  s.retry_lost += pipeline.counters().retry_lost_ns.load();
  if (s.first_error.empty()) s.first_error = Scrub(s, pipeline.first_error());
  s.client_cpu += ThreadCpuNow() - cpu0 + s.transport->IoThreadCpu() - io_cpu0 + pipeline.ThreadCpu();
  if (writer) INFERENG_RETURN_IF_ERROR(writer->Close());
  INFERENG_RETURN_IF_ERROR(closed);
  if (!st.ok()) return st.status();
  if (!gen.status().ok()) return gen.status();
  out.stats = *st;
  out.target_down = target_down.load();
  if (!writer) out.records = std::move(pipeline.Records());
  return out;
}

Result<metrics::Summary> Summarize(const Session& s, const PhaseResult& ph, Nanos warmup, Nanos window_end,
                                   bool partial) {
  metrics::AccumulatorOptions ao;
  ao.open_loop = !s.plan.closed_loop;
  ao.slo = s.opt.card.slo;
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

std::string OutputLengthControl(const EngineCaps& c) {
  if (c.ignore_eos && c.min_tokens) return "ignore_eos+min_tokens";
  if (c.ignore_eos) return "ignore_eos";
  if (c.min_tokens) return "min_tokens";
  return "not controlled";
}

std::optional<client::Scrape> ScrapeTo(Session& s, const std::string& path, json* into, const char* key) {
  if (!s.server.has_metrics) return std::nullopt;
  Result<std::string> text = ScrapeMetrics(s.client);
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

// The engine's own view of the run (vLLM names; docs engines.md §3): counter growth,
// gauges at the end, and the server-side TTFT/ITL/E2E/queue histograms of the run.
json EngineMetricsDelta(const client::Scrape& before, const client::Scrape& after) {
  json j = json::object();
  json counters = json::object();
  for (const char* name : {"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:num_preemptions_total",
                           "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
                           "vllm:request_success_total"}) {
    if (auto d = client::CounterDelta(before, after, name)) counters[name] = *d;
  }
  if (counters.contains("vllm:prefix_cache_queries_total") && counters["vllm:prefix_cache_queries_total"].get<double>() > 0 &&
      counters.contains("vllm:prefix_cache_hits_total")) {
    j["prefix_cache_hit_rate"] = counters["vllm:prefix_cache_hits_total"].get<double>() /
                                 counters["vllm:prefix_cache_queries_total"].get<double>();
  }
  j["counters_delta"] = counters;
  json gauges = json::object();
  for (const char* name : {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"}) {
    if (auto v = after.Value(name)) gauges[name] = *v;
  }
  j["gauges_after"] = gauges;
  json hist = json::object();
  for (const char* name : {"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
                           "vllm:e2e_request_latency_seconds", "vllm:request_queue_time_seconds"}) {
    Result<client::HistogramData> a = after.Histogram(name);
    if (!a.ok()) continue;
    Result<client::HistogramData> b = before.Histogram(name);
    client::HistogramData d = b.ok() ? client::HistogramData::Delta(*a, *b) : *a;
    if (d.count <= 0) continue;
    hist[name] = {{"count", d.count}, {"mean_s", d.Mean()}, {"p50_s", d.Quantile(0.5)}, {"p99_s", d.Quantile(0.99)}};
  }
  j["histograms_delta"] = hist;
  return j;
}

}  // namespace

Result<BenchResult> RunBench(const BenchOptions& options) {
  Session s(options);
  const std::string start_wall = WallTimeIso8601();
  INFERENG_RETURN_IF_ERROR(Setup(s));
  BenchResult res;
  const std::string& out = options.out_dir;
  if (!out.empty()) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return Status::IoError("--out " + out + ": " + ec.message());
  }
  auto path_in = [&](const std::string& name) { return out.empty() ? std::string() : (fs::path(out) / name).string(); };

  ManifestInputs mi;
  mi.options = &options;
  mi.plan = &s.plan;
  mi.server = &s.server;
  mi.target_display = ParseTarget(options.target)->display;
  if (!options.unix_socket.empty()) mi.target_display += " via unix:" + options.unix_socket;
  mi.model_id = s.model_id;
  mi.model_revision = !options.card.model.revision.empty() ? options.card.model.revision : s.server.model_revision;
  mi.prompt_source = options.dataset.empty() ? "synthetic" : "dataset:" + options.dataset;
  mi.length_calibration = !options.dataset.empty() ? "none (dataset prompts)" : CalibrationLabel(s.prompt_setup);
  mi.length_model = s.prompts ? s.prompts->model() : LengthModel{};
  mi.output_length_control = OutputLengthControl(s.body.caps);
  mi.api_key_source = s.api_key.empty() ? "none"
                      : !options.api_key.file.empty() ? "file:" + options.api_key.file
                                                      : "env:" + (options.api_key.env_name.empty() ? std::string("OPENAI_API_KEY")
                                                                                                  : options.api_key.env_name);
  mi.start_wall = start_wall;

  workload::GeneratorOptions go;
  go.seed = s.plan.seed;
  go.closed_loop = s.plan.closed_loop;
  if (!s.plan.closed_loop) go.rate_scale = s.plan.rate_scale;
  mi.mean_rate_rps = s.plan.mean_rate_rps;
  json manifest = BuildManifest(mi);
  json engine_metrics = json::object();
  if (!out.empty()) INFERENG_RETURN_IF_ERROR(WriteJsonFile(path_in("manifest.json"), manifest));
  std::optional<client::Scrape> scrape_before = ScrapeTo(s, path_in("engine_metrics_before.prom"), &engine_metrics, "before");

  // Cold start: the first requests after /health turns 200, one at a time.
  if (options.cold_start_requests > 0) {
    workload::GeneratorOptions cg = go;
    cg.closed_loop = true;
    INFERENG_ASSIGN_OR_RETURN(workload::Generator gen, workload::Generator::FromCard(options.card, cg));
    if (s.prompts) INFERENG_RETURN_IF_ERROR(PreparePhasePrompts(*s.prompts, options.card, cg).status());
    RunnerOptions ro;
    ro.mode = RunnerOptions::Mode::kClosedLoop;
    ro.concurrency = 1;
    ro.max_requests = options.cold_start_requests;
    ro.drain_timeout = DrainTimeout(s.plan);
    INFERENG_ASSIGN_OR_RETURN(PhaseResult ph, RunPhase(s, ro, gen, path_in("cold_requests.jsonl"), true, 0, 0));
    INFERENG_ASSIGN_OR_RETURN(metrics::Summary cold, Summarize(s, ph, 0, ph.stats.t_last_sched, ph.stats.interrupted));
    res.cold = cold;
  }

  for (int trial = 1; trial <= s.plan.trials; ++trial) {
    if (options.interrupt != nullptr && options.interrupt->load()) break;
    INFERENG_ASSIGN_OR_RETURN(workload::Generator gen, workload::Generator::FromCard(options.card, go));
    if (s.prompts) {
      // Prompts for this trial are built (and checked with /tokenize) now, not on the hot path.
      s.prompts->SetSalt(static_cast<uint64_t>(trial));
      INFERENG_RETURN_IF_ERROR(PreparePhasePrompts(*s.prompts, options.card, go).status());
    }
    RunnerOptions ro;
    ro.mode = s.plan.closed_loop ? RunnerOptions::Mode::kClosedLoop : RunnerOptions::Mode::kOpenLoop;
    ro.concurrency = s.plan.concurrency;
    ro.ramp = s.plan.ramp;
    ro.measure_from = s.plan.warmup;
    ro.drain_timeout = DrainTimeout(s.plan);
    Nanos planned = 0;
    if (s.plan.requests >= 0) {
      ro.max_requests = s.plan.requests;
      ro.cooldown = s.plan.cooldown;
    } else {
      ro.measure_until = s.plan.warmup + s.plan.duration;
      ro.stop_after = ro.measure_until + s.plan.cooldown;
      planned = ro.stop_after;
    }
    std::string dir = out;
    if (!out.empty() && s.plan.trials > 1) {
      dir = (fs::path(out) / ("trial-" + std::to_string(trial))).string();
      fs::create_directories(dir);
    }
    const std::string records = dir.empty() ? std::string() : (fs::path(dir) / "requests.jsonl").string();
    INFERENG_ASSIGN_OR_RETURN(PhaseResult ph, RunPhase(s, ro, gen, records, false, trial, planned));
    const bool partial = ph.stats.interrupted || ph.target_down || ph.stats.lost > 0 || ph.stats.fell_behind;
    res.interrupted = res.interrupted || (ph.stats.interrupted && !ph.target_down);
    res.target_down = res.target_down || ph.target_down;
    res.partial = res.partial || partial;
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
    const Nanos window_end = ph.stats.t_last_measured >= 0 ? ph.stats.t_last_measured : ph.stats.t_last_sched;
    INFERENG_ASSIGN_OR_RETURN(metrics::Summary sum, Summarize(s, ph, s.plan.warmup, window_end, partial));
    if (s.plan.trials > 1 && !dir.empty()) INFERENG_RETURN_IF_ERROR(metrics::WriteSummaryFile((fs::path(dir) / "summary.json").string(), sum));
    res.trials.push_back(std::move(sum));
    if (partial) break;
  }
  if (res.trials.empty()) return Status::Cancelled("interrupted before the first trial started");
  std::optional<client::Scrape> scrape_after = ScrapeTo(s, path_in("engine_metrics_after.prom"), &engine_metrics, "after");

  res.summary = res.trials.front();
  res.has_slos = !options.card.slo.latency.empty() || !options.card.slo.goodput.empty() ||
                 options.card.slo.min_output_tokens_per_s.has_value();
  res.first_error = s.first_error;
  const size_t stale = s.transport->StaleConnectionsDropped();
  if (s.retried > 0) {
    char lost[32];
    std::snprintf(lost, sizeof lost, "%.1f", NanosToSeconds(s.retry_lost) * 1e3);
    s.notes.push_back(std::to_string(s.retried) + " request(s) were re-sent after a kept-alive connection failed before "
                      "any response byte (" + lost + " ms lost in total; `retries` in requests.jsonl)");
  }
  if (s.prompts) {
    if (std::string n = LengthExactnessNote(s.prompt_setup); !n.empty()) s.notes.push_back(n);
  }

  res.gate = {.has_slos = res.has_slos, .quality_threshold = options.card.quality.pass_threshold};
  res.verdict = metrics::JudgeTrials(res.trials, res.gate);
  for (std::string& n : s.notes) res.notes.push_back(std::move(n));

  json sj = metrics::SummaryToJson(res.summary);
  const double tokens = static_cast<double>(res.summary.counts.window_output_tokens);
  sj["client"] = {
      {"cpu_s", NanosToSeconds(s.client_cpu)},
      {"cpu_s_per_1m_output_tokens", tokens > 0 ? json(NanosToSeconds(s.client_cpu) / tokens * 1e6) : json(nullptr)},
      {"connections_opened", s.transport->ConnectionsOpened()},
      {"stale_connections_dropped", stale},
      {"requests_retried", s.retried},
      {"retry_time_lost_s", NanosToSeconds(s.retry_lost)},
  };
  if (s.prompts) {
    const LengthReport lr = s.prompts->Report();
    sj["prompt_lengths"] = {{"samples", lr.samples},        {"exact", lr.exact},
                            {"mean_abs_error_tokens", lr.mean_abs_error}, {"max_abs_error_tokens", lr.max_abs_error},
                            {"mean_achieved_over_target", lr.mean_ratio}};
  }
  sj["output_length_control"] = mi.output_length_control;
  if (!s.evals.empty()) {
    const auto& c = res.summary.counts;
    sj["quality"] = {{"checked", c.quality_checked}, {"passed", c.quality_passed},
                     {"pass_rate", c.quality_checked > 0 ? json(double(c.quality_passed) / c.quality_checked) : json(nullptr)},
                     {"pass_threshold", options.card.quality.pass_threshold}};
  }
  if (res.cold) sj["cold_start"] = metrics::SummaryToJson(*res.cold);
  if (res.trials.size() > 1) {
    sj["trials"] = metrics::TrialStatsToJson(metrics::AggregateTrials(res.trials));
    sj["trials"]["verdict"] = metrics::TrialsVerdictToJson(res.trials, res.gate);
  }
  if (!engine_metrics.empty()) sj["engine_metrics_files"] = engine_metrics;
  if (scrape_before && scrape_after) sj["engine_metrics"] = EngineMetricsDelta(*scrape_before, *scrape_after);
  sj["notes"] = res.notes;
  res.summary_json = sj;

  mi.length_model = s.prompts ? s.prompts->model() : LengthModel{};
  if (s.prompts) mi.length_calibration = CalibrationLabel(s.prompt_setup);  // with the warm-up re-fit, if any
  manifest = BuildManifest(mi);
  manifest["end_time_utc"] = WallTimeIso8601();
  manifest["partial"] = res.partial;
  res.manifest = manifest;
  if (!out.empty()) {
    INFERENG_RETURN_IF_ERROR(WriteJsonFile(path_in("summary.json"), sj));
    INFERENG_RETURN_IF_ERROR(WriteJsonFile(path_in("manifest.json"), manifest));
  }
  return res;
}

}  // namespace infereng::bench
