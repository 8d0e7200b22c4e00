// llama.cpp's GET /slots (llama-server --slots): per-slot state, reduced to the signals an
// engine_metrics.jsonl line carries beside the /metrics ones (docs/engines.md, "llama.cpp
// /slots"; docs/results-schema.md).
//
// Why a second endpoint: /metrics (b4748) says how many requests run and how full the shared
// KV cache is, but not how many slots exist, how many are idle, or how far each running
// request has decoded. /slots answers a JSON array, one object per slot:
//   {"id", "id_task", "n_ctx", "is_processing", "params": {...}, "prompt": "<detokenized>",
//    "next_token": {"has_next_token", "n_remain", "n_decoded", ...}}
// It does not say how many tokens each slot holds in the KV cache (no n_past in b4748): that
// signal stays missing, and the cache's total is /metrics' kv_cache_usage_ratio.
// Unknown fields are ignored; a slot without "is_processing" or "n_ctx" is an error naming it.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace infereng::client {

struct SlotsSnapshot {
  int64_t total = 0;
  int64_t busy = 0;             // is_processing
  int64_t idle = 0;
  int64_t n_ctx = 0;            // context per slot (the largest, if they differ)
  int64_t decoded_busy = 0;     // sum of next_token.n_decoded over busy slots
  int64_t remaining_busy = 0;   // sum of next_token.n_remain (>= 0) over busy slots
};

// Parses a /slots body. InvalidArgument naming the slot and field when the shape is wrong
// (an error object such as "start it with --slots" is reported with the server's message).
Result<SlotsSnapshot> ParseLlamaCppSlots(std::string_view body);

// The signals a snapshot adds to a line's "signals" object, in this order.
inline constexpr std::string_view kSlotSignals[] = {"slots_total", "slots_busy", "slots_idle", "slot_n_ctx",
                                                    "slots_decoded_tokens", "slots_remaining_tokens"};

// Writes the snapshot's signals into `signals` (a JSON object).
void AddSlotSignals(const SlotsSnapshot& s, nlohmann::json& signals);

}  // namespace infereng::client
