// EmbeddingsSummary's input-token rule and JSON (see embeddings_summary.h).
#include "metrics/embeddings_summary.h"

#include "metrics/summary_json.h"

namespace infereng::metrics {

using nlohmann::json;

int64_t EmbeddingInputTokens(const RequestRecord& r) {
  return r.prompt_tokens >= 0 ? r.prompt_tokens : r.input_tokens_target;
}

const char* EmbeddingsKey(const EmbeddingsSummary& e) { return e.rerank ? "rerank" : "embeddings"; }
const char* ItemsName(const EmbeddingsSummary& e) { return e.rerank ? "documents" : "items"; }

json EmbeddingsToJson(const EmbeddingsSummary& e) {
  return json{{"requests", e.requests},
              {"items", e.items},
              {"input_tokens", e.input_tokens},
              {"window_items", e.window_items},
              {"window_input_tokens", e.window_input_tokens},
              {"items_per_s", e.items_per_s},
              {"input_tokens_per_s", e.input_tokens_per_s},
              {"items_per_request", SampleStatsToJson(e.items_per_request)},
              {"input_tokens_per_item", SampleStatsToJson(e.input_tokens_per_item)}};
}

Result<EmbeddingsSummary> EmbeddingsFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  EmbeddingsSummary e;
  for (auto [key, field] : {std::pair{"requests", &e.requests}, {"items", &e.items}, {"input_tokens", &e.input_tokens},
                            {"window_items", &e.window_items}, {"window_input_tokens", &e.window_input_tokens}}) {
    auto it = j.find(key);
    if (it == j.end()) return Status::InvalidArgument(where + "." + key + ": missing");
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Status::InvalidArgument(where + "." + key + ": expected an integer >= 0");
    }
    *field = it->get<int64_t>();
  }
  for (auto [key, field] : {std::pair{"items_per_s", &e.items_per_s}, {"input_tokens_per_s", &e.input_tokens_per_s}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return Status::InvalidArgument(where + "." + key + ": expected a number");
    *field = it->get<double>();
  }
  for (auto [key, field] : {std::pair{"items_per_request", &e.items_per_request},
                            {"input_tokens_per_item", &e.input_tokens_per_item}}) {
    auto it = j.find(key);
    if (it == j.end()) return Status::InvalidArgument(where + "." + key + ": missing");
    INFERENG_ASSIGN_OR_RETURN(*field, SampleStatsFromJson(*it, where + "." + key));
  }
  return e;
}

}  // namespace infereng::metrics
