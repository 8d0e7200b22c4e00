// Tenant isolation of the prefix cache: which requests may share cached KV blocks.
//
// A tenant is the request's API key (`Authorization: Bearer KEY` or `x-api-key`) together
// with the `cache_salt` body field (vLLM's name). With kShared the cache is one pool: a
// tenant's prompt is served faster when another tenant sent the same prefix, a timing side
// channel `infereng probe --only cache-isolation` measures. With kPerTenant every block
// hash is mixed with the tenant's salt, so equal prompts of different tenants never share
// a block (and within a tenant, prefixes still chain as before).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace infereng::serve {

enum class CacheIsolation { kShared, kPerTenant };

// "shared" or "per-tenant"; errors name the value.
Result<CacheIsolation> ParseCacheIsolation(std::string_view text);

// The salt of a request's tenant; 0 (no salting) with kShared or when both are empty.
uint64_t TenantSalt(CacheIsolation isolation, std::string_view api_key, std::string_view cache_salt);

// The API key of a request from its Authorization (Bearer) or x-api-key header value.
std::string_view ApiKeyOf(std::string_view authorization, std::string_view x_api_key);

// Mixes `salt` into each block hash (no-op for salt 0). Hashes equal before stay equal
// after, for the same salt; for different salts they differ.
void SaltBlockHashes(std::vector<uint64_t>& hashes, uint64_t salt);

}  // namespace infereng::serve
