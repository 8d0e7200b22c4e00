#include "core/base64.h"

#include <gtest/gtest.h>

namespace infereng::base64 {
namespace {

// RFC 4648 §10's test vectors, both ways.
TEST(Base64, RfcVectors) {
  const std::pair<const char*, const char*> v[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                   {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                   {"foobar", "Zm9vYmFy"}};
  for (const auto& [raw, enc] : v) {
    EXPECT_EQ(Encode(raw), enc);
    EXPECT_EQ(Decode(enc), std::string(raw));
  }
  EXPECT_EQ(Decode("Zm9vYmFy", 4), "foob");  // only the first bytes, the rest still checked
  EXPECT_EQ(Decode(std::string("\xff\x00", 2)), std::nullopt);
  for (const char* bad : {"Zm9", "Zm=v", "Zm9v====", "Zm9*", "=m9v", "Zm9vYmF\n"}) EXPECT_EQ(Decode(bad), std::nullopt) << bad;
  EXPECT_EQ(Decode("Zm9vYmF*", 2), std::nullopt);  // a bad character after max_bytes still fails
}

}  // namespace
}  // namespace infereng::base64
