// `infereng profile --target URL`: a short, safe measurement of a live endpoint that
// yields a measured cost model (twin/measured_cost.h) in a profile file
// (twin/profile_file.h, docs/profile.md).
//
// What it sends, in order, every request through one ProbeClient (bounded in requests and
// wall time; each call's timeout is cut to the time left):
//   1. /v1/models (model id), /metrics or /props (KV capacity, when exposed);
//   2. one tiny warm-up request (not measured), then a tiny prompt, batch 1, `repeats`
//      times: the front end (TTFT) and the batch-1 decode step at almost no context;
//   3. batch-1 prompts of growing length (64 words up to max_prompt_words), `repeats`
//      times each: prefill (TTFT) and decode step vs context held;
//   4. B concurrent tiny-prompt streams, B = 2, 4, ... max_batch, `repeats` rounds each:
//      decode step vs batch;
//   5. on a slot server (llama.cpp), the step over the KV cells the idle slots hold
//      (requests pinned to slots with `id_slot`; see MeasureOccupancy in profile.cc).
// Every prompt is distinct (salted words, afresh each run), so no prefix cache shortens a
// prefill, not even one a previous profile of the same server filled.
// Safety: a failed request (error, 4xx/5xx, 429) ends the phase it was in, and the profile
// backs off (1 s, doubling) before the next; two failed phases in a row end the profile
// with what it has. A phase also stops growing once a step takes 10x the batch-1 step (the
// target is saturating). A decode step is the repeated median slope between output events
// (Siegel: per event the median slope to the others, then their median) when each event carried one token (the server's usage count equals the
// events): a host stall that delays one event, or holds back several and releases them
// together, moves a mean but not that median, and a step that also ran another request's
// prefill is not a decode step. Otherwise (several tokens
// per event) it is (last token - first token) / (completion tokens - 1). Prompt tokens come
// from one non-streamed 1-token request per prompt length (the chat template included).
//
// Thread-safety: none; one profile at a time.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "client/http_client.h"
#include "core/clock.h"
#include "core/status.h"
#include "twin/profile_file.h"

namespace infereng::job {

struct ProfileOptions {
  std::string target;            // for the provenance (display form)
  client::ClientOptions client;  // base_url: the server root
  std::string model;             // "" = the first of /v1/models
  Nanos budget = 120 * kNanosPerSecond;
  int64_t max_requests = 400;
  int max_batch = 16;
  int max_prompt_words = 2048;
  int decode_tokens = 24;        // output tokens per request that measures a decode step
  int repeats = 3;
  uint64_t seed = 42;            // mixed into every prompt, with the clock (no two runs share prompts)
  // A slot server (llama.cpp: /props total_slots >= 2): also measure the step over the KV
  // cells the idle slots hold (the profile's table.occupancy).
  bool occupancy = true;
};

// The measured profile, fitted (FitProfile). Unavailable when the target never answered;
// FailedPrecondition when no decode step could be measured. A profile cut short by the
// budget or by errors is still a result; its notes say what is missing.
Result<twin::ProfileFile> RunProfile(const ProfileOptions& options);

// The KV cache's capacity in tokens from llama.cpp's GET /props: its
// default_generation_settings.n_ctx is ONE slot's context (b4748: the cache divided by -np),
// so the cache all slots share is n_ctx x total_slots. nullopt when /props has no n_ctx.
std::optional<int64_t> KvCapacityFromProps(const nlohmann::json& props);

// One stream's decode step in seconds (see the header comment): `chunk_times` are the
// arrivals of its output events, the first being the first token; 0 when fewer than two
// tokens came back.
double DecodeStepSeconds(const std::vector<Nanos>& chunk_times, int64_t completion_tokens);

}  // namespace infereng::job
