// The simulation's Driver (twin/simulation.cc): the one virtual-time driver of a run, its
// per-request slot pool and its cluster. Internal to the twin: simulation.cc owns the event
// loop and the requests' life (send, tokens, end, the summary); simulation_cluster.cc owns the
// cluster (replicas, routing, autoscaling, prefill/decode pools and their KV transfers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "card/card.h"
#include "card/vision.h"
#include "metrics/reasoning.h"
#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "twin/autoscaler.h"
#include "twin/delay_line.h"
#include "twin/engine.h"
#include "twin/kv_transfer.h"
#include "twin/load_client.h"
#include "twin/record_batcher.h"
#include "twin/router.h"
#include "twin/setup.h"
#include "twin/simulation.h"
#include "workload/request_spec.h"

namespace infereng::twin::sim_detail {


// The cluster-wide counters the summary reports, summed over replicas (live and retired).
void AddCounters(const EngineStats& s, EngineStats* into);

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
        to_engine_(setup.front_end.Inbound()), to_client_(setup.front_end.Outbound()),
        front_in_(setup.front_end.Inbound() > 0 || setup.front_end.jitter_s > 0) {
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
      if (front_in_) r.server_queue = t - engine_in_[tag];
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
  // The router's view of the serving replicas that take new requests (decode_pool false: all
  // but a disaggregated cluster's decode pool) or of the decode pool.
  void FillViews(bool decode_pool);
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
  bool front_in_;                   // requests take a way in (a delay or a jitter)
  uint64_t seed_ = 0;               // the run's seed: the front end's jitter draws
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

}  // namespace infereng::twin::sim_detail
