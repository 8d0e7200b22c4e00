// SlotEngine: llama.cpp's llama-server (build b4748, examples/server/server.cpp) as a twin
// engine, chosen with engine.scheduler=llamacpp. It implements EngineCore, so it is driven
// exactly as engine.h describes (Submit, NextEventTime, AdvanceTo; the same callbacks and
// the same rule that a request arriving after a step's start waits for the next step).
//
// What differs from the paged engine, each as server.cpp does it:
// - Slots. engine.slots (-np, = max_num_seqs) slots, each with its own context of
//   kv_cache_tokens / slots cells (-c / -np). A request runs in one slot from its first
//   prompt token to its last output token; nothing is ever preempted. A request that
//   finds no idle slot waits (FIFO, without limit unless max_waiting_* say otherwise).
// - Cached prompts stay. An idle slot keeps its cells (prompt + output) until a new
//   request takes the slot; the new request's common prefix with them is not recomputed
//   (common_lcp; at least one prompt token is always computed), the rest is dropped.
// - Slot choice (get_available_slot): the idle slot with the longest common prefix when
//   that prefix is more than engine.slot_prompt_similarity (0.5) of the slot's cells, else
//   the least recently released idle slot (never used: lowest index first). llama.cpp
//   measures a longest common subsequence for the choice; the twin's prompts share only
//   prefixes, where the two agree. Prefixes are compared in whole engine.block_size
//   blocks (the request's block hashes), so up to block_size - 1 shared tokens count as
//   new; generated tokens are held but never matched (the twin has no hashes for them).
// - One unified batch per step (update_slots): every generating slot's next token, then
//   the prompt tokens of slots still prefilling, in slot order, until max_num_batched_tokens
//   (n_batch, 2048) is reached; decode tokens are never cut.
// - The unified KV cache, cell by cell (llamacpp_kv.h: find_slot from a moving head, the
//   head reset, seq_rm when a new prompt drops a slot's old cells, defragmentation). The
//   step's tokens go through it in ubatches of engine.ubatch_tokens (-ub, 512) in batch
//   order, and each ubatch is priced alone with kv_occupied_tokens = the cells its attention
//   spans (kv_self.n: up to the highest used cell, padded to 32; idle slots' cells and the
//   holes between them included). So a step's cost follows the allocation history, as
//   llama.cpp's does, not only the cells held.
// - Context limits (slot context n = kv_cache_tokens / slots), with context_shift on
//   (llama-server's default): a prompt of >= n tokens is cut to
//   p - floor((p - n/2) / (n/2)) * (n/2) tokens (n_keep 0: whole blocks of n/2 tokens
//   after the start are erased; 5,001 tokens in a 4,096-token slot become 2,953, as the
//   ctx_overflow_truncated captures show) and is not matched against cached prefixes;
//   a generating slot about to fill its context (cells + 1 >= n) drops (cells - 1) / 2
//   cells after the first (llama.cpp's context shift) and generates on. With
//   context_shift off (--no-context-shift), a prompt of >= n tokens is refused as too long
//   (HTTP 400, as err_ctx_exceeded_*), and so is prompt + output > n: llama.cpp accepts
//   that one and fails it with HTTP 500 "context shift is disabled" when the slot fills
//   (ctx_full_during_generation), losing its text; the twin refuses it up front instead.
// - Gauges: kv_usage is every occupied cell / kv_cache_tokens (llamacpp:kv_cache_usage_ratio,
//   idle slots' cells included); kv_blocks_used / kv_blocks_cached are busy / idle slots'
//   cells in blocks of block_size; max_model_len is one slot's context (/props n_ctx).
// - engine.request_timeout (simulate: the card's product.timeout) is the client giving up:
//   at the first step start past its deadline a request leaves the queue or its slot (the
//   slot keeps its cells, as llama.cpp's does when the connection closes) with kTimeout.
// Not modelled: speculative decoding (refused by ValidateEngineConfig), n_cache_reuse chunk
// shifting, per-request n_keep, embeddings.
//
// Invariants: a slot's cells <= its context; a busy slot runs exactly one request; the
// batch's decode entries come before its prompt entries. Thread-safety: none (as Engine).
#pragma once

#include <memory>

#include "twin/engine_core.h"

namespace infereng::twin {

// Prompt tokens llama.cpp keeps of a `prompt`-token prompt in a slot of `slot_ctx` cells
// with context shift on (unchanged when it fits: prompt < slot_ctx).
int32_t LlamaCppTruncatedPrompt(int32_t prompt, int32_t slot_ctx);

}  // namespace infereng::twin
