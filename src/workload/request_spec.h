// RequestSpec: one request the workload generator asks for. The same generator feeds the
// twin (virtual time) and the load generator (wall time): same card + seed, same requests.
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.h"

namespace infereng::workload {

struct RequestSpec {
  uint64_t index = 0;       // 0, 1, 2, ... in arrival order
  Nanos t_arrival = 0;      // intended send time, offset from the start (open loop; 0 closed)
  int32_t input_tokens = 0; // total prompt tokens, including the shared prefix
  int32_t output_tokens = 0;
  int32_t tenant = 0;
  int32_t prefix_id = -1;   // -1: no shared prefix; else unique across tenants
  int32_t prefix_tokens = 0;
  // Trace replay with prefix structure (Mooncake hash_ids): the prompt is these blocks of
  // `block_tokens` tokens each, in order, cut at input_tokens; equal leading ids = the same
  // leading tokens (bench/prompt.h builds the text, twin/engine.h TraceBlockHashes the
  // twin's hashes). Empty: no trace prefix (prefix_id above may still apply).
  std::vector<uint64_t> block_ids;
  int32_t block_tokens = 0;
  bool offline = false;     // traffic class
  // Sessions and agent tasks (workload/sessions.h): the session this call belongs to (-1:
  // none), its 0-based turn and the session's planned number of turns. A session's prompt
  // is its conversation so far, as block_ids above (the session's own token stream).
  int64_t session = -1;
  int32_t turn = 0;
  int32_t turns = 1;
  // Parallel calls (SessionSpec::parallel): this call's branch in its step (0-based), the
  // step's calls, and the session's planned calls over all its steps (= turns without).
  int32_t branch = 0;
  int32_t branches = 1;
  int32_t calls = 1;
  uint64_t seed = 0;        // per-request seed (prompt text synthesis)
  // Embeddings: the token length of each input of the request (input_tokens is their sum,
  // output_tokens 0); empty for a text-generation request.
  // Rerank: one item per document, each the tokens of its (query, document) pair, the one
  // sequence a cross-encoder scores: query_tokens + that document's tokens.
  std::vector<int32_t> item_tokens;
  // Rerank: the query's tokens (in every item above); 0 for any other request.
  int32_t query_tokens = 0;
  // Vision (traffic.images): the images this chat request carries, and their prompt tokens
  // by the model's rule (card/vision.h), which come after the text's input_tokens (the
  // engine's prompt is input_tokens + image_tokens); 0 for a request without images.
  int32_t images = 0;
  int32_t image_tokens = 0;
  // Transcription (traffic.audio): the clip's length, and its audio tokens by the model's
  // rule (card/audio.h), which come after the text prompt's input_tokens (the decoder's
  // start tokens): the engine's prompt is input_tokens + audio_tokens. output_tokens is the
  // transcript's length (card::TranscriptTokensFor). 0 for any other request.
  int32_t audio_ms = 0;
  int32_t audio_tokens = 0;
};

}  // namespace infereng::workload
