// The Driver's cluster (simulation_driver.h): replicas and their life (warm, cold start,
// draining), routing, autoscaling, cluster samples, and a disaggregated cluster's prefill and
// decode pools with their KV transfers (kv_transfer.h; docs/modeling.md).
#include "twin/simulation_driver.h"

#include "core/units.h"

namespace infereng::twin::sim_detail {

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

void Driver::FillViews(bool decode_pool) {
  views_.resize(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const bool in_pool = decode_pool ? replicas_[i].role == Role::kDecode : replicas_[i].role != Role::kDecode;
    views_[i].accepting = replicas_[i].state == ReplicaState::kServing && in_pool;
    views_[i].outstanding = views_[i].accepting ? replicas_[i].engine->Outstanding() : 0;
  }
}

void Driver::Dispatch(int32_t slot, const workload::RequestSpec& spec) {
  FillViews(/*decode_pool=*/false);  // new requests go to the prefill pool when there is one
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
  // Embeddings are prefill only: they end on the prefill replica, nothing to transfer.
  if (rep.role == Role::kPrefill && spec.item_tokens.empty()) {
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
  req.prompt_tokens = std::max(1, spec.input_tokens) + spec.image_tokens + spec.audio_tokens;
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
  if (spec.audio_tokens > 0 && phase != Phase::kDecode) {
    // A transcription's audio tokens follow the decoder's start tokens, priced by the
    // audio encoder as images are (serve does the same); never hashed: each clip is its own.
    req.image_begin = req.prompt_tokens - spec.audio_tokens;
    req.image_end = req.prompt_tokens;
    req.encoder_flops = card_.model.audio ? card::AudioEncoderFlops(*card_.model.audio,
                                                card::AudioCostFor(*card_.model.audio, spec.audio_ms).encoder_positions)
                                          : 0;
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
  FillViews(/*decode_pool=*/true);
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

}  // namespace infereng::twin::sim_detail
