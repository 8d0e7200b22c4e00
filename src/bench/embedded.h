// The embedded engine for `infereng run CARD` without --target: an in-process
// serve::Server on a free loopback port, configured from the card (model name, seed), so
// the card's baseline runs with no external server. --speedup makes engine time run
// faster than the wall clock (tests, quick looks).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "core/status.h"
#include "serve/server.h"

namespace infereng::bench {

struct EmbeddedOptions {
  double speedup = 1.0;
  uint64_t seed = 42;
  std::string faults;  // serve --faults spec ("" = none)
  std::string unix_socket;  // listen here instead of 127.0.0.1:<free port> ("" = TCP)
};

struct Embedded {
  std::unique_ptr<serve::Server> server;
  std::string url;          // "http://127.0.0.1:PORT" ("http://localhost" on a Unix socket)
  nlohmann::json manifest;  // {"embedded_server": {...}} for manifest.json
  std::string note;         // why the twin could not be used ("" when it is)
};

Result<Embedded> StartEmbedded(const card::WorkloadCard& card, const EmbeddedOptions& options);

}  // namespace infereng::bench
