// Run-directory file writes: all or nothing, and a failure names the file (the /metrics
// scrapes were written with `std::ofstream(path) << text`, which drops write errors).
#include "job/manifest.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace infereng::job {
namespace {

TEST(RunFiles, WriteTextFileWritesExactBytesAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / ("infereng_runfiles_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "engine_metrics_before.prom").string();
  ASSERT_TRUE(WriteTextFile(path, "a 1\r\nb 2\n").ok());
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "a 1\r\nb 2\n");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST(RunFiles, WriteFailureIsAnIoErrorNamingTheFile) {
  const std::string path = "/nonexistent-infereng-dir/engine_metrics_before.prom";
  Status s = WriteTextFile(path, "x 1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIoError);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
}

}  // namespace
}  // namespace infereng::job
