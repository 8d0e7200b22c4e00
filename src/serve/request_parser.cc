#include "serve/request_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/numeric.h"

#include "serve/image_input.h"
#include "serve/text_model.h"

namespace infereng::serve {

using nlohmann::json;

std::string ApiError::ToJson() const {
  json j = {{"error",
             {{"message", message},
              {"type", type},
              {"param", param.empty() ? json(nullptr) : json(param)},
              {"code", code.empty() ? json(http_status) : json(code)}}}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

constexpr int kMaxDepth = 64;

ApiError Bad(std::string param, std::string message) {
  return MakeApiError(400, std::move(message), "invalid_request_error", std::move(param));
}

std::string TypeName(const json& v) { return v.type_name(); }

// Nesting depth outside strings; rejects pathological bodies before the JSON parser runs.
bool DepthOk(std::string_view body) {
  int depth = 0;
  bool in_str = false, esc = false;
  for (char c : body) {
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '[' || c == '{') { if (++depth > kMaxDepth) return false; }
    else if (c == ']' || c == '}') --depth;
  }
  return true;
}

std::optional<ApiError> ParseBody(std::string_view body, json& out) {
  if (body.empty()) return Bad("", "request body is empty: expected a JSON object");
  if (!DepthOk(body)) return Bad("", "request body nests deeper than 64 levels");
  try {
    out = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for huge numbers
    return Bad("", std::string("request body is not valid JSON: ") + e.what());
  }
  if (!out.is_object()) return Bad("", "request body must be a JSON object, got " + TypeName(out));
  return std::nullopt;
}

// Parses `body` as a JSON object and fills the outcome's params with `fill` (which returns
// the error, if any); a JSON type the fill did not check becomes a 400, never an exception.
template <typename Outcome, typename Fill>
Outcome ParseObject(std::string_view body, Fill fill) {
  Outcome out;
  json j;
  if (auto e = ParseBody(body, j)) {
    out.error = std::move(e);
    return out;
  }
  try {
    out.error = fill(j, out.params);
  } catch (const json::exception& e) {  // defensive: a type we did not check
    out.error = Bad("", std::string("bad request body: ") + e.what());
  }
  return out;
}

// Integer field: absent/null -> nullopt; wrong type -> error.
std::optional<ApiError> GetInt(const json& j, const char* key, std::optional<int64_t>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_number_integer() || it->is_number_unsigned()) {
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Bad(key, std::string(key) + ": value is too large");
    }
    out = it->get<int64_t>();
    return std::nullopt;
  }
  if (it->is_number_float()) {
    // A whole float (2.0, 1e3) counts as an integer; the range check comes before any cast
    // (numbers too big for uint64, like 2^64, arrive here as floats).
    const double d = it->get<double>();
    if (std::trunc(d) == d && std::isfinite(d)) {
      if (auto v = DoubleToInt64(d)) {
        out = *v;
        return std::nullopt;
      }
      return Bad(key, std::string(key) + ": value is too large in magnitude for a 64-bit integer");
    }
  }
  return Bad(key, std::string(key) + ": expected an integer, got " + TypeName(*it));
}

std::optional<ApiError> GetBool(const json& j, const char* key, bool& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return Bad(key, std::string(key) + ": expected a boolean, got " + TypeName(*it));
  out = it->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> CheckNumber(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null() || it->is_number()) return std::nullopt;
  return Bad(key, std::string(key) + ": expected a number, got " + TypeName(*it));
}

// An image_url part: its image's tokens by the model's rule, appended to `ids` (their ids
// come from the image's digest, so the same image repeated hits the prefix cache, as in
// vLLM), counted into `p`. `where` names the part in errors.
std::optional<ApiError> AppendImage(const json& part, const std::string& where, const card::VisionSpec* vision,
                                    std::vector<uint32_t>& ids, CompletionParams* p) {
  if (vision == nullptr || p == nullptr) {
    return Bad("messages", where + ": this model does not accept images (a text-only model)");
  }
  auto iu = part.find("image_url");
  const json* url = nullptr;
  if (iu != part.end() && iu->is_object()) {
    if (auto u = iu->find("url"); u != iu->end() && u->is_string()) url = &*u;
  } else if (iu != part.end() && iu->is_string()) {
    url = &*iu;  // the older shorthand {"type":"image_url","image_url":"data:..."}
  }
  if (url == nullptr) return Bad("messages", where + ": image_url part without a string image_url.url");
  const ImageRead img = ReadImageUrl(url->get_ref<const std::string&>());
  if (!img.ok()) return Bad("messages", where + ": " + img.error);
  const Result<card::ImageCost> cost = card::ImageCostFor(*vision, img.header.width, img.header.height);
  if (!cost.ok()) return Bad("messages", where + ": " + cost.status().message());
  if (cost->tokens > (int64_t{1} << 24)) return Bad("messages", where + ": the image is too large");
  if (p->images == 0) p->image_begin = static_cast<int32_t>(std::min<size_t>(ids.size(), INT32_MAX));
  for (int64_t k = 0; k < cost->tokens; ++k) {
    ids.push_back(static_cast<uint32_t>(Mix64(img.header.digest + static_cast<uint64_t>(k)) % kVocabSize));
  }
  ++p->images;
  p->image_tokens += cost->tokens;
  p->image_patches += cost->patches;
  p->image_end = static_cast<int32_t>(std::min<size_t>(ids.size(), INT32_MAX));
  return std::nullopt;
}

std::optional<ApiError> TokenizeMessages(const json& j, std::vector<uint32_t>& ids,
                                         const card::VisionSpec* vision = nullptr, CompletionParams* p = nullptr) {
  auto it = j.find("messages");
  if (it == j.end() || it->is_null()) return Bad("messages", "messages: required for chat completions");
  if (!it->is_array()) return Bad("messages", "messages: expected an array, got " + TypeName(*it));
  if (it->empty()) return Bad("messages", "messages: must not be empty");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return Bad("messages", where + ": expected an object, got " + TypeName(m));
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) return Bad("messages", where + ".role: expected a string");
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) continue;  // e.g. assistant tool-call turns
    if (content->is_string()) {
      TokenizeAppend(content->get_ref<const std::string&>(), ids);
    } else if (content->is_array()) {
      for (std::size_t k = 0; k < content->size(); ++k) {
        const json& part = (*content)[k];
        if (!part.is_object()) return Bad("messages", where + ".content: parts must be objects");
        auto type = part.find("type");
        if (type != part.end() && type->is_string() && *type == "image_url") {
          if (auto e = AppendImage(part, where + ".content[" + std::to_string(k) + "]", vision, ids, p)) return e;
          continue;
        }
        if (type == part.end() || !type->is_string() || *type != "text") {
          return Bad("messages", where + ".content: only parts of type \"text\" and \"image_url\" are supported");
        }
        auto text = part.find("text");
        if (text == part.end() || !text->is_string()) return Bad("messages", where + ".content: text part without a string \"text\"");
        TokenizeAppend(text->get_ref<const std::string&>(), ids);
      }
    } else {
      return Bad("messages", where + ".content: expected a string or an array, got " + TypeName(*content));
    }
  }
  return std::nullopt;
}

std::optional<ApiError> TokenizePrompt(const json& j, const char* key, std::vector<uint32_t>& ids) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Bad(key, std::string(key) + ": required");
  if (it->is_string()) {
    TokenizeAppend(it->get_ref<const std::string&>(), ids);
    return std::nullopt;
  }
  if (it->is_array()) {
    if (it->empty()) return Bad(key, std::string(key) + ": must not be empty");
    if ((*it)[0].is_string()) {
      if (it->size() > 1) return Bad(key, std::string(key) + ": batched prompts (more than one) are not supported");
      TokenizeAppend((*it)[0].get_ref<const std::string&>(), ids);
      return std::nullopt;
    }
    for (const json& t : *it) {
      if (!t.is_number_integer() && !t.is_number_unsigned()) {
        return Bad(key, std::string(key) + ": expected a string, an array of one string, or an array of token ids");
      }
      int64_t v = t.get<int64_t>();
      if (v < 0 || v >= kVocabSize) return Bad(key, std::string(key) + ": token id out of range");
      ids.push_back(static_cast<uint32_t>(v));
    }
    return std::nullopt;
  }
  return Bad(key, std::string(key) + ": expected a string or an array, got " + TypeName(*it));
}

std::optional<ApiError> Unsupported(const json& j, Endpoint endpoint) {
  std::optional<int64_t> n;
  if (auto e = GetInt(j, "n", n)) return e;
  if (n && *n != 1) return Bad("n", "n: only n=1 is supported by this server");
  std::optional<int64_t> best_of;
  if (auto e = GetInt(j, "best_of", best_of)) return e;
  if (best_of && *best_of != 1) return Bad("best_of", "best_of: only best_of=1 is supported by this server");
  for (const char* key : {"tools", "functions"}) {
    auto it = j.find(key);
    if (it != j.end() && !it->is_null() && !(it->is_array() && it->empty())) {
      return Bad(key, std::string(key) + ": tool calling is not supported by this server");
    }
  }
  auto tc = j.find("tool_choice");
  if (tc != j.end() && !tc->is_null() && !(tc->is_string() && *tc == "none")) {
    return Bad("tool_choice", "tool_choice: tool calling is not supported by this server");
  }
  auto lp = j.find("logprobs");
  if (lp != j.end() && !lp->is_null() && !(lp->is_boolean() && !lp->get<bool>())) {
    return Bad("logprobs", "logprobs: log probabilities are not supported by this server");
  }
  auto tlp = j.find("top_logprobs");
  if (tlp != j.end() && !tlp->is_null() && !(tlp->is_number() && tlp->get<double>() == 0)) {
    return Bad("top_logprobs", "top_logprobs: log probabilities are not supported by this server");
  }
  if (endpoint == Endpoint::kCompletions) {
    bool echo = false;
    if (auto e = GetBool(j, "echo", echo)) return e;
    if (echo) return Bad("echo", "echo: not supported by this server");
    auto suffix = j.find("suffix");
    if (suffix != j.end() && !suffix->is_null()) return Bad("suffix", "suffix: not supported by this server");
  }
  return std::nullopt;
}

std::optional<ApiError> ParseStop(const json& j, std::vector<std::string>& stop) {
  auto it = j.find("stop");
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    stop.push_back(it->get<std::string>());
    return std::nullopt;
  }
  if (!it->is_array()) return Bad("stop", "stop: expected a string or an array of strings, got " + TypeName(*it));
  if (it->size() > 16) return Bad("stop", "stop: at most 16 stop strings");
  for (const json& s : *it) {
    if (!s.is_string()) return Bad("stop", "stop: expected an array of strings");
    if (s.get_ref<const std::string&>().size() > 256) return Bad("stop", "stop: a stop string is longer than 256 bytes");
    stop.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

// The served model, or 404 (vLLM's answer to another model name); absent: the served one.
std::optional<ApiError> CheckModel(const json& j, const ParseLimits& limits) {
  auto model = j.find("model");
  if (model != j.end() && !model->is_null()) {
    if (!model->is_string()) return Bad("model", "model: expected a string, got " + TypeName(*model));
    if (!limits.model_name.empty() && *model != limits.model_name) {
      return MakeApiError(404, "The model `" + model->get<std::string>() + "` does not exist.", "NotFoundError", "model");
    }
  }
  return std::nullopt;
}

std::optional<ApiError> ParseAll(const json& j, Endpoint endpoint, const ParseLimits& limits, CompletionParams& p) {
  if (auto e = CheckModel(j, limits)) return e;
  if (auto e = Unsupported(j, endpoint)) return e;
  if (endpoint == Endpoint::kChat) {
    if (auto e = TokenizeMessages(j, p.prompt_ids, limits.vision, &p)) return e;
  } else {
    if (auto e = TokenizePrompt(j, "prompt", p.prompt_ids)) return e;
  }
  for (const char* key : {"temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty",
                          "repetition_penalty"}) {
    if (auto e = CheckNumber(j, key)) return e;
  }
  std::optional<int64_t> max_tokens, min_tokens, seed;
  if (auto e = GetInt(j, "max_tokens", max_tokens)) return e;
  if (!max_tokens) {
    if (auto e = GetInt(j, "max_completion_tokens", max_tokens)) return e;
  }
  if (auto e = GetInt(j, "min_tokens", min_tokens)) return e;
  if (auto e = GetInt(j, "seed", seed)) return e;
  if (auto e = GetBool(j, "ignore_eos", p.ignore_eos)) return e;
  if (auto e = GetBool(j, "stream", p.stream)) return e;
  if (auto e = ParseStop(j, p.stop)) return e;
  if (auto salt = j.find("cache_salt"); salt != j.end() && !salt->is_null()) {
    if (!salt->is_string()) return Bad("cache_salt", "cache_salt: expected a string, got " + TypeName(*salt));
    p.cache_salt = salt->get<std::string>();
  }

  auto so = j.find("stream_options");
  if (so != j.end() && !so->is_null()) {
    if (!so->is_object()) return Bad("stream_options", "stream_options: expected an object, got " + TypeName(*so));
    if (!p.stream) return Bad("stream_options", "Stream options can only be defined when `stream=True`.");
    if (auto e = GetBool(*so, "include_usage", p.include_usage)) return Bad("stream_options", "stream_options." + e->message);
    if (auto e = GetBool(*so, "continuous_usage_stats", p.continuous_usage)) {
      return Bad("stream_options", "stream_options." + e->message);
    }
  }

  auto prompt_len = static_cast<int64_t>(p.prompt_ids.size());
  if (prompt_len == 0) {
    return Bad(endpoint == Endpoint::kChat ? "messages" : "prompt", "the prompt is empty (0 tokens)");
  }
  if (prompt_len >= limits.max_model_len) {
    return Bad(endpoint == Endpoint::kChat ? "messages" : "prompt",
               "This model's maximum context length is " + std::to_string(limits.max_model_len) +
                   " tokens. However, your request has " + std::to_string(prompt_len) +
                   " input tokens. Please reduce the length of the input messages.");
  }
  if (max_tokens && *max_tokens < 1) return Bad("max_tokens", "max_tokens: must be at least 1, got " + std::to_string(*max_tokens));
  int64_t room = limits.max_model_len - prompt_len;
  int64_t mt = max_tokens ? *max_tokens : (endpoint == Endpoint::kChat ? room : std::min<int64_t>(limits.default_max_tokens, room));
  if (mt > room) {
    // prompt_len + mt can exceed INT64_MAX (max_tokens = 2^63-1): both are in [0, 2^63), so
    // their sum is exact in uint64_t, where a signed sum would overflow (undefined).
    const uint64_t requested = static_cast<uint64_t>(prompt_len) + static_cast<uint64_t>(mt);
    return Bad("max_tokens", "This model's maximum context length is " + std::to_string(limits.max_model_len) +
                                 " tokens. However, you requested " + std::to_string(requested) + " tokens (" +
                                 std::to_string(prompt_len) + " in the messages, " + std::to_string(mt) +
                                 " in the completion). Please reduce the length of the messages or completion.");
  }
  p.max_tokens = static_cast<int32_t>(mt);
  if (min_tokens) {
    if (*min_tokens < 0) return Bad("min_tokens", "min_tokens: must be at least 0");
    if (*min_tokens > mt) return Bad("min_tokens", "min_tokens: must be less than or equal to max_tokens");
    p.min_tokens = static_cast<int32_t>(*min_tokens);
  }
  if (seed) p.seed = static_cast<uint64_t>(*seed);
  p.endpoint = endpoint;
  return std::nullopt;
}

}  // namespace

ParseOutcome ParseCompletionRequest(std::string_view body, Endpoint endpoint, const ParseLimits& limits) {
  return ParseObject<ParseOutcome>(body, [&](const json& j, CompletionParams& p) { return ParseAll(j, endpoint, limits, p); });
}

// ---- /v1/embeddings
namespace {

std::optional<ApiError> ParseEmbeddingsAll(const json& j, const ParseLimits& limits, EmbeddingsParams& p) {
  if (auto e = CheckModel(j, limits)) return e;
  auto in = j.find("input");
  if (in == j.end() || in->is_null()) return Bad("input", "input: required (a string or an array of strings)");
  if (in->is_string()) {
    p.inputs.emplace_back();
    TokenizeAppend(in->get_ref<const std::string&>(), p.inputs.back());
  } else if (in->is_array()) {
    if (in->empty()) return Bad("input", "input: must not be an empty list");
    if (in->size() > kMaxEmbeddingInputs) {
      return Bad("input", "input: at most " + std::to_string(kMaxEmbeddingInputs) + " inputs per request, got " +
                              std::to_string(in->size()));
    }
    for (std::size_t i = 0; i < in->size(); ++i) {
      const json& item = (*in)[i];
      if (!item.is_string()) {
        return Bad("input", "input[" + std::to_string(i) + "]: expected a string, got " + TypeName(item) +
                                " (token-id inputs are not supported by this server)");
      }
      p.inputs.emplace_back();
      TokenizeAppend(item.get_ref<const std::string&>(), p.inputs.back());
    }
  } else {
    return Bad("input", "input: expected a string or an array of strings, got " + TypeName(*in));
  }
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const auto n = static_cast<int64_t>(p.inputs[i].size());
    const std::string where = in->is_string() ? std::string("input") : "input[" + std::to_string(i) + "]";
    if (n == 0) return Bad("input", where + ": is empty (0 tokens)");
    if (n >= limits.max_model_len) {
      return Bad("input", where + ": " + std::to_string(n) + " tokens; this model's maximum context length is " +
                              std::to_string(limits.max_model_len) + " tokens");
    }
    p.prompt_tokens += n;
  }
  if (p.prompt_tokens >= limits.max_model_len) {
    return Bad("input", "input: " + std::to_string(p.prompt_tokens) + " tokens in total; this server runs a batch as "
                        "one prefill of at most " + std::to_string(limits.max_model_len - 1) + " tokens (send fewer inputs)");
  }
  if (auto f = j.find("encoding_format"); f != j.end() && !f->is_null()) {
    if (!f->is_string()) return Bad("encoding_format", "encoding_format: expected a string, got " + TypeName(*f));
    if (*f != "float") return Bad("encoding_format", "encoding_format: only \"float\" is supported by this server");
  }
  std::optional<int64_t> dims;
  if (auto e = GetInt(j, "dimensions", dims)) return e;
  if (dims) {
    if (*dims < 1 || *dims > kEmbeddingDimension) {
      return Bad("dimensions", "dimensions: must be between 1 and " + std::to_string(kEmbeddingDimension) + ", got " +
                                   std::to_string(*dims));
    }
    p.dimensions = static_cast<int32_t>(*dims);
  }
  if (auto u = j.find("user"); u != j.end() && !u->is_null() && !u->is_string()) {
    return Bad("user", "user: expected a string, got " + TypeName(*u));
  }
  return std::nullopt;
}

}  // namespace

EmbeddingsOutcome ParseEmbeddingsRequest(std::string_view body, const ParseLimits& limits) {
  return ParseObject<EmbeddingsOutcome>(body, [&](const json& j, EmbeddingsParams& p) { return ParseEmbeddingsAll(j, limits, p); });
}

// ---- /v1/rerank
namespace {

std::optional<ApiError> ParseRerankAll(const json& j, const ParseLimits& limits, RerankParams& p) {
  if (auto e = CheckModel(j, limits)) return e;
  auto q = j.find("query");
  if (q == j.end() || q->is_null()) return Bad("query", "query: required (a string)");
  if (!q->is_string()) return Bad("query", "query: expected a string, got " + TypeName(*q));
  TokenizeAppend(q->get_ref<const std::string&>(), p.query);
  if (p.query.empty()) return Bad("query", "query: is empty (0 tokens)");
  auto docs = j.find("documents");
  if (docs == j.end() || docs->is_null()) {
    if (j.contains("texts")) return Bad("texts", "texts: this server takes \"documents\" (the vLLM/Jina/Cohere shape), not TEI's \"texts\"");
    return Bad("documents", "documents: required (an array of strings)");
  }
  if (!docs->is_array()) return Bad("documents", "documents: expected an array of strings, got " + TypeName(*docs));
  if (docs->empty()) return Bad("documents", "documents: must not be an empty list");
  if (docs->size() > kMaxRerankDocuments) {
    return Bad("documents", "documents: at most " + std::to_string(kMaxRerankDocuments) + " per request, got " +
                                std::to_string(docs->size()));
  }
  const auto query_tokens = static_cast<int64_t>(p.query.size());
  for (std::size_t i = 0; i < docs->size(); ++i) {
    const json& d = (*docs)[i];
    const std::string where = "documents[" + std::to_string(i) + "]";
    if (!d.is_string()) return Bad("documents", where + ": expected a string, got " + TypeName(d));
    p.documents.emplace_back();
    TokenizeAppend(d.get_ref<const std::string&>(), p.documents.back());
    const auto n = static_cast<int64_t>(p.documents.back().size());
    if (n == 0) return Bad("documents", where + ": is empty (0 tokens)");
    if (query_tokens + n >= limits.max_model_len) {
      return Bad("documents", where + ": the query and this document are " + std::to_string(query_tokens + n) +
                                  " tokens; this model's maximum context length is " +
                                  std::to_string(limits.max_model_len) + " tokens");
    }
    p.prompt_tokens += query_tokens + n;
    p.texts.push_back(d.get<std::string>());
  }
  if (p.prompt_tokens >= limits.max_model_len) {
    return Bad("documents", "documents: the pairs are " + std::to_string(p.prompt_tokens) + " tokens in total; this "
                            "server runs a request as one prefill of at most " + std::to_string(limits.max_model_len - 1) +
                            " tokens (send fewer documents)");
  }
  std::optional<int64_t> top_n;
  if (auto e = GetInt(j, "top_n", top_n)) return e;
  if (top_n && *top_n < 1) return Bad("top_n", "top_n: must be at least 1, got " + std::to_string(*top_n));
  p.top_n = std::min<int64_t>(top_n.value_or(INT64_MAX), static_cast<int64_t>(p.documents.size()));
  if (auto e = GetBool(j, "return_documents", p.return_documents)) return e;
  if (auto u = j.find("user"); u != j.end() && !u->is_null() && !u->is_string()) {
    return Bad("user", "user: expected a string, got " + TypeName(*u));
  }
  return std::nullopt;
}

}  // namespace

RerankOutcome ParseRerankRequest(std::string_view body, const ParseLimits& limits) {
  return ParseObject<RerankOutcome>(body, [&](const json& j, RerankParams& p) { return ParseRerankAll(j, limits, p); });
}

std::optional<ApiError> ParseTokenizeRequest(std::string_view body, std::vector<uint32_t>& ids) {
  json j;
  if (auto e = ParseBody(body, j)) return e;
  try {
    if (j.contains("messages")) return TokenizeMessages(j, ids);
    if (j.contains("prompt")) return TokenizePrompt(j, "prompt", ids);
    if (j.contains("content")) return TokenizePrompt(j, "content", ids);
  } catch (const json::exception& e) {
    return Bad("", std::string("bad request body: ") + e.what());
  }
  return Bad("prompt", "expected \"prompt\" (or \"content\", or \"messages\")");
}

}  // namespace infereng::serve
