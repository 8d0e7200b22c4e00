// The virtual-time driver: one event loop over client events (arrivals, closed-loop ramp
// steps), replica step ends and cluster events (cold starts, autoscaler ticks, samples);
// after every event it makes the sends the client (load_client.h) allows. Per event it
// does O(replicas) work; per-request state lives in a slot pool of RequestRecords whose
// chunk vectors keep their capacity, so steady state allocates nothing per token. The
// Driver's declaration is in simulation_driver.h; its cluster half in simulation_cluster.cc.
#include "twin/simulation.h"
#include "twin/simulation_pass.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "card/limits.h"
#include "core/units.h"
#include "metrics/summary_json.h"
#include "twin/simulation_driver.h"
#include "twin/utilisation.h"
#include "workload/generator.h"

namespace infereng::twin {
namespace sim_detail {

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
  // A non-streamed answer (product.streaming: false) reaches the client whole, after its
  // last token: one output event carrying every token (TTFT = E2E, no ITL), as bench
  // records it (client/whole_answer.h).
  if (!card_.product.streaming && r.chunks.size() > 1) {
    const metrics::Chunk whole{r.chunks.back().t, static_cast<int32_t>(std::min<int64_t>(r.completion_tokens, INT32_MAX)), false};
    r.chunks.assign(1, whole);
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
  r.query_tokens = spec.query_tokens;
  r.images = spec.images;
  r.image_tokens = spec.image_tokens;
  r.audio_ms = spec.audio_ms;
  r.audio_tokens = spec.audio_tokens;
  // Image and audio tokens are prompt tokens (vLLM's usage; serve's transcription usage).
  r.prompt_tokens = spec.input_tokens + spec.image_tokens + spec.audio_tokens;
  r.completion_tokens = 0;
  r.token_source = metrics::TokenSource::kSimulated;
  if (front_in_) {  // preprocess, the network and any jitter first
    to_engine_.PushAt(now_ + setup_.front_end.InboundFor(seed_, spec.index), Pending{slot, spec});
    return;
  }
  Dispatch(slot, spec);
}

void Driver::HandleFrontEnd(Nanos t) {
  to_engine_.PopDue(t, [this](Nanos, Pending p) { Dispatch(p.slot, p.spec); });
  to_client_.PopDue(t, [this](Nanos due, const ClientEnd& e) { ClientEnded(due, e); });
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
  seed_ = go.seed;
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
  ao.session_tasks = card_.SessionsAreTasks();
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
    r.query_tokens = w.spec.query_tokens;
    r.images = w.spec.images;
    r.image_tokens = w.spec.image_tokens;
    r.audio_ms = w.spec.audio_ms;
    r.audio_tokens = w.spec.audio_tokens;
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
  t.cost_caveats = setup_.cost_caveats;
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

}  // namespace sim_detail

Result<SimulationResult> RunSimulationPass(const card::WorkloadCard& card, const TwinSetup& setup,
                                           const SimulationOptions& options) {
  sim_detail::Driver d(card, setup, options);
  return d.Run();
}

}  // namespace infereng::twin
