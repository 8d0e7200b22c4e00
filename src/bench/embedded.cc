#include "bench/embedded.h"

#include "serve/paced_engine.h"

namespace infereng::bench {

Result<Embedded> StartEmbedded(const card::WorkloadCard& card, const EmbeddedOptions& options) {
  if (!(options.speedup > 0)) return Status::InvalidArgument("--speedup: must be > 0");
  serve::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.speedup = options.speedup;
  so.seed = options.seed;
  if (!card.model.id.empty()) so.model_name = card.model.id;
  if (!options.faults.empty()) {
    INFERENG_ASSIGN_OR_RETURN(so.faults, serve::ParseFaultSpec(options.faults));
  }
  serve::PacedEngineOptions po;
  const std::string engine_desc = "paced (fixed-cost) engine";
  auto engine = std::make_unique<serve::PacedEngine>(po);
  Embedded e;
  e.server = std::make_unique<serve::Server>(so, std::move(engine));
  INFERENG_ASSIGN_OR_RETURN(uint16_t port, e.server->Start());
  e.url = "http://127.0.0.1:" + std::to_string(port);
  e.manifest = {{"embedded_server",
                 {{"engine", engine_desc}, {"speedup", options.speedup}, {"seed", options.seed},
                  {"faults", options.faults}, {"model_name", so.model_name}}}};
  return e;
}

}  // namespace infereng::bench
