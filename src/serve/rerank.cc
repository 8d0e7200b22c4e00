// Deterministic relevance scores and the /v1/rerank answer (see rerank.h).
#include "serve/rerank.h"

#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/mix64.h"

namespace infereng::serve {

double RerankScore(const std::vector<uint32_t>& query, const std::vector<uint32_t>& document) {
  uint64_t h = 0x72657261e4b0ULL;
  for (uint32_t id : query) h = Mix64(h ^ (id + 0x9e3779b97f4a7c15ULL));
  h = Mix64(h ^ 0x5345505345505345ULL);  // [SEP]: ("ab", "c") and ("a", "bc") differ
  for (uint32_t id : document) h = Mix64(h ^ (id + 0x9e3779b97f4a7c15ULL));
  // The top 53 bits, shifted half a step off 0: strictly inside (0, 1).
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

std::string RerankResponseJson(const RerankParams& p, std::string_view id, std::string_view model, const Timings& t) {
  std::vector<double> scores(p.documents.size());
  for (size_t i = 0; i < p.documents.size(); ++i) scores[i] = RerankScore(p.query, p.documents[i]);
  std::vector<size_t> order(p.documents.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&scores](size_t a, size_t b) { return scores[a] > scores[b]; });
  order.resize(static_cast<size_t>(std::clamp<int64_t>(p.top_n, 0, static_cast<int64_t>(order.size()))));
  nlohmann::json results = nlohmann::json::array();
  for (size_t i : order) {
    nlohmann::json r = {{"index", i}, {"relevance_score", scores[i]}};
    if (p.return_documents) r["document"] = {{"text", p.texts[i]}};
    results.push_back(std::move(r));
  }
  nlohmann::json j = {{"id", std::string(id)},
                      {"model", std::string(model)},
                      {"usage", {{"prompt_tokens", p.prompt_tokens}, {"total_tokens", p.prompt_tokens}}},
                      {"results", std::move(results)}};
  j["timings"] = TimingsObject(t, /*decode=*/false);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace infereng::serve
