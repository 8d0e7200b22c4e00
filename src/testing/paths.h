// Paths for tests: the source tree (test data lives beside the tests that read it, in
// src/<folder>/testdata/), the built infereng binary, both resolved at build time, and
// scratch paths unique to the running test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace infereng::testing {

inline std::string SourceDir() { return INFERENG_SOURCE_DIR; }
inline std::string InferengBinary() { return INFERENG_BINARY; }

// A path in the system temp directory that no other test can be using at the same time:
// ctest runs tests of one binary in parallel processes (and several checkouts may test on one
// machine), so a fixed name such as TempDir() + "card.yaml" lets one test truncate the file
// another is reading. The name carries the process id and the current test's full name.
// Nothing is created; callers remove what they make.
inline std::string ScratchPath(std::string_view name) {
  std::string test = "no-test";
  if (const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    test = std::string(info->test_suite_name()) + "." + info->name();
  }
  for (char& c : test) {
    if (c == '/') c = '_';  // parameterised tests: Suite/Name.Case/0
  }
  return (std::filesystem::temp_directory_path() /
          ("infereng-" + std::to_string(::getpid()) + "-" + test + "-" + std::string(name)))
      .string();
}

}  // namespace infereng::testing
