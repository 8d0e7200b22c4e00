// EngineCore: one scheduler behind twin::Engine (engine.h). The paged, vLLM-like engine
// (engine.cc) and llama.cpp's slot engine (slot_engine.h) implement it, so simulate,
// capacity and serve drive either through the one public Engine type; engine.scheduler
// picks which (Engine::Create). Internal to twin/: callers use Engine.
//
// Every method has the meaning its namesake has in engine.h (times never decrease, the
// sink's callbacks come in time order). Thread-safety: none, as Engine.
#pragma once

#include <algorithm>
#include <cmath>
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

// The rules both engines price a step by, written once.
//
// Adds one sequence's part of a step to `shape`: a decode token over the `held` cells it
// already has (its own new cell included in decode_context), or a prompt chunk of `tokens`
// after `held` cached ones, whose causal (query, key) pairs go to prefill_attn_pairs (start
// it at 0, not the -1 "estimate" marker).
inline void AddToStep(StepShape& shape, bool decode, int32_t tokens, int64_t held) {
  if (decode) {
    ++shape.decode_seqs;
    shape.decode_context += held + 1;
    return;
  }
  ++shape.prefill_seqs;
  shape.prefill_tokens += tokens;
  shape.prefill_context += held;
  shape.prefill_attn_pairs += static_cast<double>(tokens) * (static_cast<double>(held) + 0.5 * tokens);
}

// A step's duration: rounded to nanoseconds, at least 1 ns, and saturating, so a cost
// model's absurd step (inf, NaN) never reaches an out-of-range cast.
inline Nanos StepNanos(double seconds) { return std::max<Nanos>(1, SaturatingNanos(std::round(seconds * 1e9))); }

// llama.cpp's server (b4748) as slot_engine.h describes it; `config` already validated.
std::unique_ptr<EngineCore> MakeSlotEngine(const EngineConfig& config, std::shared_ptr<const CostModel> cost);

}  // namespace infereng::twin
