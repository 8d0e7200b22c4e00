// Output directories: default names cannot escape their folder, and an --out holding an
// earlier run is refused, or with --force cleared of that run's files only.
#include "cli/output_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;

fs::path Dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("infereng_outdir_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

TEST(OutputDirTest, DefaultNamesStayInTheirFolder) {
  const std::string d = TimestampedOutputDir("sweep-", "x/../../../../outside", "card");
  EXPECT_EQ(d.rfind("sweep-x-..-..-..-..-outside-", 0), 0u) << d;
  EXPECT_EQ(d.find('/'), std::string::npos) << d;
  const std::string r = TimestampedOutputDir("runs/", "", "run");
  EXPECT_EQ(r.rfind("runs/run-", 0), 0u) << r;
  EXPECT_EQ(r.find('/', 5), std::string::npos) << r;
}

TEST(OutputDirTest, MissingOrEmptyIsFine) {
  fs::path d = Dir("fresh");
  EXPECT_TRUE(PrepareOutputDir(d.string(), false).ok());
  fs::create_directories(d);
  EXPECT_TRUE(PrepareOutputDir(d.string(), false).ok());
  fs::remove_all(d);
}

TEST(OutputDirTest, AnEarlierRunIsRefusedWithoutForceAndClearedWithIt) {
  fs::path d = Dir("earlier");
  fs::create_directories(d / "trial-3");
  fs::create_directories(d / "predicted");
  std::ofstream(d / "summary.json") << "{}";
  std::ofstream(d / "trial-3" / "requests.jsonl") << "{}";
  std::ofstream(d / "notes.txt") << "mine";
  Status s = PrepareOutputDir(d.string(), false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition);  // exit 2
  EXPECT_NE(s.message().find("not empty"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--force"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::exists(d / "trial-3" / "requests.jsonl"));  // nothing touched

  ASSERT_TRUE(PrepareOutputDir(d.string(), true).ok());
  EXPECT_FALSE(fs::exists(d / "trial-3"));
  EXPECT_FALSE(fs::exists(d / "predicted"));
  EXPECT_FALSE(fs::exists(d / "summary.json"));
  EXPECT_TRUE(fs::exists(d / "notes.txt"));  // not ours: kept
  fs::remove_all(d);
}

TEST(OutputDirTest, ForceNeverClearsADirectoryInferengDidNotWrite) {
  fs::path d = Dir("foreign");
  fs::create_directories(d / "src");
  std::ofstream(d / "thesis.tex") << "precious";
  std::ofstream(d / "trial-notes") << "not a trial dir";
  Status s = PrepareOutputDir(d.string(), true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("holds no infereng output"), std::string::npos) << s.message();
  EXPECT_TRUE(fs::exists(d / "thesis.tex"));
  EXPECT_TRUE(fs::exists(d / "trial-notes"));
  fs::remove_all(d);
}

TEST(OutputDirTest, AFileIsNotADirectory) {
  fs::path d = Dir("file");
  std::ofstream(d) << "x";
  EXPECT_FALSE(PrepareOutputDir(d.string(), true).ok());
  EXPECT_TRUE(fs::exists(d));
  fs::remove(d);
}

}  // namespace
}  // namespace infereng::cli
