#include "core/status.h"

#include <gtest/gtest.h>

namespace infereng {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  INFERENG_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckEven(int x) {
  INFERENG_RETURN_IF_ERROR(Half(x).status());
  return Status::Ok();
}

TEST(StatusTest, OkIsDefaultAndCheap) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kOk);
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = Status::NotFound("model 'llama-9b'");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_EQ(s.ToString(), "not found: model 'llama-9b'");
  EXPECT_EQ(s.WithContext("fit").message(), "fit: model 'llama-9b'");
  EXPECT_EQ(s.WithContext("fit").code(), Status::Code::kNotFound);
}

TEST(ResultTest, PropagatesValuesAndErrors) {
  ASSERT_TRUE(Quarter(8).ok());
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(5).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(Quarter(6).value_or(-1), -1);
}

}  // namespace
}  // namespace infereng
