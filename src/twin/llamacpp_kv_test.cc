// LlamaCppKvCells against placements worked out by hand from llama.cpp b4748's rules
// (llamacpp_kv.h): contiguous find_slot from the head, the head reset, seq_rm moving the
// head down, the padded span, context shift, defragmentation, and a cache with no room.
#include "twin/llamacpp_kv.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace infereng::twin {
namespace {

using KvRun = LlamaCppKvCells::Run;

int32_t Put(LlamaCppKvCells& kv, int32_t seq, int32_t pos0, int32_t n) {
  const std::vector<KvRun> ub{{seq, pos0, n}};
  return kv.Decode(ub);
}

TEST(LlamaCppKvCells, CellsGoContiguouslyFromTheHeadAndTheSpanIsTheHighestUsedCellPadded) {
  LlamaCppKvCells kv(1024);
  EXPECT_EQ(Put(kv, 0, 0, 100), 128);  // cells 0..99: pad32(100)
  EXPECT_EQ(kv.head(), 100);
  EXPECT_EQ(Put(kv, 1, 0, 50), 160);   // cells 100..149
  // One decode step of both: their two tokens are neighbours (cells 150, 151).
  const std::vector<KvRun> step{{0, 100, 1}, {1, 50, 1}};
  EXPECT_EQ(kv.Decode(step), 160);
  EXPECT_EQ(kv.used(), 152);
  EXPECT_EQ(kv.CellMax(), 152);
  // A new prompt for slot 0 frees its 101 cells (0..99 and 150); the head drops to cell 0.
  kv.SeqRm(0, 0, -1);
  EXPECT_EQ(kv.head(), 0);
  EXPECT_EQ(kv.used(), 51);
  EXPECT_EQ(kv.CellMax(), 152);  // slot 1's token at 151 still holds the span
  // 40 tokens fit at the start, yet attention still spans up to slot 1's last cell.
  EXPECT_EQ(Put(kv, 0, 0, 40), 160);
  EXPECT_EQ(kv.head(), 40);
  EXPECT_EQ(kv.CellsOf(0), 40);
  EXPECT_EQ(kv.CellsOf(1), 51);
  // The span is never below one pad and never above the cache.
  EXPECT_EQ(kv.SpanFor(0), 32);
  EXPECT_EQ(kv.SpanFor(1020), 1024);
}

TEST(LlamaCppKvCells, TheSearchSkipsHolesTooSmallAndTheHeadResetsWhenFarAboveTheUsedCells) {
  LlamaCppKvCells kv(100);
  Put(kv, 0, 0, 5);    // 0..4
  Put(kv, 1, 0, 30);   // 5..34
  Put(kv, 2, 0, 5);    // 35..39, head 40
  kv.SeqRm(1, 0, -1);  // 5..34 free, head 5
  EXPECT_EQ(kv.head(), 5);
  // 40 tokens: the 30-cell hole is too small, so they go to 40..79 (head 80).
  EXPECT_EQ(Put(kv, 3, 0, 40), 96);
  EXPECT_EQ(kv.head(), 80);
  EXPECT_EQ(kv.used(), 50);
  // One token: head 80 > used 50 + 2, so the search restarts at 0 and takes cell 5.
  EXPECT_EQ(Put(kv, 0, 5, 1), 96);
  EXPECT_EQ(kv.head(), 6);
}

TEST(LlamaCppKvCells, AContextShiftFreesTheDiscardedCellsAndRenumbersTheRest) {
  LlamaCppKvCells kv(256);
  Put(kv, 0, 0, 10);  // 0..9, head 10
  // n_keep 1, n_discard 4: positions 1..4 freed, 5..9 become 1..5.
  kv.SeqRm(0, 1, 5);
  kv.SeqAdd(0, 5, -1, -4);
  EXPECT_EQ(kv.head(), 1);
  EXPECT_EQ(kv.used(), 6);
  // The next token (position 6) lands in the first freed cell.
  Put(kv, 0, 6, 1);
  EXPECT_EQ(kv.head(), 2);
  EXPECT_EQ(kv.CellMax(), 10);
  // A position moved below 0 frees its cell.
  kv.SeqAdd(0, 0, -1, -100);
  EXPECT_EQ(kv.used(), 0);
  EXPECT_EQ(kv.CellMax(), 0);
}

TEST(LlamaCppKvCells, AWideFragmentedSpanIsCompactedBeforeTheNextUbatch) {
  LlamaCppKvCells kv(4096);
  Put(kv, 0, 0, 2000);  // 0..1999
  Put(kv, 1, 0, 100);   // 2000..2099
  kv.SeqRm(0, 0, -1);   // head 0, used 100
  EXPECT_EQ(Put(kv, 2, 0, 1), 2112);  // cell 0; span pad32(2100) >= 2048
  kv.EndBatch();        // fragmentation 1 - (101 + 32) / 2112 = 0.94 > 0.1: requested
  EXPECT_EQ(kv.defrags(), 0);
  // The next ubatch first moves slot 1's 100 cells into the hole 1..100 (head = 101).
  EXPECT_EQ(Put(kv, 2, 1, 1), 128);
  EXPECT_EQ(kv.defrags(), 1);
  EXPECT_EQ(kv.CellMax(), 102);
  EXPECT_EQ(kv.CellsOf(1), 100);
  EXPECT_EQ(kv.head(), 102);
  // Below 2048 cells of span, no defragmentation is asked for, however fragmented.
  LlamaCppKvCells small(4096);
  Put(small, 0, 0, 1000);
  Put(small, 1, 0, 10);
  small.SeqRm(0, 0, -1);
  Put(small, 2, 0, 1);
  small.EndBatch();
  Put(small, 2, 1, 1);
  EXPECT_EQ(small.defrags(), 0);
  // Nor with the threshold off.
  LlamaCppKvCells off(4096, 32, 0);
  Put(off, 0, 0, 2000);
  Put(off, 1, 0, 100);
  off.SeqRm(0, 0, -1);
  Put(off, 2, 0, 1);
  off.EndBatch();
  Put(off, 2, 1, 1);
  EXPECT_EQ(off.defrags(), 0);
  EXPECT_EQ(off.CellMax(), 2100);
}

TEST(LlamaCppKvCells, NoContiguousRoomTakesNoCell) {
  LlamaCppKvCells kv(8, 4);
  Put(kv, 0, 0, 3);  // 0..2
  Put(kv, 1, 0, 2);  // 3..4
  Put(kv, 2, 0, 3);  // 5..7
  kv.SeqRm(1, 0, -1);
  EXPECT_EQ(Put(kv, 3, 0, 3), 0);  // two free cells, not three
  EXPECT_EQ(kv.used(), 6);
  EXPECT_EQ(Put(kv, 3, 0, 2), 8);  // two fit: cells 3..4
  EXPECT_EQ(kv.used(), 8);
  EXPECT_EQ(Put(kv, 4, 0, 9), 0);  // more than the cache
}

// Random placements, frees, shifts and defragmentations on a small cache: the kept
// highest-used-cell and used count always equal a scan of the cells.
TEST(LlamaCppKvCells, TheKeptCellMaxAndUsedCountMatchAScanUnderRandomUse) {
  LlamaCppKvCells kv(2300, 32, 0.1);
  std::mt19937 rng(7);
  std::vector<int32_t> next_pos(4, 0);
  for (int step = 0; step < 5000; ++step) {
    const int32_t seq = static_cast<int32_t>(rng() % 4);
    const uint32_t op = rng() % 10;
    if (op < 6) {
      const int32_t n = 1 + static_cast<int32_t>(rng() % (op == 0 ? 600 : 4));
      const std::vector<KvRun> ub{{seq, next_pos[seq], n}};
      if (kv.Decode(ub) > 0) next_pos[seq] += n;
      kv.EndBatch();
    } else if (op < 8) {
      const int32_t from = next_pos[seq] > 0 ? static_cast<int32_t>(rng() % next_pos[seq]) : 0;
      kv.SeqRm(seq, from, -1);
      next_pos[seq] = from;
    } else if (op == 8 && next_pos[seq] > 8) {
      const int32_t d = (next_pos[seq] - 1) / 2;
      kv.SeqRm(seq, 1, 1 + d);
      kv.SeqAdd(seq, 1 + d, -1, -d);
      next_pos[seq] -= d;
    }
    int32_t used = 0, cell_max = 0;
    for (int32_t i = 0; i < kv.size(); ++i) {
      if (kv.SeqAt(i) >= 0) {
        ++used;
        cell_max = i + 1;
      }
    }
    ASSERT_EQ(kv.used(), used) << "step " << step;
    ASSERT_EQ(kv.CellMax(), cell_max) << "step " << step;
    ASSERT_LE(kv.head(), kv.size());
  }
  EXPECT_GT(kv.defrags(), 0);  // the mix reaches spans >= 2048 with holes
}

// llama.cpp's find_slot as b4748 writes it, one cell at a time, with its head rules and
// seq_rm: the reference the word-at-a-time search must equal, head included.
struct NaiveCells {
  std::vector<int32_t> seq;
  int32_t head = 0, used = 0;
  explicit NaiveCells(int32_t size) : seq(static_cast<size_t>(size), -1) {}
  bool Decode(int32_t s, int32_t n) {
    const int32_t size = static_cast<int32_t>(seq.size());
    if (head > used + 2 * n) head = 0;
    if (n > size) return false;
    int32_t tested = 0;
    for (;;) {
      if (head + n > size) {
        tested += size - head;
        head = 0;
        continue;
      }
      bool found = true;
      for (int32_t i = 0; i < n; ++i) {
        if (seq[static_cast<size_t>(head + i)] >= 0) {
          found = false;
          head += i + 1;
          tested += i + 1;
          break;
        }
      }
      if (found) break;
      if (tested >= size) return false;
    }
    for (int32_t i = 0; i < n; ++i) seq[static_cast<size_t>(head + i)] = s;
    used += n;
    head += n;
    if (head >= size) head = 0;
    return true;
  }
  void SeqRmAll(int32_t s) {
    int32_t new_head = static_cast<int32_t>(seq.size());
    for (size_t i = 0; i < seq.size(); ++i) {
      if (seq[i] != s) continue;
      seq[i] = -1;
      --used;
      if (new_head == static_cast<int32_t>(seq.size())) new_head = static_cast<int32_t>(i);
    }
    if (new_head < head) head = new_head;
  }
};

TEST(LlamaCppKvCells, TheSearchEqualsLlamaCppsCellByCellSearchHeadIncluded) {
  for (const int32_t size : {97, 1000, 4096}) {
    LlamaCppKvCells kv(size, 32, 0);
    NaiveCells ref(size);
    std::mt19937 rng(static_cast<uint32_t>(size));
    std::vector<int32_t> pos(6, 0);
    for (int step = 0; step < 4000; ++step) {
      const int32_t s = static_cast<int32_t>(rng() % 6);
      if (rng() % 8 == 0) {
        kv.SeqRm(s, 0, -1);
        ref.SeqRmAll(s);
        pos[static_cast<size_t>(s)] = 0;
      } else {
        const int32_t n = 1 + static_cast<int32_t>(rng() % (rng() % 4 == 0 ? size / 3 : 3));
        const std::vector<KvRun> ub{{s, pos[static_cast<size_t>(s)], n}};
        const bool placed = kv.Decode(ub) > 0;
        ASSERT_EQ(placed, ref.Decode(s, n)) << "size " << size << " step " << step;
        if (placed) pos[static_cast<size_t>(s)] += n;
      }
      ASSERT_EQ(kv.head(), ref.head) << "size " << size << " step " << step;
      ASSERT_EQ(kv.used(), ref.used);
      for (int32_t i = 0; i < size; ++i) ASSERT_EQ(kv.SeqAt(i), ref.seq[static_cast<size_t>(i)]) << i;
    }
  }
}

}  // namespace
}  // namespace infereng::twin
