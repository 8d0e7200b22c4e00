#include "serve/twin_engine.h"

#include "catalog/catalog.h"

namespace infereng::serve {

namespace {

class SinkAdapter final : public twin::EngineSink {
 public:
  explicit SinkAdapter(serve::EngineSink& out) : out_(out) {}
  void OnScheduled(uint64_t id, uint64_t, Nanos t) override { out_.OnScheduled(id, t); }
  void OnTokens(uint64_t id, uint64_t, Nanos t, int32_t count, int32_t cached) override {
    out_.OnTokens(id, t, count, cached);
  }
  void OnFinished(uint64_t id, uint64_t, Nanos t, twin::FinishReason reason) override {
    out_.OnFinished(id, t, reason == twin::FinishReason::kTimeout ? EngineFinish::kTimeout : EngineFinish::kLength);
  }

 private:
  serve::EngineSink& out_;
};

}  // namespace

Status TwinEngine::Submit(const EngineRequest& req, Nanos now) {
  twin::EngineRequest tr;
  tr.id = req.id;
  tr.tag = req.id;
  tr.prompt_tokens = req.prompt_tokens;
  tr.output_tokens = req.output_tokens;
  if (req.block_tokens == engine_->config().block_size) tr.block_hashes = req.block_hashes;
  return engine_->Submit(tr, now).ToStatus();
}

void TwinEngine::AdvanceTo(Nanos t, EngineSink& sink) {
  SinkAdapter adapter(sink);
  engine_->AdvanceTo(t, adapter);
}

EngineStats TwinEngine::Stats() const {
  return engine_->Stats();  // the gauges part of the twin's stats
}

Result<std::unique_ptr<EnginePort>> MakeTwinEngine(const twin::TwinSetup& setup) {
  INFERENG_ASSIGN_OR_RETURN(auto engine, twin::Engine::Create(setup.settings.engine, setup.cost));
  return std::unique_ptr<EnginePort>(std::make_unique<TwinEngine>(std::move(engine)));
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
