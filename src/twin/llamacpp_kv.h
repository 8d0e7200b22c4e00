// LlamaCppKvCells: where llama.cpp (build b4748) puts each token's KV cell in its unified
// cache, and so how many cells a step's attention spans. The slot engine (slot_engine.h)
// replays it step by step; `infereng profile` replays it to know the span of each point it
// measures on a llama.cpp server.
//
// Why it matters (FIDELITY.md (b3)): llama.cpp does not attend over the cells held. Each
// ubatch attends over kv_self.n = min(size, max(pad, GGML_PAD(cell_max, pad))) cells, where
// cell_max is one past the highest used cell (src/llama.cpp:8566), masked cells included. A
// step's cost therefore follows the used *extent*, which the allocation history sets: where
// freed prompts left holes and where live cells sit. The rules, each as b4748 has them:
// - find_slot (llama-kv-cache.cpp): a ubatch of n tokens takes n *contiguous* free cells,
//   searched from `head`, wrapping to 0 when head + n passes the end; the ubatch's tokens
//   go in batch order (the server puts every generating slot's token first, then prompt
//   chunks), so concurrent sequences interleave their cells.
// - Before the search (llama_decode_impl): if head > used + 2 n, head = 0 ("better to start
//   searching from the beginning of the cache, hoping to fill it").
// - After the ubatch: head += n (0 at the end of the cache).
// - seq_rm (a slot's cells freed: a new prompt keeps only its common prefix, an erase, a
//   context shift): the freed cells become empty and head moves to the first freed cell
//   when that is lower. seq_add shifts positions only.
// - Defragmentation (llama_kv_cache_defrag_impl): after a batch whose last ubatch spanned
//   n >= 2048 cells with fragmentation 1 - (used + pad) / n > defrag_thold (llama-server
//   default 0.1), the next decode first compacts: each hole below `used` is filled with the
//   last not-yet-moved used cells, and head = used. Its own cost (a copy of the moved cells)
//   is not modelled; its move limit (max_nodes / (6 n_layer), hundreds) is assumed ample.
// - pad: 32 cells (256 with flash attention, -fa).
// Not modelled: recurrent models, seq_cp (cells shared by sequences; llama-server's slots
// never share), an ubatch larger than the cache (find_slot fails).
//
// Cost: Decode is O(n + holes and used words the search passes: a word of 64 cells at a
// time, one iteration per hole too small); CellMax is O(1) (kept as cells are
// taken, and lowered past freed ones); SeqRm, SeqAdd and Defrag are O(cell_max), the first
// two paid per request, Defrag when fragmentation asks for it. Thread-safety: none.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace infereng::twin {

class LlamaCppKvCells {
 public:
  // size: kv_cache_tokens (-c); pad: 32, or 256 with flash attention; defrag_thold <= 0: never.
  explicit LlamaCppKvCells(int32_t size, int32_t pad = 32, double defrag_thold = 0.1);

  // n consecutive positions of one sequence, pos0 .. pos0 + n - 1, in one ubatch.
  struct Run {
    int32_t seq = 0;
    int32_t pos0 = 0;
    int32_t n = 0;
  };

  // One ubatch through llama_decode: a pending defragmentation, the head reset, find_slot,
  // head += n. Returns the cells its attention spans (kv_self.n), or 0 when no contiguous
  // space holds it (no cell taken, though the search moved head as llama.cpp's does;
  // llama-server then retries with half the batch).
  int32_t Decode(std::span<const Run> ubatch);
  // The end of one llama_decode call (every ubatch of a batch): requests a defragmentation
  // for the next Decode when the last ubatch's span and the fragmentation call for one.
  void EndBatch();
  // llama_kv_cache_seq_rm: seq's cells at positions [p0, p1) freed (p1 < 0: to the end).
  void SeqRm(int32_t seq, int32_t p0, int32_t p1);
  // llama_kv_cache_seq_add: seq's positions in [p0, p1) moved by delta (p1 < 0: to the end);
  // a position moved below 0 frees its cell.
  void SeqAdd(int32_t seq, int32_t p0, int32_t p1, int32_t delta);

  int32_t size() const { return static_cast<int32_t>(cells_.size()); }
  int32_t used() const { return used_; }
  int32_t head() const { return head_; }
  int32_t last_span() const { return n_; }  // kv_self.n of the last Decode
  int64_t defrags() const { return defrags_; }
  // One past the highest used cell (0: empty).
  int32_t CellMax() const;
  // The span an ubatch would attend if the cache's highest used cell were `cell_max`.
  int32_t SpanFor(int32_t cell_max) const;
  // Cells held by `seq` (O(size); for tests and checks).
  int32_t CellsOf(int32_t seq) const;
  // The sequence holding `cell` (-1: empty).
  int32_t SeqAt(int32_t cell) const { return cells_[static_cast<size_t>(cell)].seq; }

 private:
  struct Cell {
    int32_t seq = -1;  // -1: empty
    int32_t pos = -1;
  };
  void Defrag();
  void Edit(int32_t seq, int32_t p0, int32_t p1, bool remove, int32_t delta);
  // cell_max_ down past the empty cells below it (after cells were freed or moved).
  void LowerCellMax();
  void SetUsed(int32_t i) { bits_[static_cast<size_t>(i >> 6)] |= uint64_t{1} << (i & 63); }
  void ClearUsed(int32_t i) { bits_[static_cast<size_t>(i >> 6)] &= ~(uint64_t{1} << (i & 63)); }
  // The first used cell in [from, limit) (limit: none); the first empty one at or after
  // `from` (size(): none).
  int32_t NextUsed(int32_t from, int32_t limit) const;
  int32_t NextFree(int32_t from) const;

  std::vector<Cell> cells_;
  std::vector<uint64_t> bits_;  // cell i used <=> bit i set (find_slot's search, a word at a time)
  std::vector<char> moved_;  // Defrag's scratch, kept to reuse its storage
  int32_t pad_;
  double defrag_thold_;
  int32_t head_ = 0;
  int32_t used_ = 0;
  int32_t cell_max_ = 0;  // one past the highest used cell
  int32_t n_ = 0;
  bool defrag_pending_ = false;
  int64_t defrags_ = 0;
};

}  // namespace infereng::twin
