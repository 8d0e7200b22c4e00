// The capture loader itself: a missing or malformed capture must fail the test that asked
// for it, naming the file (it used to come back as empty strings, so tests failed on
// unrelated assertions, or passed on nothing).
#include "client/test_fixture.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>


namespace infereng::client {
namespace {

TEST(TestCapture, MissingCaptureFailsNamingTheFile) {
  EXPECT_NONFATAL_FAILURE(testing::LoadCapture("no_such_capture.txt"),
                          "missing test capture " + testing::CapturePath("no_such_capture.txt"));
}

TEST(TestCapture, CaptureWithoutResponseSectionFailsNamingTheFile) {
  // INDEX.txt sits beside the captures and has no "### RESPONSE:" section.
  EXPECT_NONFATAL_FAILURE(testing::LoadCapture("INDEX.txt"), "INDEX.txt: no \"### RESPONSE:\" section");
}

TEST(TestCapture, CapturesLiveInTheSourceTree) {
  const auto cap = testing::LoadCapture("v1_chat_stream_usage.txt");
  EXPECT_TRUE(cap.head.starts_with("HTTP/1.1 200")) << cap.head;
  EXPECT_NE(cap.body.find("data: [DONE]"), std::string::npos);
  EXPECT_NE(testing::CapturePath("x").find("/src/client/testdata/"), std::string::npos);
}

}  // namespace
}  // namespace infereng::client
