// ParseRerankResponse and RerankHandler (see rerank_response.h).
#include "client/rerank_response.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace infereng::client {

using nlohmann::json;


Result<RerankResponse> ParseRerankResponse(std::string_view body, int64_t documents) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::ProtocolError("rerank answer is not valid JSON: \"" + BodyExcerpt(body) + "\"");
  const json* results = nullptr;
  std::string name = "results";
  if (j.is_array()) {  // TEI: a bare array of {index, score}
    results = &j;
    name = "answer";
  } else if (j.is_object()) {
    if (auto e = j.find("error"); e != j.end() && !e->is_null()) return AnswerErrorObject(*e, "rerank");
    auto r = j.find("results");
    if (r == j.end()) return Status::ProtocolError("rerank answer: no \"results\" array");
    if (!r->is_array()) {
      return Status::ProtocolError("rerank answer: results: expected an array, got " + std::string(r->type_name()));
    }
    results = &*r;
  } else {
    return Status::ProtocolError("rerank answer: expected a JSON object or array, got " + std::string(j.type_name()));
  }
  RerankResponse out;
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(documents, 0)), false);
  double previous = INFINITY;
  for (size_t i = 0; i < results->size(); ++i) {
    const json& r = (*results)[i];
    const std::string where = "rerank answer: " + name + "[" + std::to_string(i) + "]";
    if (!r.is_object()) return Status::ProtocolError(where + ": expected an object, got " + std::string(r.type_name()));
    auto idx = r.find("index");
    if (idx == r.end()) return Status::ProtocolError(where + ": no \"index\"");
    if (!idx->is_number_integer() || idx->get<int64_t>() < 0 || idx->get<int64_t>() >= documents ||
        seen[idx->get<size_t>()]) {
      return Status::ProtocolError(where + ".index: " + idx->dump().substr(0, 40) + " is not a new index below " +
                                   std::to_string(documents) + " (the documents sent)");
    }
    seen[idx->get<size_t>()] = true;
    auto score = r.find("relevance_score");
    if (score == r.end()) score = r.find("score");
    if (score == r.end()) return Status::ProtocolError(where + ": no \"relevance_score\" (or \"score\")");
    if (!score->is_number() || !std::isfinite(score->get<double>())) {
      return Status::ProtocolError(where + "." + score.key() + ": expected a finite number, got " +
                                   score->dump().substr(0, 40));
    }
    const double s = score->get<double>();
    if (s > previous) out.sorted = false;
    previous = s;
    ++out.results;
  }
  if (j.is_object()) {
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      for (const char* key : {"prompt_tokens", "total_tokens"}) {
        if (auto p = u->find(key); p != u->end() && p->is_number_integer() && p->get<int64_t>() >= 0) {
          out.prompt_tokens = p->get<int64_t>();
          break;
        }
      }
    }
  }
  return out;
}

JsonAnswerHandler::Verdict RerankHandler::Check(std::string_view body) const {
  Result<RerankResponse> r = ParseRerankResponse(body, documents_);
  if (!r.ok()) return {.error = metrics::ErrorClass::kProtocol, .message = r.status().message()};
  if (r->results != expected_) {
    return {.error = metrics::ErrorClass::kMismatch,
            .message = "rerank answer has " + std::to_string(r->results) + " results for " + std::to_string(documents_) +
                       " documents (expected " + std::to_string(expected_) + ")"};
  }
  return {.prompt_tokens = r->prompt_tokens};
}

}  // namespace infereng::client
