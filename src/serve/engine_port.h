// EnginePort: what `infereng serve` needs from a serving engine model.
//
// The server drives an engine in engine time (nanoseconds from the engine's start, the
// twin's virtual clock). It maps wall time to engine time (engine_t = wall_elapsed *
// speedup), calls AdvanceTo(now) whenever the wall clock reaches NextEventTime(), and the
// engine reports, through an EngineSink, every token emission and every finish at its
// exact engine time. The server then writes those tokens to the sockets.
//
// The twin (src/twin/) is adapted to this port in serve/twin_engine.{h,cc}; tests and the
// bench may use serve/paced_engine.h, a tiny fixed-cost engine with the same interface.
//
// Thread-safety: none. The server calls every method from its single engine thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "card/audio.h"
#include "card/vision.h"
#include "twin/engine_gauges.h"

namespace infereng::serve {

// One request as the engine sees it. The server decides the exact output length before
// submitting (max_tokens, min_tokens, ignore_eos, stop strings all resolved), so the engine
// only has to generate `output_tokens` tokens.
struct EngineRequest {
  uint64_t id = 0;             // unique per server run, chosen by the server
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 1;   // >= 1
  // Prefix-cache identity: a chained hash per FULL block of prompt tokens (block i's
  // hash covers tokens [0, (i+1)*block_tokens)). Two prompts that share a leading run
  // of blocks share these hashes. Empty: no caching possible.
  std::vector<uint64_t> block_hashes;
  int32_t block_tokens = 16;   // tokens per block used to compute block_hashes
  // Image tokens at prompt positions [image_begin, image_end) and their vision encoder's
  // FLOPs (twin::EngineRequest has the rule); image_end 0: no images.
  int32_t image_begin = 0;
  int32_t image_end = 0;
  double encoder_flops = 0;
};

enum class EngineFinish {
  kLength,     // produced every token it was asked for
  kAborted,    // cancelled by Cancel()
  kRejected,   // the engine could not admit it (e.g. prompt larger than the KV cache)
  kTimeout,    // the engine's own request timeout expired
};

class EngineSink {
 public:
  virtual ~EngineSink() = default;
  // `count` new output tokens of request `id` became available at engine time `t`
  // (count > 1 when one engine step yields several tokens, e.g. speculative decoding).
  // `cached_prompt_tokens` is the number of prompt tokens served from the prefix cache;
  // it is only meaningful on the first call for a request.
  // The request left the waiting queue (first scheduled) at engine time `t`.
  virtual void OnScheduled(uint64_t id, Nanos t) {}
  virtual void OnTokens(uint64_t id, Nanos t, int32_t count, int32_t cached_prompt_tokens) = 0;
  // The request left the engine at engine time `t` (its KV blocks are free).
  virtual void OnFinished(uint64_t id, Nanos t, EngineFinish reason) = 0;
};

// Engine-wide state for /metrics (vLLM names in parentheses).
// The gauges /metrics reports: the twin's definition, which any engine fills.
using EngineStats = twin::EngineGauges;

class EnginePort {
 public:
  virtual ~EnginePort() = default;
  // Adds a request arriving at engine time `now` (>= every earlier time passed in).
  // Errors: ResourceExhausted = queue full, retry later (serve answers 429/503);
  // InvalidArgument = can never be served (400), e.g. longer than the KV cache.
  virtual Status Submit(const EngineRequest& req, Nanos now) = 0;
  // Aborts a request at engine time `now`: it frees its batch slot and KV blocks at once.
  // OnFinished(kAborted) may or may not be reported for it; the server does not wait for it.
  virtual void Cancel(uint64_t id, Nanos now) = 0;
  // Engine time of the next thing that will happen, nullopt when idle.
  virtual std::optional<Nanos> NextEventTime() const = 0;
  // Processes every event with time <= t, reporting emissions and finishes to `sink`.
  virtual void AdvanceTo(Nanos t, EngineSink& sink) = 0;
  virtual EngineStats Stats() const = 0;
  // Tokens per KV block: the server computes EngineRequest::block_hashes with it.
  virtual int32_t BlockTokens() const { return 16; }
  // A per-request front end the engine models itself (the twin's: twin/front_end.h): a
  // request reaches the engine InboundDelay() after Submit, and every token and finish is
  // reported OutboundDelay() after the engine made it. The server's engine timings
  // (queue, prompt) leave both out, as a real engine's own clock would. 0: none.
  virtual Nanos InboundDelay() const { return 0; }
  virtual Nanos OutboundDelay() const { return 0; }
  // The engine plays a reasoning model: of a request's `output_tokens`, this many come
  // first as reasoning (serve streams them as delta.reasoning_content). 0: none.
  virtual int32_t ReasoningTokensFor(int32_t /*output_tokens*/) const { return 0; }
  // A vision-language model: how image parts become prompt tokens (card/vision.h). Null:
  // a text-only model, and chat image parts are refused with 400.
  virtual const card::VisionSpec* Vision() const { return nullptr; }
  // A speech model: how a clip becomes audio tokens (card/audio.h), and the transcript
  // tokens per second of audio the engine generates for it. Null: transcription requests
  // are refused with 404 (vLLM: "The model does not support Transcriptions API").
  virtual const card::AudioModelSpec* Audio() const { return nullptr; }
  virtual double TranscriptTokensPerSecond() const { return 3.25; }
};

}  // namespace infereng::serve
