// TwinEngine: the digital twin (twin::Engine, one replica) behind serve's EnginePort, so
// `infereng serve` and `infereng run` emit tokens exactly when the twin says they happen.
//
// The server's block hashes (chained over the prompt's token ids, text_model.h) go to the
// twin's prefix cache as they are; cached tokens, preemptions, KV usage and queue depth in
// /metrics are the twin's. Cluster settings (replicas, router) do not apply: serve is one
// replica. Thread-safety: none (the server thread drives it).
#pragma once

#include <memory>

#include "card/card.h"
#include "core/status.h"
#include "serve/engine_port.h"
#include "twin/engine.h"
#include "twin/setup.h"

namespace infereng::serve {

class TwinEngine final : public EnginePort {
 public:
  explicit TwinEngine(std::unique_ptr<twin::Engine> engine) : engine_(std::move(engine)) {}

  Status Submit(const EngineRequest& req, Nanos now) override;
  void Cancel(uint64_t id, Nanos now) override { engine_->Cancel(id, now); }
  std::optional<Nanos> NextEventTime() const override { return engine_->NextEventTime(); }
  void AdvanceTo(Nanos t, EngineSink& sink) override;
  EngineStats Stats() const override;
  int32_t BlockTokens() const override { return engine_->config().block_size; }

 private:
  std::unique_ptr<twin::Engine> engine_;
};

// A twin replica from a resolved setup (twin::ResolveTwin or twin::ManualTwin).
Result<std::unique_ptr<EnginePort>> MakeTwinEngine(const twin::TwinSetup& setup);

// A twin replica for a card (+ --set overrides etc.), resolved against the default catalog.
// Also returns the setup's one-line description in `*description` when not null.
Result<std::unique_ptr<EnginePort>> MakeTwinEngineForCard(const card::WorkloadCard& card,
                                                          const twin::SetupOptions& options,
                                                          std::string* description = nullptr);

}  // namespace infereng::serve
