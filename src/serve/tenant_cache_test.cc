#include "serve/tenant_cache.h"

#include <gtest/gtest.h>

namespace infereng::serve {
namespace {

TEST(TenantCache, SharedNeverSalts) {
  EXPECT_EQ(TenantSalt(CacheIsolation::kShared, "key", "salt"), 0u);
  EXPECT_EQ(TenantSalt(CacheIsolation::kPerTenant, "", ""), 0u);
  EXPECT_NE(TenantSalt(CacheIsolation::kPerTenant, "a", ""), TenantSalt(CacheIsolation::kPerTenant, "b", ""));
  EXPECT_NE(TenantSalt(CacheIsolation::kPerTenant, "ab", "c"), TenantSalt(CacheIsolation::kPerTenant, "a", "bc"));
}

TEST(TenantCache, SaltKeepsEqualityWithinATenant) {
  std::vector<uint64_t> x{1, 2, 3}, y{1, 2, 4}, z{1, 2, 3};
  SaltBlockHashes(x, 7);
  SaltBlockHashes(y, 7);
  SaltBlockHashes(z, 8);
  EXPECT_EQ(x[0], y[0]);
  EXPECT_NE(x[2], y[2]);
  EXPECT_NE(x[0], z[0]);
  EXPECT_NE(x[0], 1u);
}

TEST(TenantCache, ApiKeyAndParse) {
  EXPECT_EQ(ApiKeyOf("Bearer sk-1", ""), "sk-1");
  EXPECT_EQ(ApiKeyOf("", "k2"), "k2");
  EXPECT_TRUE(ParseCacheIsolation("per-tenant").ok());
  auto bad = ParseCacheIsolation("private");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("private"), std::string::npos);
}

}  // namespace
}  // namespace infereng::serve
