#include "metrics/record_json_writer.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "metrics/records_io.h"
#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

// What records.jsonl held before the direct writer: the tree's dump.
std::string TreeDump(const RequestRecord& r, Nanos t0) {
  return RecordToJson(r, t0).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Direct(const RequestRecord& r, Nanos t0) {
  std::string out;
  AppendRecordJson(out, r, t0);
  return out;
}

// Every optional field set, times on an odd origin, odd nanoseconds, a reasoning chunk.
RequestRecord Everything() {
  RequestRecord r = Rec(std::numeric_limits<uint64_t>::max(), 10, 10.5, {{110.25, 1, true}, {120.000001, 3}}, 121);
  r.tenant = -7;
  r.replica = 3;
  r.cold = true;
  r.t_first_byte = 60'000'001;
  r.t_server_scheduled = 10'600'001;
  r.t_prefill_done = 70'000'000;
  r.server_queue = 2'500'001;
  r.server_prefill = 40'000'000;
  r.server_decode = 1;  // 1e-06 ms: the exponent form
  r.server_timings_malformed = true;
  r.input_tokens_target = 512;
  r.output_tokens_target = 4;
  r.prompt_tokens = 512;
  r.completion_tokens = 4;
  r.cached_tokens = 0;
  r.token_source = TokenSource::kUsageFinal;
  r.http_status = 200;
  r.error = ErrorClass::kStreamError;
  r.error_message = "error event: \"quoted\" back\\slash\nnew line\ttab\x01\x1f del\x7f";
  r.finish_reason = "length";
  r.retries = 1;
  r.retry_cause = "writing to a kept-alive connection failed: Broken pipe";
  r.retry_lost = 1'234'567;
  r.quality_pass = 0;
  r.session = 9;
  r.turn = 2;
  r.turns = 5;
  r.reasoning_tokens = 8;  // fields later branches added: the writer must keep up with RecordToJson
  r.items = 3;
  r.query_tokens = 12;
  r.images = 2;
  r.image_tokens = 1152;
  r.audio_ms = 12'345;
  r.audio_tokens = 1500;
  return r;
}

TEST(RecordJsonWriter, SameBytesAsTheTreeWithEveryFieldSet) {
  const RequestRecord r = Everything();
  for (Nanos t0 : {Nanos{0}, Nanos{5'000'000'123}, Nanos{-3}}) {
    EXPECT_EQ(Direct(r, t0), TreeDump(r, t0)) << "t0 " << t0;
  }
}

TEST(RecordJsonWriter, SameBytesAsTheTreeWithNothingSet) {
  RequestRecord r;  // every time -1 (null), no chunks, no session
  EXPECT_EQ(Direct(r, 0), TreeDump(r, 0));
  r.quality_pass = 1;
  r.t_send = 0;  // 0.0, not 0
  r.retry_lost = 0;
  EXPECT_EQ(Direct(r, 0), TreeDump(r, 0));
  EXPECT_NE(Direct(r, 0).find("\"t_send_ms\":0.0"), std::string::npos) << Direct(r, 0);
}

TEST(RecordJsonWriter, SameBytesForUtf8InvalidUtf8AndEscapes) {
  RequestRecord r = Everything();
  for (const char* text : {"h\xc3\xa9llo \xe2\x9c\x93", "bad \xff\xfe utf-8", "truncated \xe2\x9c", "\xc0\xaf overlong",
                           "nul \0 inside", "</script>", ""}) {
    r.error_message = std::string(text, std::char_traits<char>::length(text));
    r.finish_reason = text;
    r.retry_cause = text;
    EXPECT_EQ(Direct(r, 0), TreeDump(r, 0)) << text;
  }
  r.error_message = std::string("nul \0 inside", 12);  // an embedded NUL byte is \u0000
  EXPECT_EQ(Direct(r, 0), TreeDump(r, 0));
  EXPECT_NE(Direct(r, 0).find("\\u0000"), std::string::npos);
}

TEST(RecordJsonWriter, SameBytesOnRandomRecords) {
  std::mt19937_64 rng(17);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto time = [&] { return pick(0, 9) == 0 ? Nanos{-1} : pick(0, int64_t{1} << 50); };
  for (int i = 0; i < 2000; ++i) {
    RequestRecord r;
    r.id = static_cast<uint64_t>(pick(0, std::numeric_limits<int64_t>::max()));
    r.tenant = static_cast<int32_t>(pick(-5, 1000));
    r.replica = static_cast<int32_t>(pick(-1, 64));
    r.cold = pick(0, 1) == 1;
    r.t_sched = time();
    r.t_send = time();
    r.t_first_byte = time();
    r.t_end = time();
    r.t_server_scheduled = time();
    r.t_prefill_done = time();
    r.server_queue = time();
    r.server_prefill = time();
    r.server_decode = time();
    r.server_timings_malformed = pick(0, 1) == 1;
    r.input_tokens_target = static_cast<int32_t>(pick(0, 1 << 20));
    r.output_tokens_target = static_cast<int32_t>(pick(0, 1 << 20));
    r.prompt_tokens = pick(-1, int64_t{1} << 40);
    r.completion_tokens = pick(-1, 5000);
    r.cached_tokens = pick(-1, 5000);
    r.token_source = static_cast<TokenSource>(pick(0, 3));
    r.http_status = static_cast<int>(pick(0, 599));
    r.error = static_cast<ErrorClass>(pick(0, 11));
    r.reasoning_tokens = pick(0, 2) == 0 ? -1 : pick(0, 5000);
    r.items = pick(0, 3) == 0 ? static_cast<int32_t>(pick(1, 64)) : 0;
    r.query_tokens = r.items > 0 && pick(0, 1) == 0 ? static_cast<int32_t>(pick(1, 500)) : 0;
    r.images = pick(0, 3) == 0 ? static_cast<int32_t>(pick(1, 64)) : 0;
    r.image_tokens = r.images > 0 ? static_cast<int32_t>(pick(1, 100'000)) : 0;
    r.audio_ms = pick(0, 3) == 0 ? static_cast<int32_t>(pick(1, 600'000)) : 0;
    r.audio_tokens = r.audio_ms > 0 ? static_cast<int32_t>(pick(1, 30'000)) : 0;
    r.retries = static_cast<int32_t>(pick(0, 1));
    r.retry_lost = pick(0, int64_t{1} << 40);
    r.quality_pass = static_cast<int8_t>(pick(-1, 1));
    if (pick(0, 3) == 0) {
      r.session = pick(0, 1 << 30);
      r.turns = static_cast<int32_t>(pick(1, 50));
      r.turn = static_cast<int32_t>(pick(0, r.turns - 1));
    }
    for (int64_t c = pick(0, 70), t = pick(0, int64_t{1} << 45); c > 0; --c) {
      t += pick(0, 100'000'000);
      r.chunks.push_back(Chunk{t, static_cast<int32_t>(pick(1, 9)), pick(0, 5) == 0});
    }
    for (int k = static_cast<int>(pick(0, 40)); k > 0; --k) r.error_message.push_back(static_cast<char>(pick(0, 255)));
    const Nanos t0 = pick(0, 3) == 0 ? 0 : pick(0, int64_t{1} << 45);
    ASSERT_EQ(Direct(r, t0), TreeDump(r, t0)) << "record " << i;
  }
}

TEST(RecordJsonWriter, BufferedLinesReadBackAndReachTheFileOnFlush) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("infereng_record_json_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  const Nanos t0 = 5'000'000'123;
  RequestRecord a = Everything();
  for (Chunk& c : a.chunks) c.t += t0;
  a.t_sched += t0;
  a.t_send += t0;
  a.t_end += t0;
  RequestRecord b = Rec(7, 1, 2, {{3, 1}}, 4);
  b.t_sched += t0;
  b.t_send += t0;
  b.chunks[0].t += t0;
  b.t_end += t0;
  auto w = RecordWriter::Open(path, t0);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->Buffer(a).ok());
  ASSERT_TRUE((*w)->Buffer(b).ok());
  EXPECT_EQ((*w)->written(), 0);
  EXPECT_EQ(std::filesystem::file_size(path), 0u);  // nothing written before the flush
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ((*w)->written(), 2);
  ASSERT_TRUE((*w)->Buffer(b).ok());
  ASSERT_TRUE((*w)->Close().ok());  // Close flushes what is left
  EXPECT_EQ((*w)->written(), 3);
  EXPECT_FALSE((*w)->Buffer(b).ok());  // closed

  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, TreeDump(a, t0));
  auto read = ReadRecordsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0].id, a.id);
  EXPECT_EQ((*read)[0].error_message, a.error_message);
  EXPECT_EQ((*read)[0].retry_cause, a.retry_cause);
  EXPECT_EQ((*read)[0].server_decode, 1);
  EXPECT_EQ((*read)[0].session, 9);
  ASSERT_EQ((*read)[0].chunks.size(), 2u);
  EXPECT_EQ((*read)[0].chunks[1].t, a.chunks[1].t - t0);
  EXPECT_TRUE((*read)[0].chunks[0].reasoning);
  EXPECT_EQ((*read)[2].id, 7u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace infereng::metrics
