#include "serve/twin_engine.h"

#include <algorithm>

#include "catalog/catalog.h"

namespace infereng::serve {

namespace {

// The twin's events to the server: scheduling at once (the server's engine timings), tokens
// and finishes through the front end's way back (straight to the sink when it has none).
class SinkAdapter final : public twin::EngineSink {
 public:
  SinkAdapter(serve::EngineSink& out, twin::DelayLine<TwinEngine::Out>& back) : out_(out), back_(back) {}
  void OnScheduled(uint64_t id, uint64_t, Nanos t) override { out_.OnScheduled(id, t); }
  void OnTokens(uint64_t id, uint64_t, Nanos t, int32_t count, int32_t cached) override {
    if (back_.delay() == 0) return out_.OnTokens(id, t, count, cached);
    back_.Push(t, TwinEngine::Out{id, count, cached, EngineFinish::kLength});
  }
  void OnFinished(uint64_t id, uint64_t, Nanos t, twin::FinishReason reason) override {
    const EngineFinish f = reason == twin::FinishReason::kTimeout ? EngineFinish::kTimeout : EngineFinish::kLength;
    if (back_.delay() == 0) return out_.OnFinished(id, t, f);
    back_.Push(t, TwinEngine::Out{id, 0, 0, f});
  }

 private:
  serve::EngineSink& out_;
  twin::DelayLine<TwinEngine::Out>& back_;
};

twin::EngineRequest ToTwin(const EngineRequest& req, int32_t block_size) {
  twin::EngineRequest tr;
  tr.id = req.id;
  tr.tag = req.id;
  tr.prompt_tokens = req.prompt_tokens;
  tr.output_tokens = req.output_tokens;
  tr.image_begin = req.image_begin;
  tr.image_end = req.image_end;
  tr.encoder_flops = req.encoder_flops;
  if (req.block_tokens == block_size) tr.block_hashes = req.block_hashes;
  return tr;
}

}  // namespace

TwinEngine::TwinEngine(std::unique_ptr<twin::Engine> engine, const twin::FrontEnd& front_end)
    : engine_(std::move(engine)), to_engine_(front_end.Inbound()), to_client_(front_end.Outbound()) {}

Status TwinEngine::Submit(const EngineRequest& req, Nanos now) {
  twin::EngineRequest tr = ToTwin(req, engine_->config().block_size);
  if (to_engine_.delay() == 0) return engine_->Submit(tr, now).ToStatus();
  if (const twin::RejectReason r = engine_->Precheck(tr); r != twin::RejectReason::kNone) {
    return twin::Admission{r}.ToStatus();
  }
  In in{tr, std::vector<uint64_t>(tr.block_hashes.begin(), tr.block_hashes.end())};
  in.req.block_hashes = {};  // re-pointed at `hashes` when it leaves the delay line
  to_engine_.Push(now, std::move(in));
  return Status::Ok();
}

void TwinEngine::Cancel(uint64_t id, Nanos now) {
  to_engine_.EraseIf([id](const In& in) { return in.req.id == id; });
  to_client_.EraseIf([id](const Out& o) { return o.id == id; });
  engine_->Cancel(id, now);
}

std::optional<Nanos> TwinEngine::NextEventTime() const {
  const Nanos fe = std::min(to_engine_.NextDue(), to_client_.NextDue());
  std::optional<Nanos> e = engine_->NextEventTime();
  if (fe == twin::DelayLine<Out>::kNever) return e;
  return e ? std::min(*e, fe) : fe;
}

void TwinEngine::Deliver(Nanos t, EngineSink& sink) {
  to_client_.PopDue(t, [&sink](Nanos due, Out o) {
    if (o.count > 0) {
      sink.OnTokens(o.id, due, o.count, o.cached);
    } else {
      sink.OnFinished(o.id, due, o.finish);
    }
  });
}

void TwinEngine::AdvanceTo(Nanos t, EngineSink& sink) {
  SinkAdapter adapter(sink, to_client_);
  // Front-end events in time order, the twin advanced to each before it.
  for (;;) {
    const Nanos next = std::min(to_engine_.NextDue(), to_client_.NextDue());
    if (next > t) break;
    engine_->AdvanceTo(next, adapter);
    to_engine_.PopDue(next, [&](Nanos due, In in) {
      const uint64_t id = in.req.id;
      in.req.block_hashes = in.hashes;  // the engine copies them on Submit
      const twin::Admission a = engine_->Submit(in.req, due);
      if (!a.ok()) to_client_.Push(due, Out{id, 0, 0, EngineFinish::kRejected});
    });
    Deliver(next, sink);
  }
  engine_->AdvanceTo(t, adapter);
  Deliver(t, sink);
}

EngineStats TwinEngine::Stats() const {
  EngineStats s = engine_->Stats();  // the gauges part of the twin's stats
  // Requests still in the front end count as waiting: serve's --max-waiting admits on this.
  s.waiting += static_cast<decltype(s.waiting)>(to_engine_.size());
  return s;
}

Result<std::unique_ptr<EnginePort>> MakeTwinEngine(const twin::TwinSetup& setup) {
  INFERENG_ASSIGN_OR_RETURN(auto engine, twin::Engine::Create(setup.settings.engine, setup.cost));
  auto port = std::make_unique<TwinEngine>(std::move(engine), setup.front_end);
  port->SetVision(setup.vision);
  port->SetAudio(setup.audio, setup.transcript_tokens_per_s);
  return std::unique_ptr<EnginePort>(std::move(port));
}

Result<std::unique_ptr<EnginePort>> MakeTwinEngineForCard(const card::WorkloadCard& card,
                                                          const twin::SetupOptions& options,
                                                          std::string* description) {
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(card, options, cat));
  if (description) *description = setup.description;
  return MakeTwinEngine(setup);
}

}  // namespace infereng::serve
