// The virtual-time driver: one event loop over client events (arrivals, closed-loop ramp
// steps), replica step ends and cluster events (cold starts, autoscaler ticks, samples);
// after every event it makes the sends the client (load_client.h) allows. Per event it
// does O(replicas) work; per-request state lives in a slot pool of RequestRecords whose
// chunk vectors keep their capacity, so steady state allocates nothing per token.
#include "twin/simulation.h"
#include "twin/simulation_pass.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>

#include "card/limits.h"
#include "core/units.h"
#include "metrics/reasoning.h"
#include "metrics/records_io.h"
#include "metrics/summary_json.h"
#include "twin/autoscaler.h"
#include "twin/delay_line.h"
#include "twin/engine.h"
#include "twin/kv_transfer.h"
#include "twin/load_client.h"
#include "twin/record_batcher.h"
#include "twin/router.h"
#include "twin/utilisation.h"
#include "workload/generator.h"

namespace infereng::twin {
namespace {

// The cluster-wide counters the summary reports, summed over replicas (live and retired).
void AddCounters(const EngineStats& s, EngineStats* into) {
  into->prefix_hits_tokens += s.prefix_hits_tokens;
  into->prefix_queries_tokens += s.prefix_queries_tokens;
  into->prefill_tokens_computed += s.prefill_tokens_computed;
  into->preemptions += s.preemptions;
  into->steps += s.steps;
  into->spec_draft_tokens += s.spec_draft_tokens;
  into->spec_accepted_tokens += s.spec_accepted_tokens;
  into->kv_usage_integral_s += s.kv_usage_integral_s;
}

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

enum class ReplicaState { kStarting, kServing, kDraining, kStopped };
// A disaggregated cluster's pools; kUnified serves both phases (the default).
enum class Role : uint8_t { kUnified, kPrefill, kDecode };
// Where a request is in a disaggregated cluster (kWhole: it is served by one replica).
enum class Phase : uint8_t { kWhole, kPrefill, kTransfer, kDecode };

struct Replica {
  std::unique_ptr<Engine> engine;
  Role role = Role::kUnified;
  ReplicaState state = ReplicaState::kStopped;
  Nanos ready_at = 0;
  Nanos next_t = kNever;  // cached engine->NextEventTime()
};

struct Pending {
  int32_t slot;
  workload::RequestSpec spec;
};

class Driver final : public EngineSink {
 public:
  Driver(const card::WorkloadCard& card, const TwinSetup& setup, const SimulationOptions& options)
      : card_(card), setup_(setup), opt_(options), ecfg_(setup.settings.engine),
        router_(setup.settings.cluster.router), decode_router_(RouterPolicy::kLeastOutstanding),
        autoscaler_(setup.settings.cluster),
        to_engine_(setup.front_end.Inbound()), to_client_(setup.front_end.Outbound()) {
    // The card's client timeout (product.timeout) applies unless the engine has its own.
    if (ecfg_.request_timeout_s <= 0 && card.product.timeout_s > 0) ecfg_.request_timeout_s = card.product.timeout_s;
    // Vision: every image of the card has one size, so one encoder cost per image.
    if (card.traffic.images && card.model.vision) {
      const Result<card::ImageCost> c = card::ImageCostFor(*card.model.vision, card.traffic.images->width,
                                                           card.traffic.images->height);
      if (c.ok()) encoder_flops_per_image_ = card::EncoderFlops(*card.model.vision, c->patches);
    }
  }

  Result<SimulationResult> Run();

  // EngineSink.
  void OnScheduled(uint64_t, uint64_t tag, Nanos t) override {
    metrics::RequestRecord& r = recs_[tag];
    if (r.t_server_scheduled < 0) {
      r.t_server_scheduled = t;
      // With a front end the engine saw the request after the send: its queue starts there.
      if (to_engine_.delay() > 0) r.server_queue = t - engine_in_[tag];
    }
  }
  // The per-token hot path: touches only the slot's compact chunk vector (the record
  // itself is touched once per request), which keeps it in cache.
  void OnTokens(uint64_t, uint64_t tag, Nanos t, int32_t count, int32_t cached) override {
    std::vector<metrics::Chunk>& chunks = chunks_[tag];
    const Phase phase = phase_[tag];
    if (phase == Phase::kPrefill) {  // disaggregated: the decode replica streams the answer
      recs_[tag].t_prefill_done = t;
      recs_[tag].cached_tokens = cached;
      return;
    }
    if (chunks.empty()) {
      metrics::RequestRecord& r = recs_[tag];
      if (phase == Phase::kWhole) {
        r.t_prefill_done = t;
        r.cached_tokens = cached;
      }
      // Reserved at the first token, not at the send: a queued request holds no chunk
      // memory (a deep queue of long outputs would reserve gigabytes up front).
      chunks.reserve(static_cast<size_t>(std::max(1, r.output_tokens_target)));
    }
    chunks.push_back(metrics::Chunk{t + to_client_.delay(), count, false});  // the client sees it after the front end
  }
  void OnFinished(uint64_t, uint64_t tag, Nanos t, FinishReason reason) override {
    metrics::RequestRecord& r = recs_[tag];
    if (phase_[tag] == Phase::kPrefill && reason == FinishReason::kLength) {
      phase_[tag] = Phase::kTransfer;  // the prompt's KV leaves for the decode pool
      transfers_->Start(prefill_link_[static_cast<size_t>(r.replica)], t, r.prompt_tokens, static_cast<int32_t>(tag));
      return;
    }
    r.t_end = t + to_client_.delay();
    if (reason == FinishReason::kTimeout) {
      r.error = metrics::ErrorClass::kTimeout;
      r.error_message = "timed out (product.timeout or engine.request_timeout)";
      ++report_.timeouts;
    } else {
      r.finish_reason = "length";
    }
    Finalize(static_cast<int32_t>(tag));
  }

 private:
  Status Init();
  void AdvanceClock(Nanos t);
  void Arrive(const workload::RequestSpec& spec);
  void Send(const LoadClient::Send& send);
  void PumpClient() {
    while (std::optional<LoadClient::Send> s = client_->TakeSend(now_)) {
      if (s->arrived_now) Arrive(s->spec);
      Send(*s);
    }
  }
  void Dispatch(int32_t slot, const workload::RequestSpec& spec);
  void Submit(int replica, int32_t slot, const workload::RequestSpec& spec);
  // Disaggregated: the prompt's KV reached the decode pool; the decode replica takes over.
  void TransferArrived(int32_t slot);
  void Finalize(int32_t slot);
  // The client learns that a sent request ended (its slot frees, it leaves the system).
  // What the client learns when a request ends (carried through the front end's delay line).
  struct ClientEnd {
    uint64_t id = 0;
    bool rejected = false;
    bool ok = false;
    int64_t answer_tokens = 0;
  };
  void ClientEnded(Nanos t, const ClientEnd& e) {
    if (!e.rejected) --inflight_;
    client_->Ended(t, e.id, e.rejected, e.ok, e.answer_tokens);
  }
  void HandleFrontEnd(Nanos t);
  int32_t NewSlot();
  void Refresh(int i) {
    Replica& r = replicas_[static_cast<size_t>(i)];
    auto t = r.engine ? r.engine->NextEventTime() : std::nullopt;
    r.next_t = t ? *t : kNever;
  }
  enum class Start { kWarm, kCold };  // serving at once / after cluster.cold_start_s
  void StartReplica(Nanos now, Start start, Role role = Role::kUnified);
  void ReportDisaggregation();
  void DrainReplicas(int32_t k);
  void CheckDrained(int i);
  void RetireStats(const Engine& e);
  void HandleClusterEvents(Nanos t);
  void Sample(Nanos t);
  int32_t Count(ReplicaState s) const {
    int32_t n = 0;
    for (const Replica& r : replicas_) n += r.state == s;
    return n;
  }

  const card::WorkloadCard& card_;
  const TwinSetup& setup_;
  SimulationOptions opt_;
  EngineConfig ecfg_;  // the setup's, with the card's client timeout applied
  double encoder_flops_per_image_ = 0;  // traffic.images under model.vision (card/vision.h)
  Router router_;
  Router decode_router_;  // disaggregated: picks the decode replica (least outstanding)
  Autoscaler autoscaler_;
  // Consumer side of pipe_ (the worker thread's until pipe_->Finish()).
  std::unique_ptr<metrics::SummaryAccumulator> acc_;
  std::unique_ptr<metrics::RecordWriter> writer_;
  Status write_status_;
  std::vector<metrics::RequestRecord> kept_;
  std::unique_ptr<RecordBatcher> pipe_;

  std::optional<LoadClient> client_;  // set in Run
  std::vector<Replica> replicas_;
  std::vector<ReplicaView> views_;
  std::deque<Pending> router_queue_;
  std::vector<metrics::RequestRecord> recs_;
  std::vector<std::vector<metrics::Chunk>> chunks_;  // per slot, moved into the record at the end
  std::vector<int32_t> free_recs_;
  // The per-request front end (twin/front_end.h): requests on their way to the engine, and
  // ends on their way back to the client; when each slot's request reached the engine.
  DelayLine<Pending> to_engine_;
  DelayLine<ClientEnd> to_client_;  // ends on their way to the client
  std::vector<Nanos> engine_in_;
  std::vector<uint64_t> hashes_;
  // Disaggregation (empty/absent otherwise): each slot's phase, the spec kept for the
  // decode replica, the transfers in flight, and each replica's link index (prefill only).
  std::vector<Phase> phase_;
  std::vector<workload::RequestSpec> spec_;
  std::optional<KvTransfers> transfers_;
  std::vector<int> prefill_link_;

  Nanos now_ = 0;
  int64_t inflight_ = 0;          // requests in the system: waiting in the client or sent
  double area_ns_ = 0;            // integral of requests in system
  double billed_ns_ = 0;          // integral of billed replicas
  double serving_ns_ = 0;         // integral of serving replicas
  double sum_w_ns_ = 0;           // sum of time in system of finished requests
  int64_t finished_ = 0;
  double sum_in_ = 0, sum_out_ = 0;
  Nanos next_sample_ = 0, sample_dt_ = kNanosPerSecond;
  Nanos next_tick_ = kNever;
  Nanos horizon_ = 0;
  EngineStats retired_;           // stats of replicas already stopped
  TwinReport report_;
};

int32_t Driver::NewSlot() {
  if (!free_recs_.empty()) {
    const int32_t s = free_recs_.back();
    free_recs_.pop_back();
    return s;
  }
  recs_.emplace_back();
  chunks_.emplace_back();
  engine_in_.emplace_back(-1);
  phase_.emplace_back(Phase::kWhole);
  if (transfers_) spec_.emplace_back();
  return static_cast<int32_t>(recs_.size() - 1);
}

void Driver::AdvanceClock(Nanos t) {
  if (t <= now_) return;
  const double dt = static_cast<double>(t - now_);
  area_ns_ += static_cast<double>(inflight_) * dt;
  int32_t billed = 0, serving = 0;
  for (const Replica& r : replicas_) {
    billed += r.state != ReplicaState::kStopped;
    serving += r.state == ReplicaState::kServing;
  }
  billed_ns_ += billed * dt;
  serving_ns_ += serving * dt;
  now_ = t;
}

void Driver::Finalize(int32_t slot) {
  metrics::RequestRecord& r = recs_[static_cast<size_t>(slot)];
  r.chunks.swap(chunks_[static_cast<size_t>(slot)]);
  // Embeddings: prefill only. The engine's one output step is the end of the prefill (its
  // t_prefill_done); the client gets the vectors at t_end, no token stream.
  if (r.items > 0) r.chunks.clear();
  for (const metrics::Chunk& c : r.chunks) r.completion_tokens += c.tokens;
  // A reasoning model (engine.reasoning_tokens): the answer's first tokens are reasoning,
  // as serve streams them; its usage reports how many were generated.
  if (const int32_t thinking = ecfg_.ReasoningTokensFor(r.output_tokens_target); thinking > 0) {
    r.reasoning_tokens = metrics::MarkReasoning(r.chunks, thinking);
  }
  if (r.t_end < 0) r.t_end = now_;
  report_.makespan_s = std::max(report_.makespan_s, NanosToSeconds(r.t_end));
  if (r.error == metrics::ErrorClass::kNone) r.http_status = 200;
  const bool rejected = r.error == metrics::ErrorClass::kRejected;
  if (!rejected) {
    sum_w_ns_ += static_cast<double>(r.t_end - r.t_sched);
    ++finished_;
  }
  if (r.t_send < 0) {
    if (!rejected) --inflight_;
  } else {
    const ClientEnd e{r.id, rejected, r.ok(), r.completion_tokens};
    if (to_client_.delay() > 0 && r.error != metrics::ErrorClass::kIncomplete) {
      to_client_.Push(now_, e);  // the client sees the end after the front end
    } else {
      ClientEnded(now_, e);
    }
  }
  phase_[static_cast<size_t>(slot)] = Phase::kWhole;
  pipe_->Push(r);  // r comes back reset, possibly with a recycled chunk vector
  chunks_[static_cast<size_t>(slot)].swap(r.chunks);  // reuse capacity (<= kKeepChunks) next time
  free_recs_.push_back(slot);
}

// A request enters the system (Little's L counts it from t_sched, waiting in the client
// included).
void Driver::Arrive(const workload::RequestSpec& spec) {
  ++report_.requests;
  sum_in_ += spec.input_tokens;
  sum_out_ += spec.output_tokens;
  ++inflight_;
  // Bounded memory: a load far beyond capacity stops arriving instead of queueing for ever.
  if (inflight_ >= opt_.max_in_system && report_.arrivals_stopped_s < 0) {
    client_->StopArrivals();
    report_.arrivals_stopped_s = NanosToSeconds(now_);
  }
}

void Driver::Send(const LoadClient::Send& send) {
  const workload::RequestSpec& spec = send.spec;
  const int32_t slot = NewSlot();
  metrics::RequestRecord& r = recs_[static_cast<size_t>(slot)];
  r.id = spec.index;
  r.tenant = spec.tenant;
  r.session = spec.session;
  r.turn = spec.turn;
  r.turns = spec.turns;
  r.branch = spec.branch;
  r.branches = spec.branches;
  r.calls = spec.calls;
  r.t_sched = send.t_sched;
  r.t_send = r.t_first_byte = now_;
  r.input_tokens_target = spec.input_tokens;
  r.output_tokens_target = spec.output_tokens;
  r.items = static_cast<int32_t>(spec.item_tokens.size());
  r.images = spec.images;
  r.image_tokens = spec.image_tokens;
  r.prompt_tokens = spec.input_tokens + spec.image_tokens;  // image tokens are prompt tokens (vLLM's usage)
  r.completion_tokens = 0;
  r.token_source = metrics::TokenSource::kSimulated;
  if (to_engine_.delay() > 0) {
    to_engine_.Push(now_, Pending{slot, spec});  // preprocess and the network first
    return;
  }
  Dispatch(slot, spec);
}

void Driver::HandleFrontEnd(Nanos t) {
  to_engine_.PopDue(t, [this](Nanos, Pending p) { Dispatch(p.slot, p.spec); });
  to_client_.PopDue(t, [this](Nanos due, const ClientEnd& e) { ClientEnded(due, e); });
}

void Driver::Dispatch(int32_t slot, const workload::RequestSpec& spec) {
  views_.resize(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {  // new requests go to the prefill pool when there is one
    views_[i].accepting = replicas_[i].state == ReplicaState::kServing && replicas_[i].role != Role::kDecode;
    views_[i].outstanding = views_[i].accepting ? replicas_[i].engine->Outstanding() : 0;
  }
  uint64_t key = 0;
  if (spec.prefix_id >= 0) {
    const uint64_t tenant = ecfg_.prefix_cache_shared ? 0 : static_cast<uint64_t>(spec.tenant) + 1;
    key = (tenant << 32) ^ (static_cast<uint64_t>(spec.prefix_id) + 1);
  } else if (!spec.block_ids.empty()) {
    // A trace request: routed by its first block, so a shared prefix meets its cache.
    const uint64_t tenant = ecfg_.prefix_cache_shared ? 0 : static_cast<uint64_t>(spec.tenant) + 1;
    key = ((tenant << 32) ^ spec.block_ids.front()) | 1;
  }
  const int i = router_.Pick(views_, key);
  if (i < 0) {
    router_queue_.push_back(Pending{slot, spec});
    ScaleDecision d = autoscaler_.OnColdRequest(now_, Count(ReplicaState::kServing), Count(ReplicaState::kStarting));
    for (int32_t k = 0; k < d.start; ++k) StartReplica(now_, Start::kCold);
    return;
  }
  Submit(i, slot, spec);
}

void Driver::Submit(int i, int32_t slot, const workload::RequestSpec& spec) {
  Replica& rep = replicas_[static_cast<size_t>(i)];
  const EngineConfig& ec = ecfg_;
  Phase& phase = phase_[static_cast<size_t>(slot)];
  if (rep.role == Role::kPrefill) {
    phase = Phase::kPrefill;
    spec_[static_cast<size_t>(slot)] = spec;  // for the decode replica (capacity is reused)
  }
  if (!spec.block_ids.empty()) {
    TraceBlockHashes(spec.tenant, spec.block_ids, spec.block_tokens, spec.input_tokens, ec.block_size,
                     ec.prefix_cache_shared, hashes_);
  } else {
    PrefixBlockHashes(spec.tenant, spec.prefix_id, std::min(spec.prefix_tokens, spec.input_tokens),
                      ec.block_size, ec.prefix_cache_shared, hashes_);
  }
  EngineRequest req;
  req.id = spec.index;
  req.tag = static_cast<uint64_t>(slot);
  req.prompt_tokens = std::max(1, spec.input_tokens) + spec.image_tokens;
  req.output_tokens = phase == Phase::kPrefill ? 1 : std::max(1, spec.output_tokens);  // prefill: up to the first token
  if (phase == Phase::kDecode) req.preloaded_tokens = req.prompt_tokens;  // the transferred KV
  if (spec.image_tokens > 0 && phase != Phase::kDecode) {
    // The images follow the text (bench sends the text part first). Their token blocks are
    // never hashed: each request's images are its own (bench varies a pixel per image), so
    // they never hit the prefix cache.
    req.image_begin = req.prompt_tokens - spec.image_tokens;
    req.image_end = req.prompt_tokens;
    req.encoder_flops = encoder_flops_per_image_ * spec.images;
  }
  req.tenant = spec.tenant;
  req.block_hashes = hashes_;
  metrics::RequestRecord& r = recs_[static_cast<size_t>(slot)];
  r.replica = i;  // disaggregated: the prefill replica, then the decode replica that streams the answer
  if (phase != Phase::kDecode) engine_in_[static_cast<size_t>(slot)] = now_;
  const Admission a = rep.engine->Submit(req, now_);
  if (!a.ok()) {
    r.error = metrics::ErrorClass::kRejected;
    const bool overload = a.reason == RejectReason::kWaitingRequestsFull ||
                          a.reason == RejectReason::kWaitingTokensFull;
    r.http_status = overload ? 429 : 400;
    r.error_message = std::string(RejectReasonName(a.reason));
    r.t_end = now_ + to_client_.delay();
    ++report_.rejections;
    ++report_.rejections_by_reason[r.error_message];
    --inflight_;  // never entered the system
    Finalize(slot);
    return;
  }
  Refresh(i);
}

void Driver::TransferArrived(int32_t slot) {
  phase_[static_cast<size_t>(slot)] = Phase::kDecode;
  views_.resize(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    views_[i].accepting = replicas_[i].state == ReplicaState::kServing && replicas_[i].role == Role::kDecode;
    views_[i].outstanding = views_[i].accepting ? replicas_[i].engine->Outstanding() : 0;
  }
  const int i = decode_router_.Pick(views_, 0);  // the pools are fixed: a decode replica always serves
  Submit(i, slot, spec_[static_cast<size_t>(slot)]);
}

void Driver::RetireStats(const Engine& e) { AddCounters(e.Stats(), &retired_); }

void Driver::StartReplica(Nanos now, Start start, Role role) {
  const bool warm = start == Start::kWarm;
  size_t i = 0;
  while (i < replicas_.size() && replicas_[i].state != ReplicaState::kStopped) ++i;
  if (i == replicas_.size()) replicas_.emplace_back();
  Replica& r = replicas_[i];
  if (r.engine) RetireStats(*r.engine);
  auto e = Engine::Create(ecfg_, setup_.cost);
  r.engine = std::move(e).value();  // the config was validated in Init
  r.role = role;
  r.state = warm ? ReplicaState::kServing : ReplicaState::kStarting;
  r.ready_at = warm ? now : now + SecondsToNanos(setup_.settings.cluster.cold_start_s);
  r.next_t = kNever;
  if (!warm) ++report_.scale_events;
}

void Driver::DrainReplicas(int32_t k) {
  for (int32_t n = 0; n < k; ++n) {
    int best = -1;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      if (replicas_[i].state != ReplicaState::kServing) continue;
      if (best < 0 || replicas_[i].engine->Outstanding() <
                          replicas_[static_cast<size_t>(best)].engine->Outstanding()) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) return;
    replicas_[static_cast<size_t>(best)].state = ReplicaState::kDraining;
    ++report_.scale_events;
    CheckDrained(best);
  }
}

void Driver::CheckDrained(int i) {
  Replica& r = replicas_[static_cast<size_t>(i)];
  if (r.state == ReplicaState::kDraining && r.engine->Outstanding() == 0) {
    r.state = ReplicaState::kStopped;
    r.next_t = kNever;
  }
}

void Driver::Sample(Nanos t) {
  ClusterSample s;
  s.t_s = NanosToSeconds(t);
  double kv = 0;
  for (const Replica& r : replicas_) {
    if (r.state == ReplicaState::kStarting) ++s.starting;
    if (r.state == ReplicaState::kServing || r.state == ReplicaState::kDraining) {
      const EngineStats st = r.engine->Stats();
      s.waiting += st.waiting;
      s.running += st.running;
      if (r.state == ReplicaState::kServing) {
        ++s.serving;
        kv += st.kv_usage;
      }
    }
  }
  s.waiting += static_cast<int64_t>(router_queue_.size() + client_->waiting().size());
  s.kv_usage = s.serving ? kv / s.serving : 0;
  report_.kv_usage_peak = std::max(report_.kv_usage_peak, s.kv_usage);
  report_.over_time.push_back(s);
}

void Driver::HandleClusterEvents(Nanos t) {
  bool became_ready = false;
  for (Replica& r : replicas_) {
    if (r.state == ReplicaState::kStarting && r.ready_at <= t) {
      r.state = ReplicaState::kServing;
      became_ready = true;
    }
  }
  if (became_ready) {
    std::deque<Pending> queued;
    queued.swap(router_queue_);
    for (const Pending& p : queued) Dispatch(p.slot, p.spec);
  }
  if (next_tick_ <= t) {
    next_tick_ = t + SecondsToNanos(setup_.settings.cluster.autoscale_interval_s);
    double metric = 0;
    for (const Replica& r : replicas_) {
      if (r.state != ReplicaState::kServing) continue;
      switch (setup_.settings.cluster.autoscale) {
        case AutoscaleMetric::kQueueDepth: metric += static_cast<double>(r.engine->WaitingCount()); break;
        case AutoscaleMetric::kKvUtilisation: metric += r.engine->KvUsage(); break;
        case AutoscaleMetric::kInFlight: metric += static_cast<double>(r.engine->Outstanding()); break;
        case AutoscaleMetric::kNone: break;
      }
    }
    if (setup_.settings.cluster.autoscale != AutoscaleMetric::kKvUtilisation) {
      metric += static_cast<double>(router_queue_.size());
    }
    ScaleDecision d = autoscaler_.Decide(t, metric, Count(ReplicaState::kServing), Count(ReplicaState::kStarting));
    for (int32_t k = 0; k < d.start; ++k) StartReplica(t, Start::kCold);
    DrainReplicas(d.drain);
  }
  if (next_sample_ <= t) {
    Sample(t);
    next_sample_ = t + sample_dt_;
  }
}

Status Driver::Init() {
  INFERENG_RETURN_IF_ERROR(ValidateEngineConfig(ecfg_));
  INFERENG_RETURN_IF_ERROR(ValidateClusterConfig(setup_.settings.cluster));
  if (!setup_.cost) return Status::InvalidArgument("twin setup has no cost model");
  {
    auto probe = Engine::Create(ecfg_, setup_.cost);
    if (!probe.ok()) return probe.status();
  }
  const ClusterConfig& cc = setup_.settings.cluster;
  if (cc.Disaggregated()) {
    if (ecfg_.scheduler == EngineScheduler::kLlamaCpp) {
      return Status::InvalidArgument("cluster.prefill_replicas: disaggregation is modelled for the paged engines "
                                     "(engine.scheduler=vllm or trtllm), not llamacpp");
    }
    if (!(setup_.kv_bytes_per_token > 0)) {
      return Status::InvalidArgument("cluster.prefill_replicas: pricing the KV transfer needs the model's KV bytes "
                                     "per token (a card with model.architecture)");
    }
    transfers_.emplace(cc.prefill_replicas,
                       KvLink{.bytes_per_token = setup_.kv_bytes_per_token,
                              .bytes_per_s = cc.kv_transfer_gb_s * 1e9 * setup_.accelerators_per_replica,
                              .latency = SecondsToNanos(cc.kv_transfer_latency_s)});
    for (int32_t i = 0; i < cc.replicas; ++i) {
      const bool prefill = i < cc.prefill_replicas;
      StartReplica(0, Start::kWarm, prefill ? Role::kPrefill : Role::kDecode);
      prefill_link_.push_back(prefill ? i : -1);
    }
    spec_.resize(recs_.size());
    return Status::Ok();
  }
  int32_t initial = cc.replicas;
  if (cc.autoscale != AutoscaleMetric::kNone) initial = std::clamp(initial, cc.min_replicas, cc.max_replicas);
  for (int32_t i = 0; i < initial; ++i) StartReplica(0, Start::kWarm);
  if (cc.autoscale != AutoscaleMetric::kNone) next_tick_ = SecondsToNanos(cc.autoscale_interval_s);
  return Status::Ok();
}


Result<SimulationResult> Driver::Run() {
  const auto wall_start = std::chrono::steady_clock::now();
  INFERENG_RETURN_IF_ERROR(Init());
  const double duration_s = opt_.duration_s.value_or(card_.bench.duration_s);
  if (!(duration_s > 0)) return Status::InvalidArgument("--duration must be > 0");
  horizon_ = SecondsToNanos(duration_s);
  sample_dt_ = std::max<Nanos>(kNanosPerSecond, horizon_ / 240);

  // The load, by the rule bench uses (closed loop / open loop / open loop with a cap).
  if (!(opt_.ramp_s >= 0)) return Status::InvalidArgument("--ramp: must be >= 0");
  INFERENG_ASSIGN_OR_RETURN(workload::ClientLoad load,
                            workload::ResolveClientLoad(card_, {.rate_rps = opt_.rate_rps,
                                                                .concurrency = opt_.concurrency,
                                                                .rate_scale = opt_.rate_scale,
                                                                .ramp = SecondsToNanos(opt_.ramp_s)}));
  workload::GeneratorOptions go;
  go.seed = opt_.seed.value_or(card_.bench.seed);
  go.closed_loop = load.closed_loop;
  go.rate_scale = load.rate_scale;
  go.horizon = horizon_;
  go.max_requests = opt_.max_requests;
  auto gen_r = workload::SessionPlanner::FromCard(card_, go);
  if (!gen_r.ok()) return gen_r.status();
  client_.emplace(std::move(gen_r).value(), LoadClientOptions{.load = load, .horizon = horizon_});
  const double offered_rps = client_->MeanRate();
  if (!load.closed_loop && !(offered_rps <= card::kMaxRateRps)) {
    return Status::InvalidArgument("the offered rate " + units::FormatNumber(offered_rps) +
                                   " requests/s exceeds 1e6, the card's limit (--rate-scale multiplies the card's rate)");
  }
  report_.load_mode = load.ModeName();
  report_.load_arrival = load.closed_loop ? "closed" : workload::ArrivalName(card_.traffic.arrival);
  report_.load_rate_rps = offered_rps;
  report_.load_concurrency = load.concurrency;

  metrics::AccumulatorOptions ao;
  const bool exact = opt_.keep_records || opt_.exact_percentiles;
  ao.mode = exact ? metrics::AccumulatorOptions::Mode::kExact : metrics::AccumulatorOptions::Mode::kHistogram;
  ao.source = "simulated";
  ao.t0 = 0;
  if (opt_.warmup_s && !(*opt_.warmup_s >= 0 && *opt_.warmup_s < duration_s)) {
    return Status::InvalidArgument("--warmup " + units::FormatNumber(*opt_.warmup_s) +
                                   " s must be >= 0 and shorter than the duration (" + units::FormatNumber(duration_s) + " s)");
  }
  ao.warmup = SecondsToNanos(opt_.warmup_s.value_or(std::min(card_.bench.warmup_s, duration_s / 10)));
  ao.slo = card_.slo;
  ao.session_tasks = card_.traffic.sessions && card_.traffic.sessions->task;
  ao.open_loop = !load.closed_loop;  // as bench: closed-loop SLOs on TTFT/E2E from t_send
  ao.timeseries_bucket_s = std::max(1.0, duration_s / 300);
  acc_ = std::make_unique<metrics::SummaryAccumulator>(ao);
  if (!opt_.records_path.empty()) {
    auto w = metrics::RecordWriter::Open(opt_.records_path, 0);
    if (!w.ok()) return w.status();
    writer_ = std::move(w).value();
  }
  pipe_ = std::make_unique<RecordBatcher>(
      [this](const metrics::RequestRecord& r) {
        acc_->Add(r);
        if (writer_ && write_status_.ok()) write_status_ = writer_->Write(r);
        if (opt_.keep_records) kept_.push_back(r);
      },
      opt_.summary_thread);

  LoadClient& client = *client_;
  PumpClient();  // closed loop: the first users send at t = 0
  const Nanos drain = SecondsToNanos(opt_.drain_s);
  for (;;) {
    const Nanos t_arr = client.NextWake();
    if (client.DrainFrom(now_) != kNever && inflight_ == 0 && router_queue_.empty()) break;
    Nanos t_eng = kNever;
    for (const Replica& r : replicas_) t_eng = std::min(t_eng, r.next_t);
    const Nanos t_fe = std::min(to_engine_.NextDue(), to_client_.NextDue());
    const Nanos t_xfer = transfers_ ? transfers_->NextDue() : kNever;
    Nanos t_cluster = std::min(next_sample_, next_tick_);
    for (const Replica& r : replicas_) {
      if (r.state == ReplicaState::kStarting) t_cluster = std::min(t_cluster, r.ready_at);
    }
    const Nanos t = std::min({t_arr, t_eng, t_cluster, t_fe, t_xfer});
    if (t == kNever) break;  // nothing left to happen (cannot occur while samples tick)
    const Nanos drain_from = client.DrainFrom(t);
    if (drain_from != kNever && t > drain_from + drain) break;
    AdvanceClock(t);
    ++report_.events;
    if (t_arr == t) {
      if (const workload::RequestSpec* arrived = client.Wake(t)) Arrive(*arrived);
      PumpClient();
      continue;
    }
    if (t_fe == t) {
      HandleFrontEnd(t);
      PumpClient();  // an end reached the client: a slot freed
      continue;
    }
    if (t_cluster == t) {
      HandleClusterEvents(t);
      PumpClient();  // a rejection from the router queue frees a slot
      continue;
    }
    if (t_xfer == t) {
      transfers_->PopDue(t, [this](Nanos, int32_t slot) { TransferArrived(slot); });
      PumpClient();  // a rejection at the decode replica frees a slot
      continue;
    }
    for (size_t i = 0; i < replicas_.size(); ++i) {
      Replica& r = replicas_[i];
      if (r.next_t != t) continue;
      r.engine->AdvanceTo(t, *this);
      Refresh(static_cast<int>(i));
      if (r.state == ReplicaState::kDraining) CheckDrained(static_cast<int>(i));
    }
    PumpClient();  // finished requests freed slots: waiting requests or users send now
  }
  if (!client.status().ok()) return client.status();
  // Requests still waiting in the client at the drain limit (nothing was sent for
  // drain_s) never left it.
  for (const LoadClient::Send& w : client.waiting()) {
    const int32_t slot = NewSlot();
    metrics::RequestRecord& r = recs_[static_cast<size_t>(slot)];
    r.id = w.spec.index;
    r.tenant = w.spec.tenant;
    r.session = w.spec.session;
    r.turn = w.spec.turn;
    r.turns = w.spec.turns;
    r.branch = w.spec.branch;
    r.branches = w.spec.branches;
    r.calls = w.spec.calls;
    r.t_sched = w.t_sched;
    r.input_tokens_target = w.spec.input_tokens;
    r.output_tokens_target = w.spec.output_tokens;
    r.items = static_cast<int32_t>(w.spec.item_tokens.size());
    r.images = w.spec.images;
    r.image_tokens = w.spec.image_tokens;
    r.token_source = metrics::TokenSource::kSimulated;
    r.error = metrics::ErrorClass::kIncomplete;
    r.error_message = "never sent: still waiting for a concurrency slot when the simulation stopped";
    r.t_end = now_;
    ++report_.incomplete;
    Finalize(slot);
  }
  // Whatever is still in flight at the drain limit never finished.
  for (size_t slot = 0; slot < recs_.size(); ++slot) {
    metrics::RequestRecord& r = recs_[slot];
    if (r.t_sched < 0) continue;  // a free slot (Finalize resets records)
    r.error = metrics::ErrorClass::kIncomplete;
    r.error_message = "still in flight when the simulation stopped (drain limit)";
    r.t_end = now_;
    ++report_.incomplete;
    Finalize(static_cast<int32_t>(slot));
  }
  pipe_->Finish();  // from here on the accumulator and writer are ours again
  if (writer_) {
    Status c = writer_->Close();
    if (write_status_.ok()) write_status_ = c;
  }
  INFERENG_RETURN_IF_ERROR(write_status_);

  // Aggregate engine statistics.
  EngineStats tot = retired_;
  for (const Replica& r : replicas_) {
    if (!r.engine) continue;
    AddCounters(r.engine->Stats(), &tot);
  }
  SimulationResult result;
  if (report_.arrivals_stopped_s >= 0) acc_->SetPartial(true);
  result.summary = acc_->Finish();
  TwinReport& t = report_;
  t.description = setup_.description;
  t.front_end = setup_.front_end;
  t.simulated_s = NanosToSeconds(now_);
  t.steps = tot.steps;
  t.events += tot.steps;
  t.prefix_hit_tokens = tot.prefix_hits_tokens;
  t.prefix_hit_rate = tot.prefix_queries_tokens ? static_cast<double>(tot.prefix_hits_tokens) / tot.prefix_queries_tokens : 0;
  t.prefill_tokens_computed = tot.prefill_tokens_computed;
  t.preemptions = tot.preemptions;
  t.spec_acceptance_observed = tot.spec_draft_tokens ? static_cast<double>(tot.spec_accepted_tokens) / tot.spec_draft_tokens : 0;
  t.kv_usage_mean = serving_ns_ > 0 ? tot.kv_usage_integral_s / (serving_ns_ / 1e9) : 0;
  t.replicas_mean = now_ > 0 ? billed_ns_ / static_cast<double>(now_) : static_cast<double>(replicas_.size());
  t.replicas_max = static_cast<int32_t>(replicas_.size());
  t.price_per_replica_hour = setup_.PricePerReplicaHour();
  t.cost_usd = billed_ns_ / 1e9 / 3600 * t.price_per_replica_hour;
  t.cost_per_hour_usd = t.replicas_mean * t.price_per_replica_hour;
  const int64_t out_tokens = result.summary.counts.output_tokens;
  const int64_t ok = result.summary.counts.succeeded;
  t.cost_per_1m_output_tokens_usd = out_tokens > 0 ? t.cost_usd / static_cast<double>(out_tokens) * 1e6 : 0;
  t.cost_per_successful_request_usd = ok > 0 ? t.cost_usd / static_cast<double>(ok) : 0;
  t.little_l = now_ > 0 ? area_ns_ / static_cast<double>(now_) : 0;
  t.little_lambda = now_ > 0 ? static_cast<double>(finished_) / NanosToSeconds(now_) : 0;
  t.little_w_s = finished_ > 0 ? sum_w_ns_ / 1e9 / static_cast<double>(finished_) : 0;
  UtilisationInputs si;
  si.mean_input_tokens = report_.requests ? sum_in_ / static_cast<double>(report_.requests) : 0;
  si.mean_output_tokens = report_.requests ? sum_out_ / static_cast<double>(report_.requests) : 0;
  si.serving_replicas_mean = now_ > 0 ? serving_ns_ / static_cast<double>(now_) : 1;
  si.arrival_s = NanosToSeconds(client.last_arrival());
  // A closed loop offers what it achieves: requests sent over the sending period.
  si.offered_rps = !load.closed_loop           ? offered_rps
                   : client.last_arrival() > 0 ? static_cast<double>(report_.requests) / si.arrival_s
                                               : 0;
  report_.client_waiting_peak = client.waiting_peak();
  report_.mean_input_tokens = si.mean_input_tokens;
  report_.mean_output_tokens = si.mean_output_tokens;
  if (transfers_) {
    si.prefill_replicas = setup_.settings.cluster.prefill_replicas;
    si.decode_replicas = setup_.settings.cluster.replicas - si.prefill_replicas;
    ReportDisaggregation();
  }
  EstimateUtilisation(ecfg_, *setup_.cost, si, report_);
  if (t.arrivals_stopped_s >= 0) {
    t.queue_growing = t.near_saturation = true;
    t.saturation_note = "arrivals stopped at " + units::FormatNumber(t.arrivals_stopped_s) + " s: " +
                        std::to_string(opt_.max_in_system) +
                        " requests were in the system (the most the twin holds); the offered load far exceeds "
                        "capacity. The results cover the arrivals until then (partial)" +
                        (t.saturation_note.empty() ? std::string() : "; " + t.saturation_note);
  }
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  result.twin = std::move(report_);
  result.records = std::move(kept_);
  return result;
}

void Driver::ReportDisaggregation() {
  const ClusterConfig& cc = setup_.settings.cluster;
  DisaggregationReport d;
  d.prefill_replicas = cc.prefill_replicas;
  d.decode_replicas = cc.replicas - cc.prefill_replicas;
  d.kv_bytes_per_token = setup_.kv_bytes_per_token;
  d.link_gb_s = cc.kv_transfer_gb_s * setup_.accelerators_per_replica;
  d.link_latency_ms = cc.kv_transfer_latency_s * 1e3;
  d.transfers = transfers_->transfers();
  d.transferred_gb = transfers_->bytes() / 1e9;
  d.transfer_ms_mean = transfers_->transfer_ms().mean();
  d.transfer_ms_p50 = transfers_->transfer_ms().Percentile(50);
  d.transfer_ms_p99 = transfers_->transfer_ms().Percentile(99);
  d.link_wait_ms_mean = transfers_->wait_ms().mean();
  d.link_wait_ms_p99 = transfers_->wait_ms().Percentile(99);
  double busy[2] = {0, 0};
  for (const Replica& r : replicas_) busy[r.role == Role::kDecode] += r.engine->Stats().busy_s;
  const double span_s = std::max(1e-9, NanosToSeconds(now_));
  d.prefill_busy = busy[0] / (d.prefill_replicas * span_s);
  d.decode_busy = busy[1] / (d.decode_replicas * span_s);
  report_.disaggregation = d;
}

}  // namespace

Result<SimulationResult> RunSimulationPass(const card::WorkloadCard& card, const TwinSetup& setup,
                                           const SimulationOptions& options) {
  Driver d(card, setup, options);
  return d.Run();
}

}  // namespace infereng::twin
