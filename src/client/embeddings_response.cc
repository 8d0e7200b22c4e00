// ParseEmbeddingsResponse and EmbeddingsHandler (see embeddings_response.h).
#include "client/embeddings_response.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace infereng::client {

using nlohmann::json;


Result<EmbeddingsResponse> ParseEmbeddingsResponse(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::ProtocolError("embeddings answer is not valid JSON: \"" + BodyExcerpt(body) + "\"");
  if (!j.is_object()) return Status::ProtocolError("embeddings answer: expected a JSON object, got " + std::string(j.type_name()));
  if (auto e = j.find("error"); e != j.end() && !e->is_null()) return AnswerErrorObject(*e, "embeddings");
  auto data = j.find("data");
  if (data == j.end()) return Status::ProtocolError("embeddings answer: no \"data\" array");
  if (!data->is_array()) return Status::ProtocolError("embeddings answer: data: expected an array, got " + std::string(data->type_name()));
  EmbeddingsResponse out;
  std::vector<bool> seen(data->size(), false);  // each index once: the order may differ from the inputs'
  for (size_t i = 0; i < data->size(); ++i) {
    const json& d = (*data)[i];
    const std::string where = "embeddings answer: data[" + std::to_string(i) + "]";
    if (!d.is_object()) return Status::ProtocolError(where + ": expected an object, got " + std::string(d.type_name()));
    if (auto idx = d.find("index"); idx != d.end() && !idx->is_null()) {
      if (!idx->is_number_integer() || idx->get<int64_t>() < 0 || idx->get<uint64_t>() >= data->size() ||
          seen[idx->get<size_t>()]) {
        return Status::ProtocolError(where + ".index: " + idx->dump().substr(0, 40) + " is not a new index below " +
                                     std::to_string(data->size()));
      }
      seen[idx->get<size_t>()] = true;
    }
    auto v = d.find("embedding");
    if (v == d.end()) return Status::ProtocolError(where + ": no \"embedding\"");
    if (v->is_string()) {
      out.dimension = -1;  // base64 (encoding_format=base64): its size is not checked
    } else if (v->is_array()) {
      for (const json& x : *v) {
        if (!x.is_number()) return Status::ProtocolError(where + ".embedding: expected numbers, got " + std::string(x.type_name()));
      }
      const auto dim = static_cast<int64_t>(v->size());
      if (dim == 0) return Status::ProtocolError(where + ".embedding: empty");
      if (i > 0 && out.dimension >= 0 && dim != out.dimension) {
        return Status::ProtocolError(where + ".embedding: " + std::to_string(dim) + " numbers, data[0] had " +
                                     std::to_string(out.dimension));
      }
      out.dimension = dim;
    } else {
      return Status::ProtocolError(where + ".embedding: expected an array of numbers or a base64 string, got " +
                                   std::string(v->type_name()));
    }
    ++out.vectors;
  }
  if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
    if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer() && p->get<int64_t>() >= 0) {
      out.prompt_tokens = p->get<int64_t>();
    }
  }
  return out;
}

JsonAnswerHandler::Verdict EmbeddingsHandler::Check(std::string_view body) const {
  Result<EmbeddingsResponse> r = ParseEmbeddingsResponse(body);
  if (!r.ok()) return {.error = metrics::ErrorClass::kProtocol, .message = r.status().message()};
  if (r->vectors != expected_) {
    return {.error = metrics::ErrorClass::kMismatch,
            .message = "embeddings answer has " + std::to_string(r->vectors) + " vectors for " +
                       std::to_string(expected_) + " inputs"};
  }
  return {.prompt_tokens = r->prompt_tokens};
}

}  // namespace infereng::client
