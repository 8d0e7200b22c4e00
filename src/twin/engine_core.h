// EngineCore: one scheduler behind twin::Engine (engine.h). The paged, vLLM-like engine
// (engine.cc) and llama.cpp's slot engine (slot_engine.h) implement it, so simulate,
// capacity and serve drive either through the one public Engine type; engine.scheduler
// picks which (Engine::Create). Internal to twin/: callers use Engine.
//
// Every method has the meaning its namesake has in engine.h (times never decrease, the
// sink's callbacks come in time order). Thread-safety: none, as Engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "twin/engine.h"

namespace infereng::twin {

class EngineCore {
 public:
  virtual ~EngineCore() = default;
  virtual Admission Submit(const EngineRequest& req, Nanos now) = 0;
  virtual RejectReason Precheck(const EngineRequest& req) const = 0;
  virtual bool Cancel(uint64_t id, Nanos now) = 0;
  virtual std::optional<Nanos> NextEventTime() const = 0;
  virtual void AdvanceTo(Nanos t, EngineSink& sink) = 0;
  virtual EngineStats Stats() const = 0;
  virtual int64_t Outstanding() const = 0;
  virtual int64_t WaitingCount() const = 0;
  virtual double KvUsage() const = 0;
  virtual const EngineConfig& config() const = 0;
};

// llama.cpp's server (b4748) as slot_engine.h describes it; `config` already validated.
std::unique_ptr<EngineCore> MakeSlotEngine(const EngineConfig& config, std::shared_ptr<const CostModel> cost);

}  // namespace infereng::twin
