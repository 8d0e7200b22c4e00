// TwinEngine: the digital twin (twin::Engine, one replica) behind serve's EnginePort, so
// `infereng serve` and `infereng run` emit tokens exactly when the twin says they happen.
//
// The server's block hashes (chained over the prompt's token ids, text_model.h) go to the
// twin's prefix cache as they are; cached tokens, preemptions, KV usage and queue depth in
// /metrics are the twin's. Cluster settings (replicas, router) do not apply: serve is one
// replica.
//
// The setup's per-request front end (twin/front_end.h) is applied as the simulation
// applies it, so a measured run and its prediction stay comparable: a request reaches the
// twin Inbound() after Submit, and each token and finish reaches the server Outbound()
// after the twin made it (in engine time, so --speedup scales it too). Rejections that do
// not depend on the engine's state (too long, invalid) are still answered by Submit; a
// full waiting queue (engine.max_waiting_requests/tokens) found when the delayed request
// arrives fails its stream instead of a 429 (serve's own --max-waiting still answers 429
// at once). Thread-safety: none (the server thread drives it).
#pragma once

#include <memory>
#include <vector>

#include "card/card.h"
#include "core/status.h"
#include "serve/engine_port.h"
#include "twin/delay_line.h"
#include "twin/engine.h"
#include "twin/front_end.h"
#include "twin/setup.h"

namespace infereng::serve {

class TwinEngine final : public EnginePort {
 public:
  explicit TwinEngine(std::unique_ptr<twin::Engine> engine, const twin::FrontEnd& front_end = {});

  Status Submit(const EngineRequest& req, Nanos now) override;
  void Cancel(uint64_t id, Nanos now) override;
  std::optional<Nanos> NextEventTime() const override;
  void AdvanceTo(Nanos t, EngineSink& sink) override;
  EngineStats Stats() const override;
  int32_t BlockTokens() const override { return engine_->config().block_size; }
  Nanos InboundDelay() const override { return to_engine_.delay(); }
  Nanos OutboundDelay() const override { return to_client_.delay(); }
  // engine.reasoning_tokens: the twin's records mark the same tokens (twin/simulation.cc).
  int32_t ReasoningTokensFor(int32_t output_tokens) const override {
    return engine_->config().ReasoningTokensFor(output_tokens);
  }

  const card::VisionSpec* Vision() const override { return vision_ ? &*vision_ : nullptr; }
  void SetVision(std::optional<card::VisionSpec> v) { vision_ = std::move(v); }
  const card::AudioModelSpec* Audio() const override { return audio_ ? &*audio_ : nullptr; }
  double TranscriptTokensPerSecond() const override { return transcript_tokens_per_s_; }
  void SetAudio(std::optional<card::AudioModelSpec> a, double transcript_tokens_per_s) {
    audio_ = std::move(a);
    transcript_tokens_per_s_ = transcript_tokens_per_s;
  }

  // A token or finish on its way back to the server.
  struct Out {
    uint64_t id = 0;
    int32_t count = 0;   // tokens (0: a finish)
    int32_t cached = 0;
    EngineFinish finish = EngineFinish::kLength;
  };

 private:
  void Deliver(Nanos t, EngineSink& sink);

  std::unique_ptr<twin::Engine> engine_;
  // A request in the front end on its way in. It owns its block hashes: twin::EngineRequest
  // only points at them, and the server's request (their owner) is gone after Submit.
  struct In {
    twin::EngineRequest req;
    std::vector<uint64_t> hashes;
  };
  twin::DelayLine<In> to_engine_;
  twin::DelayLine<Out> to_client_;
  std::optional<card::VisionSpec> vision_;
  std::optional<card::AudioModelSpec> audio_;
  double transcript_tokens_per_s_ = 3.25;
};

// A twin replica from a resolved setup (twin::ResolveTwin or twin::ManualTwin), with the
// setup's front end.
Result<std::unique_ptr<EnginePort>> MakeTwinEngine(const twin::TwinSetup& setup);

// A twin replica for a card (+ --set overrides etc.), resolved against the default catalog.
// Also returns the setup's one-line description in `*description` when not null.
Result<std::unique_ptr<EnginePort>> MakeTwinEngineForCard(const card::WorkloadCard& card,
                                                          const twin::SetupOptions& options,
                                                          std::string* description = nullptr);

}  // namespace infereng::serve
