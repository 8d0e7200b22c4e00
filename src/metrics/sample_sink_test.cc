#include "metrics/sample_sink.h"

#include <vector>

#include <gtest/gtest.h>

namespace infereng::metrics {
namespace {

// Chunks over ~10 s at 1 ms bins: the binned tally must merge bins (4096 max) part-way.
std::vector<Chunk> SpreadChunks() {
  std::vector<Chunk> chunks;
  for (int i = 0; i < 3000; ++i) {
    chunks.push_back(Chunk{MillisToNanos(3.3 * i), 1 + i % 3, false});
  }
  chunks.push_back(Chunk{MillisToNanos(-5), 4, false});   // before start: ignored
  chunks.push_back(Chunk{MillisToNanos(7), 2, false});    // out of order
  chunks.push_back(Chunk{MillisToNanos(8), 0, false});    // no tokens
  chunks.push_back(Chunk{MillisToNanos(9999), 5, false});
  return chunks;
}

TEST(EventTally, AddChunksEqualsAddingEachChunk) {
  const std::vector<Chunk> chunks = SpreadChunks();
  const Nanos start = MillisToNanos(1);
  for (bool exact : {false, true}) {
    EventTally one(exact, start), all(exact, start);
    // Two records' worth: the second call starts with a cached bin from nothing.
    for (int rep = 0; rep < 2; ++rep) {
      for (const Chunk& c : chunks) one.Add(c.t, c.tokens);
      all.AddChunks(chunks);
    }
    for (double end_ms : {0.5, 1.0, 2.0, 1000.0, 4096.5, 5000.0, 9898.9, 9999.0, 20000.0}) {
      EXPECT_EQ(all.CountUpTo(MillisToNanos(end_ms)), one.CountUpTo(MillisToNanos(end_ms)))
          << "exact " << exact << " end " << end_ms;
    }
  }
  const Nanos end = MillisToNanos(5000);
  EventTally one(false, start, end), all(false, start, end);
  for (const Chunk& c : chunks) one.Add(c.t, c.tokens);
  all.AddChunks(chunks);
  EXPECT_EQ(all.CountUpTo(end), one.CountUpTo(end));
  EXPECT_GT(all.CountUpTo(end), 0);
}

TEST(SampleSink, AddAllEqualsAddingEachValue) {
  const std::vector<double> values = {3.5, 0.25, 9, 9, 1e-4, 42, 7.75};
  for (bool exact : {false, true}) {
    SampleSink one(exact, HistogramOptions{}), all(exact, HistogramOptions{});
    for (double v : values) one.Add(v);
    all.AddAll(values);
    all.AddAll({});
    EXPECT_EQ(all.count(), one.count());
    EXPECT_EQ(all.Stats(), one.Stats());
    EXPECT_EQ(all.Percentile(99), one.Percentile(99));
    one.Add(1);  // adding after sorting must unsort
    all.AddAll(std::vector<double>{1});
    EXPECT_EQ(all.Stats(), one.Stats());
  }
}

}  // namespace
}  // namespace infereng::metrics
