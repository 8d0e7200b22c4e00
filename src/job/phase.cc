#include "job/phase.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "bench/engine_probe.h"
#include "bench/engine_scraper.h"
#include "bench/record_pipeline.h"
#include "bench/session_source.h"
#include "bench/shard.h"
#include "bench/wav_audio.h"
#include "core/mix64.h"
#include "metrics/records_io.h"
#include "workload/generator.h"

namespace infereng::job {
namespace {

using bench::Finished;
using bench::PreparedRequest;

Nanos ThreadCpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

// Builds the request for one spec (dispatcher thread, before its send time).
Result<PreparedRequest> Prepare(Session& s, const workload::RequestSpec& spec, bool cold) {
  PreparedRequest r;
  r.record.id = spec.index;
  r.record.tenant = spec.tenant;
  r.record.session = spec.session;
  r.record.turn = spec.turn;
  r.record.turns = spec.turns;
  r.record.branch = spec.branch;
  r.record.branches = spec.branches;
  r.record.calls = spec.calls;
  r.record.cold = cold;
  r.path = bench::EndpointPath(s.plan.endpoint);
  const int every = s.opt.quality_every;
  // A session's eval-set check is on its final answer (its last turn's first call carries
  // the item), so the conversation before it stays intact and the task's success includes
  // the check.
  const uint64_t unit = spec.session >= 0 ? static_cast<uint64_t>(spec.session) : spec.index;
  const bool eval_turn = spec.session < 0 || (spec.turn + 1 == spec.turns && spec.branch == 0);
  if (!s.evals.empty() && every > 0 && eval_turn && unit % static_cast<uint64_t>(every) == 0) {
    const size_t k = (unit / static_cast<uint64_t>(every)) % s.evals.size();
    const bench::EvalItem& item = s.evals[k];
    bench::BodyOptions b = s.body;
    b.caps.ignore_eos = b.caps.min_tokens = false;  // let the model answer naturally
    r.body = bench::BuildRequestBody(b, item.prompt, item.max_tokens);
    r.keep_text = true;
    r.quality_item = static_cast<int>(k);
    r.record.output_tokens_target = item.max_tokens;
    return r;
  }
  if (s.plan.endpoint == bench::ApiEndpoint::kRerank) {
    // The query and one synthetic text per document, each of its own token length
    // (workload: query_tokens, item_tokens - query_tokens).
    INFERENG_ASSIGN_OR_RETURN(std::string query, s.prompts->Build(workload::RerankQuerySpec(spec)));
    std::vector<std::string> documents;
    documents.reserve(spec.item_tokens.size());
    for (size_t k = 0; k < spec.item_tokens.size(); ++k) {
      INFERENG_ASSIGN_OR_RETURN(std::string text, s.prompts->Build(workload::EmbeddingItemSpec(spec, k)));
      documents.push_back(std::move(text));
    }
    r.record.items = static_cast<int32_t>(documents.size());
    r.record.query_tokens = spec.query_tokens;
    r.record.input_tokens_target = spec.input_tokens;
    r.body = bench::BuildRerankBody(s.body, query, documents);
    return r;
  }
  if (s.plan.endpoint == bench::ApiEndpoint::kTranscriptions) {
    // One clip of the drawn length, its own samples (from the request's seed): no engine
    // cache can answer it, and its header gives serve the same milliseconds (wav_audio.h).
    r.record.audio_ms = spec.audio_ms;
    r.record.audio_tokens = spec.audio_tokens;
    r.record.input_tokens_target = spec.input_tokens;
    r.record.output_tokens_target = spec.output_tokens;
    bench::MultipartBody mb = bench::BuildTranscriptionBody(
        s.body, bench::SyntheticWav(spec.audio_ms, spec.seed), static_cast<int>(s.opt.card.product.max_output_tokens));
    r.body = std::move(mb.body);
    r.content_type = std::move(mb.content_type);
    return r;
  }
  if (s.plan.endpoint == bench::ApiEndpoint::kEmbeddings) {
    // One synthetic text per input, each of its own token length (workload: item_tokens).
    std::vector<std::string> inputs;
    inputs.reserve(spec.item_tokens.size());
    for (size_t k = 0; k < spec.item_tokens.size(); ++k) {
      INFERENG_ASSIGN_OR_RETURN(std::string text, s.prompts->Build(workload::EmbeddingItemSpec(spec, k)));
      inputs.push_back(std::move(text));
    }
    r.record.items = static_cast<int32_t>(inputs.size());
    r.record.input_tokens_target = spec.input_tokens;
    r.body = bench::BuildEmbeddingsBody(s.body, inputs);
    return r;
  }
  int32_t out_tokens = std::max<int32_t>(spec.output_tokens, 1);
  if (!s.dataset.empty()) {
    const bench::DatasetItem& item = s.dataset[(spec.index + s.plan.seed) % s.dataset.size()];
    if (item.output_tokens > 0) out_tokens = item.output_tokens;
    r.body = bench::BuildRequestBody(s.body, item.prompt, out_tokens);
  } else {
    INFERENG_ASSIGN_OR_RETURN(std::string text, s.prompts->Build(spec));
    r.record.input_tokens_target = spec.input_tokens;
    bench::PromptContent content{std::move(text), nullptr, {}};
    if (spec.images > 0 && s.image) {
      // Each image its own pixels (a variant from the request's seed and the image's index),
      // so an engine's image cache never hides the encoder and prefill (bench/png_image.h).
      for (int32_t k = 0; k < spec.images; ++k) {
        content.image_urls.push_back(s.image->DataUrl(Mix64(spec.seed + static_cast<uint64_t>(k))));
      }
      r.record.images = spec.images;
      r.record.image_tokens = spec.image_tokens;
    }
    r.body = bench::BuildRequestBody(s.body, content, out_tokens);
  }
  r.record.output_tokens_target = out_tokens;
  return r;
}

// A request the interrupt cancelled in flight: neither a success nor a failure of the server.
void MarkInterrupted(metrics::RequestRecord& r) {
  r.error = metrics::ErrorClass::kInterrupted;
  r.error_message = "cancelled in flight: the run was interrupted (not counted)";
}

// The client's saturation signals over the measured part of a phase: receive stamps and
// io-thread CPU are restarted when the warm-up ends and read when the measured window ends
// (or the phase does). Written by the watcher thread, read after Join().
struct MeasuredPart {
  std::vector<Nanos> io_cpu0;  // per io thread
  Nanos wall0 = 0;
  bool ended = false;
  client::RxStampStats stamps;
  std::optional<double> io_cpu_share;  // the busiest io thread's

  void Start(bench::HttpTransport& t, Nanos now) {
    (void)t.TakeRxStampStats();  // the warm-up's (and the pool warm-up's) are not measured
    io_cpu0 = t.IoThreadCpus();
    wall0 = now;
  }
  void End(bench::HttpTransport& t, Nanos now) {
    if (ended) return;
    ended = true;
    stamps = t.TakeRxStampStats();
    io_cpu_share = BusiestIoCpuShare(io_cpu0, t.IoThreadCpus(), now - wall0);
  }
};

// The phase's watcher thread: the interrupt flag, the end-of-warm-up calibration, the
// measured part's saturation signals and the progress line. Joined by its destructor.
class PhaseWatcher {
 public:
  PhaseWatcher(Session& s, bench::LoadRunner& runner, const bench::RecordPipeline& pipeline, const PhaseSpec& spec,
               Nanos t0, MeasuredPart& measured)
      : s_(s), runner_(runner), pipeline_(pipeline), spec_(spec), t0_(t0), measured_(measured),
        thread_([this] { Loop(); }) {}
  ~PhaseWatcher() { Join(); }
  void Join() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Set before runner.Stop() on an interrupt: the requests it cancels are then recorded as
  // kInterrupted (not a server outcome), not as failures.
  bool stopping() const { return stopping_.load(); }

 private:
  void Loop() {
    Clock& clock = SteadyClock::Instance();
    bool refitted = false;
    int64_t last_finished = 0;
    Nanos last_report = t0_;
    while (!done_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (s_.opt.interrupt != nullptr && s_.opt.interrupt->load()) {
        stopping_.store(true);
        runner_.Stop();
      }
      const Nanos now = clock.Now();
      if (!refitted && now - t0_ >= s_.plan.warmup) {
        if (s_.prompts) s_.prompts->Refit();
        if (s_.plan.warmup > 0 && !spec_.cold) measured_.Start(*s_.transport, now);
        refitted = true;
      }
      if (!spec_.cold && spec_.planned > 0 && now - t0_ >= spec_.planned - s_.plan.cooldown) {
        measured_.End(*s_.transport, now);
      }
      if (s_.opt.on_progress && now - last_report >= kNanosPerSecond) {
        Report(now, last_finished, last_report);
        last_report = now;
      }
    }
  }

  void Report(Nanos now, int64_t& last_finished, Nanos last_report) {
    bench::Progress p;
    const Nanos el = now - t0_;
    p.phase = spec_.cold                ? "cold-start"
              : el < s_.plan.warmup     ? "warm-up"
              : (spec_.planned > 0 && el >= spec_.planned - s_.plan.cooldown) ? "cool-down/drain"
                                                                               : "measure";
    p.trial = spec_.trial;
    p.trials = s_.plan.trials;
    p.elapsed_s = NanosToSeconds(el);
    p.total_s = NanosToSeconds(spec_.planned);
    p.issued = runner_.Issued();
    p.in_flight = runner_.InFlight();
    p.finished = pipeline_.counters().finished.load();
    p.errors = pipeline_.counters().errors.load();
    p.rate_rps = static_cast<double>(p.finished - last_finished) / NanosToSeconds(now - last_report);
    last_finished = p.finished;
    s_.opt.on_progress(p);
  }

  Session& s_;
  bench::LoadRunner& runner_;
  const bench::RecordPipeline& pipeline_;
  const PhaseSpec& spec_;
  const Nanos t0_;
  MeasuredPart& measured_;
  std::atomic<bool> done_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: starts after every member above is initialised
};

// The engine's /metrics every opt.scrape_interval into engine_metrics.jsonl beside the
// records (same t0), for a measured phase of an engine with a metrics endpoint; null otherwise.
Result<std::unique_ptr<bench::EngineScraper>> StartScraper(Session& s, const PhaseSpec& spec, Nanos t0) {
  if (spec.cold || spec.records_path.empty() || !s.server.has_metrics || s.opt.scrape_interval <= 0) {
    return std::unique_ptr<bench::EngineScraper>();
  }
  bench::ScraperOptions so;
  so.path = (std::filesystem::path(spec.records_path).parent_path() / "engine_metrics.jsonl").string();
  so.t0 = t0;
  so.interval = s.opt.scrape_interval;
  // A scrape may take at most one interval (at least 0.5 s): Stop never waits long for it.
  const Nanos timeout = std::max<Nanos>(s.opt.scrape_interval, kNanosPerSecond / 2);
  so.fetch = [client = s.client, timeout]() -> Result<std::string> {
    INFERENG_ASSIGN_OR_RETURN(client::FetchResponse r, client::Fetch(client, "GET", "/metrics", {}, timeout));
    if (r.status != 200) return Status::Unavailable("GET /metrics answered HTTP " + std::to_string(r.status));
    return std::move(r.body);
  };
  if (s.server.has_slots) {  // llama.cpp --slots: per-slot state on the same line
    so.fetch_slots = [client = s.client, timeout]() -> Result<std::string> {
      INFERENG_ASSIGN_OR_RETURN(client::FetchResponse r, client::Fetch(client, "GET", "/slots", {}, timeout));
      if (r.status != 200) return Status::Unavailable("GET /slots answered HTTP " + std::to_string(r.status));
      return std::move(r.body);
    };
  }
  return bench::EngineScraper::Start(std::move(so));
}

}  // namespace

std::string Scrub(const Session& s, const std::string& text) { return bench::ScrubSecret(text, s.api_key); }

Nanos DrainTimeout(const bench::LoadPlan& plan) { return plan.timeout + 2 * kNanosPerSecond; }

Result<PhaseResult> RunPhase(Session& s, const bench::RunnerOptions& ropt, workload::SessionPlanner& gen,
                             const PhaseSpec& spec) {
  PhaseResult out;
  out.records_path = spec.records_path;
  Clock& clock = SteadyClock::Instance();
  bench::RunnerOptions ro = ropt;
  // Warm the pool to the load's concurrency (closed loop: C; open loop: the cap) before t0.
  // Not for the cold-start requests: their connection setup is part of what they measure.
  if (!spec.cold && s.opt.preconnect && ro.concurrency > 0) {
    client::PreconnectResult pc = s.transport->Preconnect(static_cast<std::size_t>(ro.concurrency));
    if (pc.failed > 0) {
      s.notes.push_back("opening " + std::to_string(pc.requested) + " connections before the run: " +
                        std::to_string(pc.failed) + " failed (" + Scrub(s, pc.first_error) + ")");
    }
    if (!s.preconnect) s.preconnect = std::move(pc);
  }
  ro.t0 = spec.t0 >= 0 ? spec.t0 : clock.Now() + 2 * kNanosPerMilli;
  out.t0_unix_ns = bench::WallNowUnixNs() + (ro.t0 - clock.Now());
  std::unique_ptr<metrics::RecordWriter> writer;
  if (!spec.records_path.empty()) {
    INFERENG_ASSIGN_OR_RETURN(writer, metrics::RecordWriter::Open(spec.records_path, ro.t0));
  }
  s.transport->Rearm();  // a drain timeout in the previous phase cancelled everything then
  bench::LoadRunner runner(clock, *s.transport);
  std::atomic<bool> target_down{false};
  bench::PipelineOptions po;
  po.writer = writer.get();
  po.keep_in_memory = writer == nullptr;
  po.prompts = s.prompts;
  po.evals = &s.evals;
  po.secret = s.api_key;
  po.on_target_down = [&] {
    target_down.store(true);
    runner.Stop();
  };
  po.on_record = [&out](const metrics::RequestRecord& r) { out.lag.Add(r.t_sched, r.t_send, r.t_end); };
  bench::RecordPipeline pipeline(po);
  INFERENG_ASSIGN_OR_RETURN(std::unique_ptr<bench::EngineScraper> scraper, StartScraper(s, spec, ro.t0));
  MeasuredPart measured;
  measured.Start(*s.transport, clock.Now());  // no warm-up: measured from here
  PhaseWatcher watcher(s, runner, pipeline, spec, ro.t0, measured);

  // A shard draws the one stream and keeps its requests (bench/shard.h); with sessions,
  // whole sessions (by session id).
  auto next_start = [&]() -> std::optional<workload::RequestSpec> {
    if (!s.shard) return gen.NextStart();
    if (!gen.enabled()) return bench::NextInShard(s.shard->shard, [&] { return gen.NextStart(); });
    for (;;) {
      std::optional<workload::RequestSpec> r = gen.NextStart();
      if (!r || bench::InShard(s.shard->shard, static_cast<uint64_t>(r->session))) return r;
    }
  };
  // Sessions and agent tasks: the source releases each next turn after the previous one's
  // end (bench/session_source.h); the runner then runs open loop without a ramp of its own.
  std::optional<bench::SessionSource> sessions;
  if (gen.enabled()) {
    const bool closed = ro.mode == bench::RunnerOptions::Mode::kClosedLoop;
    sessions.emplace(gen, next_start, clock,
                     bench::SessionSourceOptions{.t0 = ro.t0, .closed_loop = closed, .users = ro.concurrency,
                                                 .ramp = ro.ramp, .stop_after = ro.stop_after},
                     runner.stopping());
    ro.mode = bench::RunnerOptions::Mode::kOpenLoop;
    if (closed) ro.concurrency = 0;  // the source keeps `users` sessions going
    ro.ramp = 0;
  }

  const Nanos cpu0 = ThreadCpuNow();
  const Nanos io_cpu0 = s.transport->IoThreadCpu();
  Result<bench::RunnerStats> st = runner.Run(
      ro, [&] { return sessions ? sessions->Next() : next_start(); },
      [&](const workload::RequestSpec& rs) { return Prepare(s, rs, spec.cold); },
      [&](Finished&& f) {
        if (f.record.error == metrics::ErrorClass::kCancelled && watcher.stopping()) MarkInterrupted(f.record);
        if (sessions) sessions->Ended(f.record);
        pipeline.Push(std::move(f));
      });
  watcher.Join();
  measured.End(*s.transport, clock.Now());  // no planned length (requests mode): the phase's end
  out.stamps = std::move(measured.stamps);
  out.io_cpu_share = measured.io_cpu_share;
  if (scraper) {
    if (Status w = scraper->Stop(); !w.ok()) s.notes.push_back("engine_metrics.jsonl: " + w.message());
    if (scraper->failures() > 0) {
      s.notes.push_back(std::to_string(scraper->failures()) + " of " +
                        std::to_string(scraper->failures() + scraper->scrapes()) +
                        " periodic /metrics scrapes failed (first: " + Scrub(s, scraper->first_error()) + ")");
    }
    if (scraper->slot_failures() > 0) {
      s.notes.push_back(std::to_string(scraper->slot_failures()) +
                        " periodic /slots scrapes failed (engine_metrics.jsonl slots_error)");
    }
  }
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
  out.quality = std::move(pipeline.QualityOutcomes());
  return out;
}

}  // namespace infereng::job
