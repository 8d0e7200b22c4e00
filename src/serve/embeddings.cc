// Deterministic embedding vectors and the /v1/embeddings answer (see embeddings.h).
#include "serve/embeddings.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/mix64.h"

namespace infereng::serve {

std::vector<float> EmbeddingVector(const std::vector<uint32_t>& ids, int32_t dimensions) {
  uint64_t h = 0x656d62656464ULL;
  for (uint32_t id : ids) h = Mix64(h ^ (id + 0x9e3779b97f4a7c15ULL));
  std::vector<float> v(static_cast<size_t>(std::max<int32_t>(dimensions, 1)));
  double norm2 = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    // Uniform in [-1, 1) from the top 53 bits of the i-th draw.
    const double u = static_cast<double>(Mix64(h + i) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    v[i] = static_cast<float>(u);
    norm2 += static_cast<double>(v[i]) * v[i];
  }
  // All zeros needs 384 draws of exactly 0.0: impossible in practice, guarded anyway.
  const double norm = norm2 > 0 ? std::sqrt(norm2) : 1.0;
  for (float& x : v) x = static_cast<float>(x / norm);
  return v;
}

std::string EmbeddingsResponseJson(const EmbeddingsParams& p, std::string_view model, const Timings& t) {
  nlohmann::json data = nlohmann::json::array();
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", EmbeddingVector(p.inputs[i], p.dimensions)}});
  }
  nlohmann::json j = {{"object", "list"},
                      {"data", std::move(data)},
                      {"model", std::string(model)},
                      {"usage", {{"prompt_tokens", p.prompt_tokens}, {"total_tokens", p.prompt_tokens}}}};
  j["timings"] = TimingsObject(t, /*decode=*/false);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace infereng::serve
