// The embedded engine on 127.0.0.1 for end-to-end tests: a serve::Server on an ephemeral
// port with the given engine, started by the constructor and stopped by the destructor, and
// the hand-set twin most of those tests put behind it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "serve/server.h"
#include "serve/twin_engine.h"
#include "twin/cost_model.h"
#include "twin/setup.h"

namespace infereng::testing {

class EmbeddedServer {
 public:
  EmbeddedServer(serve::ServerOptions options, std::unique_ptr<serve::EnginePort> engine) {
    options.port = 0;
    server_ = std::make_unique<serve::Server>(std::move(options), std::move(engine));
    Result<uint16_t> port = server_->Start();
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    port_ = port.ok() ? *port : 0;
  }
  // The twin of `setup` (serve::MakeTwinEngine) behind it.
  EmbeddedServer(serve::ServerOptions options, const twin::TwinSetup& setup)
      : EmbeddedServer(std::move(options), MakeEngine(setup)) {}
  ~EmbeddedServer() { server_->Stop(); }
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  bool started() const { return port_ != 0; }
  serve::Server& server() { return *server_; }

 private:
  static std::unique_ptr<serve::EnginePort> MakeEngine(const twin::TwinSetup& setup) {
    Result<std::unique_ptr<serve::EnginePort>> engine = serve::MakeTwinEngine(setup);
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    return engine.ok() ? std::move(engine).value() : nullptr;
  }

  std::unique_ptr<serve::Server> server_;
  uint16_t port_ = 0;
};

// A twin set by hand (twin::ManualTwin): the LinearCostModel `cost`, a 64k-token KV cache and
// an 8192-token context.
inline twin::TwinSetup LinearTwin(const twin::LinearCostOptions& cost) {
  twin::TwinSettings settings;
  settings.engine.kv_cache_tokens = 1 << 16;
  settings.engine.max_model_len = 8192;
  return twin::ManualTwin(settings, std::make_shared<twin::LinearCostModel>(cost));
}

// LinearTwin for a transcription card: the card's model.audio (how clips become tokens) and
// transcript rate, which serve reads from the setup.
inline twin::TwinSetup TranscriptionTwin(const card::WorkloadCard& card, const twin::LinearCostOptions& cost) {
  twin::TwinSetup setup = LinearTwin(cost);
  setup.audio = card.model.audio;
  if (card.traffic.audio) setup.transcript_tokens_per_s = card.traffic.audio->transcript_tokens_per_s;
  return setup;
}

}  // namespace infereng::testing
