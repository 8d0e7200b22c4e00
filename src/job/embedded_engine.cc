#include "job/embedded_engine.h"

#include "serve/paced_engine.h"
#include "serve/twin_engine.h"

namespace infereng::job {

Result<Embedded> StartEmbedded(const card::WorkloadCard& card, const EmbeddedOptions& options) {
  if (!(options.speedup > 0)) return Status::InvalidArgument("--speedup: must be > 0");
  serve::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.speedup = options.speedup;
  so.seed = options.seed;
  so.unix_socket = options.unix_socket;
  if (!card.model.id.empty()) so.model_name = card.model.id;
  if (!options.faults.empty()) {
    INFERENG_ASSIGN_OR_RETURN(so.faults, serve::ParseFaultSpec(options.faults));
  }
  // The twin, configured from the card; a card without a model architecture or an
  // accelerator cannot drive it, so the fixed-cost paced engine stands in (and says so).
  std::string engine_desc;
  std::unique_ptr<serve::EnginePort> engine;
  Embedded e;
  {
    std::string desc;
    Result<std::unique_ptr<serve::EnginePort>> twin = serve::MakeTwinEngineForCard(card, {}, &desc);
    if (twin.ok()) {
      engine = std::move(twin).value();
      engine_desc = "twin: " + desc;
    } else {
      engine = std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{});
      engine_desc = "paced (fixed-cost) engine";
      e.note = "embedded engine: the twin needs " + twin.status().message() + "; using the fixed-cost paced engine";
    }
  }
  e.server = std::make_unique<serve::Server>(so, std::move(engine));
  INFERENG_ASSIGN_OR_RETURN(uint16_t port, e.server->Start());
  e.url = options.unix_socket.empty() ? "http://127.0.0.1:" + std::to_string(port) : "http://localhost";
  e.manifest = {{"embedded_server",
                 {{"engine", engine_desc}, {"speedup", options.speedup}, {"seed", options.seed},
                  {"faults", options.faults}, {"model_name", so.model_name},
                  {"transport", options.unix_socket.empty() ? "tcp" : "unix:" + options.unix_socket}}}};
  return e;
}

Result<JobEngine> JobEngine::Open(const std::string& target, const card::WorkloadCard& card,
                                  const EmbeddedOptions& options) {
  JobEngine e;
  if (!target.empty()) {
    e.url_ = target;
    return e;
  }
  INFERENG_ASSIGN_OR_RETURN(e.embedded_, StartEmbedded(card, options));
  e.url_ = e.embedded_.url;
  e.speedup_ = options.speedup;
  return e;
}

void JobEngine::Apply(bench::BenchOptions* opt) const {
  opt->target = url_;
  if (embedded()) opt->extra_manifest = embedded_.manifest;
}

void JobEngine::Stop() {
  if (embedded_.server) embedded_.server->Stop();
}

}  // namespace infereng::job
