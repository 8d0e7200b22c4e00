#include "metrics/timeseries.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

// Output tokens per bucket against a direct count with the final width: chunks before t0,
// chunks every few ms across many bucket edges, and a record whose chunks run far past its
// t_end (so buckets merge in the middle of its chunk loop).
TEST(TimeSeriesBuilder, OutputTokensLandInTheirBuckets) {
  const Nanos t0 = MillisToNanos(100);
  TimeSeriesBuilder ts(t0, 0.01, 64);  // 10 ms buckets, at most 64: ends at 40 ms
  std::vector<RequestRecord> records;
  records.push_back(Rec(1, 50, 50, {{60}, {95, 2}, {101}, {104}, {109, 3}, {110}, {135}}, 136));
  RequestRecord dense = Rec(2, 100, 100, {}, 700);
  for (int i = 0; i < 85; ++i) dense.chunks.push_back(Chunk{MillisToNanos(101 + 7 * i), 1 + i % 2, false});
  records.push_back(dense);
  RequestRecord late = Rec(3, 130, 130, {}, 140);  // chunks after t_end: merges mid-loop
  for (int i = 0; i < 60; ++i) late.chunks.push_back(Chunk{MillisToNanos(131 + 23 * i), 1, false});
  records.push_back(late);
  for (const RequestRecord& r : records) ts.Add(r, -1);

  const std::vector<TimeBucket> buckets = ts.Buckets();
  const Nanos width = SecondsToNanos(ts.bucket_s());
  ASSERT_EQ(width, MillisToNanos(40));  // it did merge, and buckets stay finer than the chunks
  std::vector<int64_t> expected(buckets.size(), 0);
  int64_t total = 0;
  for (const RequestRecord& r : records) {
    for (const Chunk& c : r.chunks) {
      const size_t i = static_cast<size_t>(std::max<Nanos>(c.t - t0, 0) / width);
      ASSERT_LT(i, expected.size());
      expected[i] += c.tokens;
      total += c.tokens;
    }
  }
  int64_t got_total = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    EXPECT_EQ(buckets[i].output_tokens, expected[i]) << "bucket " << i;
    got_total += buckets[i].output_tokens;
  }
  EXPECT_EQ(got_total, total);
}

}  // namespace
}  // namespace infereng::metrics
