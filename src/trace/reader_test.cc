// TraceReader on the shipped real slices and on hand-made files: formats, auto-detection,
// column maps, and errors that name FILE:LINE and the column.
#include "trace/reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing/paths.h"
#include "trace/datetime.h"

namespace infereng::trace {
namespace {

using ::testing::HasSubstr;

std::string Data(const std::string& name) { return testing::SourceDir() + "/src/trace/testdata/" + name; }

class TempFile {
 public:
  TempFile(const std::string& name, const std::string& body)
      : path_((std::filesystem::temp_directory_path() / ("infereng_trace_" + std::to_string(::getpid()) + "_" + name))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << body;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

Result<std::vector<TraceRecord>> ReadAll(const std::string& path, ReaderOptions o = {}) {
  INFERENG_ASSIGN_OR_RETURN(auto reader, TraceReader::Open(path, o));
  std::vector<TraceRecord> out;
  TraceRecord r;
  for (;;) {
    INFERENG_ASSIGN_OR_RETURN(bool more, reader->Next(&r));
    if (!more) break;
    out.push_back(r);
  }
  return out;
}

TEST(ParseDateTime, FormsAndRejects) {
  EXPECT_DOUBLE_EQ(*ParseDateTime("1970-01-01 00:00:01"), 1.0);
  EXPECT_DOUBLE_EQ(*ParseDateTime("1970-01-02T00:00:00.5Z"), 86400.5);
  EXPECT_DOUBLE_EQ(*ParseDateTime("1970-01-01T01:00:00+01:00"), 0.0);
  // 2023-11-16 = 19677 days after the epoch.
  EXPECT_NEAR(*ParseDateTime("2023-11-16 18:15:46.6805900"), 19677 * 86400.0 + 18 * 3600 + 15 * 60 + 46.68059, 1e-6);
  EXPECT_FALSE(ParseDateTime("2023-11-16"));
  EXPECT_FALSE(ParseDateTime("2023-13-16 00:00:00"));
  EXPECT_FALSE(ParseDateTime("2023-11-16 18:15:46.x"));
  EXPECT_EQ(FormatDateTime(19677 * 86400.0 + 65.9), "2023-11-16 00:01:05");
}

TEST(TraceReader, AzureSliceAutoDetectedWithCrlfAndNoFinalNewline) {
  auto reader = TraceReader::Open(Data("azure-conv-2000.csv"), {});
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->format(), Format::kAzure);
  auto all = ReadAll(Data("azure-conv-2000.csv"));
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2000u);
  EXPECT_NEAR(all->front().t_s, *ParseDateTime("2023-11-16 18:15:46.6805900"), 1e-6);
  EXPECT_EQ(all->front().input_tokens, 374);
  EXPECT_EQ(all->front().output_tokens, 44);
  EXPECT_EQ(all->front().line, 2);
  // The last line (no newline after it) is read whole: "...,424,96".
  EXPECT_EQ(all->back().input_tokens, 424);
  EXPECT_EQ(all->back().output_tokens, 96);
  EXPECT_EQ(all->back().line, 2001);
}

TEST(TraceReader, MooncakeSliceMillisecondsAndHashes) {
  auto reader = TraceReader::Open(Data("mooncake-conv-1000.jsonl"), {});
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->format(), Format::kMooncake);
  auto all = ReadAll(Data("mooncake-conv-1000.jsonl"));
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 1000u);
  EXPECT_EQ(all->front().input_tokens, 6758);
  EXPECT_EQ(all->front().output_tokens, 500);
  EXPECT_EQ(all->front().hash_ids.size(), 14u);
  EXPECT_EQ(all->at(1).hash_ids.front(), 0u);
  EXPECT_EQ(all->at(1).hash_ids.at(1), 14u);
  for (const auto& r : *all) {
    EXPECT_EQ(static_cast<int64_t>(r.hash_ids.size()), (r.input_tokens + 511) / 512) << "line " << r.line;
  }
  EXPECT_GT(all->back().t_s, 1.0);   // ms became seconds: 1,000 lines span minutes, not hours
  EXPECT_LT(all->back().t_s, 3600.0);
}

TEST(TraceReader, BurstGptDetectedWithItsClassColumn) {
  TempFile f("burst.csv",
             "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
             "5,ChatGPT,472,18,490,Conversation log\n"
             "45,GPT-4,1087,0,1087,API log\n");
  auto reader = TraceReader::Open(f.path(), {});
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->format(), Format::kBurstGpt);
  auto all = ReadAll(f.path());
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_DOUBLE_EQ(all->at(1).t_s, 45);
  EXPECT_EQ(all->at(1).input_tokens, 1087);
  EXPECT_EQ(all->at(1).output_tokens, 0);  // a failed request: kept, counted
  EXPECT_EQ(all->at(1).category, "API log");
}

TEST(TraceReader, GenericCsvAutoDetectsNamesAndReadsOptionalFields) {
  TempFile f("gen.csv",
             "user,created_at_ms,prompt_tokens,completion_tokens,conversation_id\n"
             "a,1000,10,5,c1\n"
             "\"b,x\",1500,20,6,c1\n");
  ReaderOptions o;
  o.time_unit = TimeUnit::kMillis;
  o.columns.time = "created_at_ms";
  auto all = ReadAll(f.path(), o);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_DOUBLE_EQ(all->at(1).t_s, 1.5);
  EXPECT_EQ(all->at(1).tenant, "b,x");
  EXPECT_EQ(all->at(1).session, "c1");
  EXPECT_EQ(all->at(1).input_tokens, 20);
}

// An embeddings log's batch size per request: auto-detected by name (batch_size, num_inputs,
// ...) or mapped with items=COL; an empty cell or an absent key is "not given" (0).
TEST(TraceReader, ItemsColumnIsTheRequestsBatchSize) {
  TempFile csv("items.csv", "t,input_tokens,output_tokens,batch_size\n0,30,0,3\n1,5,0,\n");
  auto all = ReadAll(csv.path());
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->at(0).items, 3);
  EXPECT_EQ(all->at(1).items, 0);
  TempFile json("items.jsonl", "{\"t\": 0, \"in\": 8, \"out\": 0, \"k\": 4}\n{\"t\": 1, \"in\": 8, \"out\": 0}\n");
  ReaderOptions o;
  o.columns = *ParseColumnMap("time=t,input=in,output=out,items=k");
  auto mapped = ReadAll(json.path(), o);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ(mapped->at(0).items, 4);
  EXPECT_EQ(mapped->at(1).items, 0);
  TempFile plain("plain.csv", "t,input_tokens,output_tokens\n0,3,1\n");
  auto none = ReadAll(plain.path());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->at(0).items, 0);
}

TEST(TraceReader, ColumnMapOverridesDetection) {
  TempFile f("map.jsonl", "{\"when\": \"2024-01-01T00:00:00Z\", \"in\": 3, \"out\": 4}\n"
                          "{\"when\": \"2024-01-01T00:00:02Z\", \"in\": 5, \"out\": 6}\n");
  ReaderOptions o;
  o.columns = *ParseColumnMap("time=when,input=in,output=out");
  auto reader = TraceReader::Open(f.path(), o);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->format(), Format::kJsonl);
  auto all = ReadAll(f.path(), o);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_DOUBLE_EQ(all->at(1).t_s - all->at(0).t_s, 2.0);
  EXPECT_EQ(all->at(1).output_tokens, 6);
  EXPECT_FALSE(ParseColumnMap("time").ok());
  EXPECT_THAT(ParseColumnMap("tiem=x").status().message(), HasSubstr("unknown field \"tiem\""));
}

struct BadCase {
  const char* name;
  const char* body;
  const char* want;
};

TEST(TraceReader, ErrorsNameFileLineAndColumn) {
  const BadCase cases[] = {
      {"num.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.1,374,44\r\n2023-11-16 18:15:47.1,abc,44\r\n",
       ":3: column \"ContextTokens\": expected a whole number of tokens >= 0, got \"abc\""},
      {"dt.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n18:15:46,374,44\n",
       ":2: column \"TIMESTAMP\": expected a date-time"},
      {"fields.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.1,374\n",
       ":2: expected 3 fields as in the header, got 2"},
      {"back.csv", "t,input_tokens,output_tokens\n5,1,1\n4,1,1\n", ":3: column \"t\": time goes backwards"},
      {"nocol.csv", "t,prompt,output_tokens\n5,1,1\n", ":1: no input column (looked for input_tokens"},
      {"neg.jsonl", "{\"timestamp\": 0, \"input_length\": -3, \"output_length\": 1, \"hash_ids\": []}\n",
       ":1: column \"input_length\": expected a whole number of tokens >= 0, got -3"},
      {"miss.jsonl", "{\"t\": 0, \"input_tokens\": 1, \"output_tokens\": 1}\n{\"t\": 1, \"input_tokens\": 1}\n",
       ":2: missing \"output_tokens\""},
      {"hash.jsonl", "{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1, \"x\"]}\n",
       ":1: \"hash_ids\": expected non-negative integers, got \"x\""},
      {"json.jsonl", "{\"t\": 0, \"input_tokens\": 1, \"output_tokens\": 1}\n{\"t\": 1,\n", ":2: expected a JSON object"},
      {"items.csv", "t,input_tokens,output_tokens,batch_size\n0,10,0,2\n1,10,0,0\n",
       ":3: column \"batch_size\": expected a whole number of inputs in [1, 1000000], got \"0\""},
      {"items.jsonl", "{\"t\": 0, \"input_tokens\": 10, \"output_tokens\": 0, \"num_inputs\": 2.5}\n",
       ":1: column \"num_inputs\": expected a whole number of inputs in [1, 1000000], got 2.5"},
  };
  for (const BadCase& c : cases) {
    TempFile f(c.name, c.body);
    auto all = ReadAll(f.path());
    ASSERT_FALSE(all.ok()) << c.name;
    EXPECT_THAT(all.status().message(), HasSubstr(f.path() + c.want)) << c.name;
  }
  EXPECT_THAT(ReadAll("/nonexistent/trace.csv").status().message(), HasSubstr("/nonexistent/trace.csv: no such file"));
  TempFile empty("empty.csv", "\n\n");
  EXPECT_THAT(ReadAll(empty.path()).status().message(), HasSubstr("empty trace"));
}

TEST(TraceReader, GivenColumnThatIsAbsentIsNamed) {
  TempFile f("given.csv", "t,input_tokens,output_tokens\n1,1,1\n");
  ReaderOptions o;
  o.columns.session = "conv";
  auto all = ReadAll(f.path(), o);
  ASSERT_FALSE(all.ok());
  EXPECT_THAT(all.status().message(), HasSubstr(":1: no column \"conv\""));
}

}  // namespace
}  // namespace infereng::trace
