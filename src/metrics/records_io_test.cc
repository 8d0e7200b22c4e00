#include "metrics/records_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "metrics/test_records.h"

namespace infereng::metrics {
namespace {

using testdata::Rec;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("infereng_records_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

RequestRecord Full() {
  RequestRecord r = Rec(42, 10, 10.5, {{110.25, 1, true}, {120.000001, 3}}, 121);
  r.tenant = 2;
  r.replica = 1;
  r.cold = true;
  r.t_first_byte = MillisToNanos(60);
  r.t_server_scheduled = 10'600'001;  // odd nanoseconds must come back exactly
  r.server_queue = 2'500'001;        // durations as the engine reported them (not on t0)
  r.server_prefill = 40'000'000;     // server_decode stays -1: not reported
  r.input_tokens_target = 512;
  r.output_tokens_target = 4;
  r.prompt_tokens = 512;
  r.completion_tokens = 4;
  r.cached_tokens = 128;
  r.token_source = TokenSource::kUsageContinuous;
  r.quality_pass = 1;
  r.error_message = "";
  return r;
}

void ExpectSameRecord(const RequestRecord& a, const RequestRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.tenant, b.tenant);
  EXPECT_EQ(a.replica, b.replica);
  EXPECT_EQ(a.cold, b.cold);
  EXPECT_EQ(a.t_sched, b.t_sched);
  EXPECT_EQ(a.t_send, b.t_send);
  EXPECT_EQ(a.t_first_byte, b.t_first_byte);
  EXPECT_EQ(a.t_end, b.t_end);
  EXPECT_EQ(a.t_server_scheduled, b.t_server_scheduled);
  EXPECT_EQ(a.t_prefill_done, b.t_prefill_done);
  EXPECT_EQ(a.server_queue, b.server_queue);
  EXPECT_EQ(a.server_prefill, b.server_prefill);
  EXPECT_EQ(a.server_decode, b.server_decode);
  EXPECT_EQ(a.server_timings_malformed, b.server_timings_malformed);
  ASSERT_EQ(a.chunks.size(), b.chunks.size());
  for (size_t i = 0; i < a.chunks.size(); ++i) {
    EXPECT_EQ(a.chunks[i].t, b.chunks[i].t);
    EXPECT_EQ(a.chunks[i].tokens, b.chunks[i].tokens);
    EXPECT_EQ(a.chunks[i].reasoning, b.chunks[i].reasoning);
  }
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.completion_tokens, b.completion_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  EXPECT_EQ(a.token_source, b.token_source);
  EXPECT_EQ(a.http_status, b.http_status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_message, b.error_message);
  EXPECT_EQ(a.finish_reason, b.finish_reason);
  EXPECT_EQ(a.quality_pass, b.quality_pass);
}

TEST(RecordsIo, WriteThenReadRoundTripsRelativeToT0) {
  const std::string path = TempPath("roundtrip.jsonl");
  const Nanos t0 = 5'000'000'123;  // an arbitrary steady_clock origin
  RequestRecord a = Full();
  RequestRecord b = Rec(43, 20, 25, {}, 5000, ErrorClass::kHttp5xx);
  b.http_status = 503;
  b.error_message = "service unavailable";
  b.quality_pass = -1;
  b.server_timings_malformed = true;
  for (RequestRecord* r : {&a, &b}) {  // shift onto the run's clock
    r->t_sched += t0;
    if (r->t_send >= 0) r->t_send += t0;
    if (r->t_first_byte >= 0) r->t_first_byte += t0;
    if (r->t_end >= 0) r->t_end += t0;
    if (r->t_server_scheduled >= 0) r->t_server_scheduled += t0;
    for (Chunk& c : r->chunks) c.t += t0;
  }
  {
    auto w = RecordWriter::Open(path, t0);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Write(a).ok());
    ASSERT_TRUE((*w)->Write(b).ok());
    EXPECT_EQ((*w)->written(), 2);
  }
  // Human-readable: times are ms after t0.
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_NE(first.find("\"t_sched_ms\":10.0"), std::string::npos) << first;

  auto read = ReadRecordsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 2u);
  RequestRecord ea = Full(), eb = Rec(43, 20, 25, {}, 5000, ErrorClass::kHttp5xx);
  eb.http_status = 503;
  eb.error_message = "service unavailable";
  eb.server_timings_malformed = true;
  ExpectSameRecord((*read)[0], ea);
  ExpectSameRecord((*read)[1], eb);
  std::remove(path.c_str());
}

TEST(RecordsIo, EveryCompletedLineIsOnDiskBeforeClose) {
  const std::string path = TempPath("flush.jsonl");
  auto w = RecordWriter::Open(path, 0);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write(Rec(1, 0, 0, {{5}}, 5)).ok());
  // Read while the writer is still open: no user-space buffer holds the line back.
  auto read = ReadRecordsFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size(), 1u);
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_FALSE((*w)->Write(Rec(2, 0, 0, {}, 1)).ok());
  std::remove(path.c_str());
}

TEST(RecordsIo, ConcurrentWritersKeepLinesWhole) {
  const std::string path = TempPath("threads.jsonl");
  auto w = RecordWriter::Open(path, 0);
  ASSERT_TRUE(w.ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE((*w)->Write(Rec(static_cast<uint64_t>(t * 100 + i), i, i, {{i + 1.0}}, i + 1.0)).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  auto read = ReadRecordsFile(path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size(), 200u);
  std::remove(path.c_str());
}

TEST(RecordsIo, BadLinesNameFileAndLine) {
  const std::string path = TempPath("bad.jsonl");
  const std::string good = RecordToJson(Rec(1, 0, 0, {{5}}, 5), 0).dump();
  struct Case {
    std::string line;
    std::string expect;
  } cases[] = {
      {"{not json", ":3: not valid JSON"},
      {"[1,2]", ":3: expected a JSON object"},
      {R"({"t_sched_ms":"soon"})", ":3: t_sched_ms: expected a number"},
      {R"({"t_sched_ms":0,"error":"meltdown"})", ":3: error: unknown error class \"meltdown\""},
      {R"({"t_sched_ms":0,"chunks":[[1]]})", ":3: chunks[0]: expected [t_ms, tokens]"},
      {R"({"t_sched_ms":0,"chunks":[[5,1],[4,1]]})", ":3: chunks[1]: time goes backwards"},
      {R"({"t_sched_ms":0,"token_source":"guess"})", ":3: token_source: unknown value"},
      {R"({"t_sched_ms":1e300})", ":3: t_sched_ms: time out of range"},
      {R"({"t_sched_ms":0,"tenant":4294967296})", ":3: tenant: 4294967296 is too large"},
      {R"({"t_sched_ms":0,"id":-1})", ":3: id: -1 is out of range"},
      {R"({"t_sched_ms":0,"chunks":[[1,-2]]})", ":3: chunks[0]: token count out of range"},
  };
  for (const Case& c : cases) {
    WriteText(path, good + "\n\n" + c.line + "\n" + good + "\n");
    auto r = ReadRecordsFile(path);
    ASSERT_FALSE(r.ok()) << c.line;
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(path + c.expect), std::string::npos)
        << r.status().message();
  }
  EXPECT_EQ(ReadRecordsFile(path + ".missing").status().code(), Status::Code::kNotFound);
  std::remove(path.c_str());
}

// Lenient reading (report): bad lines are skipped, counted and described, and the records
// after them are kept (not only the ones before the first bad line).
TEST(RecordsIo, LenientReadSkipsBadLinesAndCountsThem) {
  const std::string path = TempPath("lenient.jsonl");
  auto good = [](uint64_t id) { return RecordToJson(Rec(id, 0, 0, {{5}}, 5), 0).dump() + "\n"; };
  WriteText(path, good(1) + "{not json\n" + good(2) + "\n" + R"({"id":"x"})" + "\n" + good(3) + "[1]\n[2]\n[3]\n" +
                      good(4) + "{\"id\": 5, \"t_end_ms\"");  // the last line cut short
  std::vector<uint64_t> ids;
  SkippedLines skipped;
  Status st = ForEachRecordInFile(path, [&](RequestRecord&& r) {
    ids.push_back(r.id);
    return Status::Ok();
  }, &skipped);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(ids, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(skipped.count, 6);
  ASSERT_EQ(skipped.first.size(), SkippedLines::kListed);
  EXPECT_EQ(skipped.first[0], "line 2: not valid JSON");
  EXPECT_EQ(skipped.first[1], "line 5: id: expected an integer");
  EXPECT_EQ(skipped.first[2], "line 7: expected a JSON object");
  EXPECT_EQ(skipped.Describe("d/requests.jsonl"),
            "skipped 6 malformed lines in d/requests.jsonl (line 2: not valid JSON; line 5: id: expected an integer; "
            "line 7: expected a JSON object; ...)");
  EXPECT_EQ(SkippedLines{}.Describe("x"), "");
  SkippedLines one{.count = 1, .first = {"line 3: not valid JSON"}};
  EXPECT_EQ(one.Describe("x"), "skipped 1 malformed line in x (line 3: not valid JSON)");

  // Strict reading (the default) still stops at the first bad line, naming it.
  auto strict = ReadRecordsFile(path);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find(path + ":2: not valid JSON"), std::string::npos) << strict.status().message();
  std::remove(path.c_str());
}

TEST(RecordsIo, InvalidUtf8InMessagesDoesNotThrow) {
  const std::string path = TempPath("utf8.jsonl");
  auto w = RecordWriter::Open(path, 0);
  ASSERT_TRUE(w.ok());
  RequestRecord r = Rec(1, 0, 0, {}, 1, ErrorClass::kProtocol);
  r.error_message = std::string("bad \xff\xfe bytes");
  ASSERT_TRUE((*w)->Write(r).ok());
  auto read = ReadRecordsFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)[0].error, ErrorClass::kProtocol);
  std::remove(path.c_str());
}

TEST(RecordsIo, OpenFailsWithPath) {
  auto w = RecordWriter::Open("/nonexistent-dir/x.jsonl", 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("/nonexistent-dir/x.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace infereng::metrics
