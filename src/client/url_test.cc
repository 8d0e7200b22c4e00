#include "client/url.h"

#include <gtest/gtest.h>

namespace infereng::client {
namespace {

TEST(Url, ParsesSchemeHostPortAndPrefix) {
  auto u = ParseUrl("http://h:8000/v1/");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->host, "h");
  EXPECT_EQ(u->port, 8000);
  EXPECT_EQ(u->path_prefix, "/v1");
  EXPECT_EQ(u->Target("/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(u->HostHeader(), "h:8000");
}

TEST(Url, DefaultsAndIpv6) {
  auto https = ParseUrl("https://api.example.com");
  ASSERT_TRUE(https.ok());
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->Target(""), "/");
  EXPECT_EQ(https->HostHeader(), "api.example.com");
  auto v6 = ParseUrl("http://[::1]:9000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->HostHeader(), "[::1]:9000");
}

TEST(Url, RejectsBadInputWithAReason) {
  struct Case { const char* url; const char* why; };
  for (Case c : {Case{"ftp://h", "scheme"}, Case{"http://u:p@h", "user info"}, Case{"http://h:0", "port"},
                 Case{"http://h:99999", "port"}, Case{"http://h:x", "port"}, Case{"http:///v1", "missing host"},
                 Case{"http://h/v1?x=1", "query"}, Case{"http://[::1", "IPv6"}, Case{"http://h:", "empty port"}}) {
    auto u = ParseUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_EQ(u.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(u.status().message().find(c.why), std::string::npos) << u.status().message();
  }
}

}  // namespace
}  // namespace infereng::client
