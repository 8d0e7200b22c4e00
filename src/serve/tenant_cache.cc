#include "serve/tenant_cache.h"

#include <string>

#include "serve/text_model.h"

namespace infereng::serve {

namespace {

uint64_t HashBytes(std::string_view s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;  // FNV-1a
  return h;
}

}  // namespace

Result<CacheIsolation> ParseCacheIsolation(std::string_view text) {
  if (text == "shared") return CacheIsolation::kShared;
  if (text == "per-tenant") return CacheIsolation::kPerTenant;
  return Status::InvalidArgument("--prefix-cache: expected shared or per-tenant, got \"" + std::string(text) + "\"");
}

uint64_t TenantSalt(CacheIsolation isolation, std::string_view api_key, std::string_view cache_salt) {
  if (isolation == CacheIsolation::kShared || (api_key.empty() && cache_salt.empty())) return 0;
  uint64_t h = HashBytes(api_key, 0xcbf29ce484222325ULL);
  h = HashBytes("\x1f", h);  // keeps ("ab","c") apart from ("a","bc")
  h = HashBytes(cache_salt, h);
  return Mix64(h) | 1;  // never 0
}

std::string_view ApiKeyOf(std::string_view authorization, std::string_view x_api_key) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer) {
    return authorization.substr(kBearer.size());
  }
  if (!authorization.empty()) return authorization;
  return x_api_key;
}

void SaltBlockHashes(std::vector<uint64_t>& hashes, uint64_t salt) {
  if (salt == 0) return;
  for (uint64_t& h : hashes) h = Mix64(h ^ salt);
}

}  // namespace infereng::serve
