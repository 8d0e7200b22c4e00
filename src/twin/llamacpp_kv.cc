// LlamaCppKvCells: llama.cpp b4748's cell placement, freeing and defragmentation, ported
// rule by rule (llamacpp_kv.h names the source of each).
#include "twin/llamacpp_kv.h"

#include <algorithm>
#include <bit>

namespace infereng::twin {

LlamaCppKvCells::LlamaCppKvCells(int32_t size, int32_t pad, double defrag_thold)
    : cells_(static_cast<size_t>(std::max(1, size))),
      bits_((cells_.size() + 63) / 64, 0),
      pad_(std::max(1, pad)),
      defrag_thold_(defrag_thold) {}

int32_t LlamaCppKvCells::CellMax() const { return cell_max_; }

int32_t LlamaCppKvCells::NextUsed(int32_t from, int32_t limit) const {
  for (int32_t i = from; i < limit;) {
    const uint64_t w = bits_[static_cast<size_t>(i >> 6)] >> (i & 63);
    if (w != 0) return std::min(limit, i + std::countr_zero(w));
    i = (i | 63) + 1;
  }
  return limit;
}

int32_t LlamaCppKvCells::NextFree(int32_t from) const {
  const int32_t size = this->size();
  for (int32_t i = from; i < size;) {
    const uint64_t w = ~bits_[static_cast<size_t>(i >> 6)] >> (i & 63);
    if (w != 0) return std::min(size, i + std::countr_zero(w));
    i = (i | 63) + 1;
  }
  return size;
}

void LlamaCppKvCells::LowerCellMax() {
  while (cell_max_ > 0 && cells_[static_cast<size_t>(cell_max_ - 1)].seq < 0) --cell_max_;
}

int32_t LlamaCppKvCells::SpanFor(int32_t cell_max) const {
  const int32_t padded = (cell_max + pad_ - 1) / pad_ * pad_;  // GGML_PAD
  return std::min(size(), std::max(pad_, padded));
}

int32_t LlamaCppKvCells::CellsOf(int32_t seq) const {
  return static_cast<int32_t>(std::count_if(cells_.begin(), cells_.end(), [seq](const Cell& c) { return c.seq == seq; }));
}

int32_t LlamaCppKvCells::Decode(std::span<const Run> ubatch) {
  int32_t n = 0;
  for (const Run& r : ubatch) n += std::max(0, r.n);
  if (n <= 0) return 0;
  if (defrag_pending_) {  // llama_kv_cache_update, first thing in the ubatch loop
    Defrag();
    defrag_pending_ = false;
  }
  if (head_ > used_ + 2 * n) head_ = 0;
  const int32_t size = this->size();
  if (n > size) return 0;
  // find_slot: n contiguous empty cells from head, wrapping once around the cache. Each
  // failed window moves head one past the first used cell in it and counts the cells
  // passed; the bitmap finds those cells a word at a time (llama.cpp tests them one by one,
  // with the same outcome: a run of used cells is that many failed windows of one cell).
  int32_t tested = 0;
  for (;;) {
    if (head_ + n > size) {
      tested += size - head_;
      head_ = 0;
      continue;
    }
    const int32_t u = NextUsed(head_, head_ + n);
    if (u == head_ + n) break;
    tested += u - head_ + 1;
    head_ = u + 1;
    if (tested >= size) return 0;
    // Used cells from head on: each a failed one-cell window, while head + n fits.
    const int32_t k = std::min(NextFree(head_), size - n + 1) - head_;
    if (k > 0) {
      if (tested + k >= size) {
        head_ += size - tested;
        return 0;
      }
      tested += k;
      head_ += k;
    }
  }
  int32_t at = head_;
  for (const Run& r : ubatch) {
    for (int32_t i = 0; i < r.n; ++i) {
      SetUsed(at);
      cells_[static_cast<size_t>(at++)] = Cell{r.seq, r.pos0 + i};
    }
  }
  used_ += n;
  cell_max_ = std::max(cell_max_, at);
  n_ = SpanFor(cell_max_);
  head_ += n;  // the ring buffer's advance after the compute
  if (head_ >= size) head_ = 0;
  return n_;
}

void LlamaCppKvCells::EndBatch() {
  if (defrag_thold_ <= 0 || n_ < 2048) return;
  const double fragmentation = std::max(0.0, 1.0 - static_cast<double>(used_ + pad_) / n_);
  if (fragmentation > defrag_thold_) defrag_pending_ = true;
}

void LlamaCppKvCells::SeqRm(int32_t seq, int32_t p0, int32_t p1) { Edit(seq, p0, p1, /*remove=*/true, 0); }

void LlamaCppKvCells::SeqAdd(int32_t seq, int32_t p0, int32_t p1, int32_t delta) {
  Edit(seq, p0, p1, /*remove=*/false, delta);
}

// seq_rm and seq_add share their walk: seq's cells at positions [p0, p1) are freed (remove)
// or moved by delta (freed when that takes them below 0); head drops to the first freed cell.
void LlamaCppKvCells::Edit(int32_t seq, int32_t p0, int32_t p1, bool remove, int32_t delta) {
  const int32_t lo = std::max(0, p0);
  const int32_t hi = p1 < 0 ? INT32_MAX : p1;
  int32_t new_head = size();
  for (int32_t i = 0; i < cell_max_; ++i) {  // no used cell lies above cell_max_
    Cell& c = cells_[static_cast<size_t>(i)];
    if (c.seq != seq || c.pos < lo || c.pos >= hi) continue;
    if (!remove) c.pos += delta;
    if (remove || c.pos < 0) {
      c = Cell{};
      ClearUsed(i);
      --used_;
      if (new_head == size()) new_head = i;
    }
  }
  if (new_head != size() && new_head < head_) head_ = new_head;
  LowerCellMax();
}

// llama_kv_cache_defrag_impl's cell moves: walk the holes below `used`; fill each with the
// last used cells not yet moved, taken in ascending order from where the search stopped.
// Every not-yet-moved used cell at or above that point is moved by then, so the next
// hole's search resumes below it (`tail`) rather than from the end as llama.cpp's does:
// the same moves in O(n_kv) instead of O(holes x n_kv).
void LlamaCppKvCells::Defrag() {
  const int32_t n_kv = CellMax();
  const int32_t n_used = used_;
  std::vector<char>& moved = moved_;  // ids[i] != n_kv: placed or moved
  moved.assign(static_cast<size_t>(n_kv), 0);
  int32_t tail = n_kv;
  bool any = false;
  for (int32_t i0 = 0; i0 < n_used; ++i0) {
    if (cells_[static_cast<size_t>(i0)].seq >= 0) {
      moved[static_cast<size_t>(i0)] = 1;
      continue;
    }
    int32_t nh = 1;
    while (i0 + nh < n_used && cells_[static_cast<size_t>(i0 + nh)].seq < 0) ++nh;
    int32_t nf = 0, is = tail - 1;
    for (; is > i0; --is) {
      if (cells_[static_cast<size_t>(is)].seq < 0 || moved[static_cast<size_t>(is)]) continue;
      if (++nf == nh) break;
    }
    if (nf != nh) break;  // llama.cpp asserts; the count of used cells is exact here
    nf = 0;
    for (int32_t i1 = is; i1 < n_kv && nf < nh; ++i1) {
      Cell& c1 = cells_[static_cast<size_t>(i1)];
      if (c1.seq < 0 || moved[static_cast<size_t>(i1)]) continue;
      moved[static_cast<size_t>(i1)] = 1;
      cells_[static_cast<size_t>(i0 + nf)] = c1;
      SetUsed(i0 + nf);
      moved[static_cast<size_t>(i0 + nf)] = 1;
      c1 = Cell{};
      ClearUsed(i1);
      head_ = n_used;
      any = true;
      ++nf;
    }
    tail = is;
    i0 += nh - 1;
  }
  LowerCellMax();
  if (any) ++defrags_;
}

}  // namespace infereng::twin
