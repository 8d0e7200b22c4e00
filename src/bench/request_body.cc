#include "bench/request_body.h"

#include <iterator>

#include <fmt/format.h>

#include "core/mix64.h"

namespace infereng::bench {

EngineCaps CapsForEngine(const std::string& engine) {
  EngineCaps c;
  if (engine == "vllm" || engine == "sglang" || engine == "tensorrt-llm" || engine == "infereng") {
    c.ignore_eos = c.min_tokens = c.continuous_usage = true;
  } else if (engine == "llamacpp") {
    c.ignore_eos = true;
  }
  return c;
}

Status ApplyLengthControl(const std::string& mode, EngineCaps* caps) {
  if (mode.empty() || mode == "auto") return Status::Ok();
  if (mode == "ignore_eos" || mode == "min_tokens" || mode == "both" || mode == "none") {
    caps->ignore_eos = mode == "ignore_eos" || mode == "both";
    caps->min_tokens = mode == "min_tokens" || mode == "both";
    return Status::Ok();
  }
  return Status::InvalidArgument("--length-control " + mode + ": expected auto, ignore_eos, min_tokens, both or none");
}

namespace {

struct EndpointInfo {
  ApiEndpoint endpoint;
  const char* name;
  const char* path;
};
constexpr EndpointInfo kEndpoints[] = {{ApiEndpoint::kChat, "chat", "/v1/chat/completions"},
                                       {ApiEndpoint::kCompletions, "completions", "/v1/completions"},
                                       {ApiEndpoint::kEmbeddings, "embeddings", "/v1/embeddings"},
                                       {ApiEndpoint::kRerank, "rerank", "/v1/rerank"},
                                       {ApiEndpoint::kTranscriptions, "transcriptions", "/v1/audio/transcriptions"}};

const EndpointInfo& InfoOf(ApiEndpoint e) {
  for (const EndpointInfo& i : kEndpoints) {
    if (i.endpoint == e) return i;
  }
  return kEndpoints[0];
}

}  // namespace

const char* EndpointPath(ApiEndpoint e) { return InfoOf(e).path; }
const char* ApiEndpointName(ApiEndpoint e) { return InfoOf(e).name; }

Result<ApiEndpoint> ParseApiEndpoint(const std::string& name, const std::string& flag) {
  for (const EndpointInfo& i : kEndpoints) {
    if (name == i.name) return i.endpoint;
  }
  return Status::InvalidArgument(flag + " " + name + ": expected chat, completions, embeddings, rerank or transcriptions");
}

MultipartBody BuildTranscriptionBody(const BodyOptions& opt, const std::string& wav, int max_tokens) {
  // A boundary that does not occur in the clip (RFC 2046 §5.1.1): try until one does not.
  std::string boundary;
  for (uint64_t k = 0;; ++k) {
    boundary = fmt::format("infereng-{:016x}", Mix64(wav.size() * 1315423911ULL + k));
    if (wav.find(boundary) == std::string::npos) break;
  }
  MultipartBody out;
  out.content_type = "multipart/form-data; boundary=" + boundary;
  std::string& b = out.body;
  b.reserve(wav.size() + 1024);
  auto field = [&](std::string_view name, std::string_view value) {
    fmt::format_to(std::back_inserter(b), "--{}\r\nContent-Disposition: form-data; name=\"{}\"\r\n\r\n{}\r\n", boundary, name,
                   value);
  };
  fmt::format_to(std::back_inserter(b),
                 "--{}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"clip.wav\"\r\n"
                 "Content-Type: audio/wav\r\n\r\n",
                 boundary);
  b += wav;
  b += "\r\n";
  if (!opt.model.empty()) field("model", opt.model);
  field("response_format", opt.response_format);
  field("stream", opt.stream ? "true" : "false");
  if (opt.stream && opt.caps.continuous_usage) {
    field("stream_include_usage", "true");
    field("stream_continuous_usage_stats", "true");
  }
  if (max_tokens > 0) field("max_completion_tokens", std::to_string(max_tokens));
  fmt::format_to(std::back_inserter(b), "--{}--\r\n", boundary);
  return out;
}

std::string BuildEmbeddingsBody(const BodyOptions& opt, const std::vector<std::string>& inputs) {
  nlohmann::json j;
  if (!opt.model.empty()) j["model"] = opt.model;
  j["input"] = inputs;
  j["encoding_format"] = "float";
  return j.dump();
}

std::string BuildRerankBody(const BodyOptions& opt, const std::string& query, const std::vector<std::string>& documents) {
  nlohmann::json j;
  if (!opt.model.empty()) j["model"] = opt.model;
  j["query"] = query;
  j["documents"] = documents;
  return j.dump();
}

std::string BuildRequestBody(const BodyOptions& opt, const PromptContent& prompt, int max_tokens) {
  nlohmann::json j;
  if (!opt.model.empty()) j["model"] = opt.model;
  if (opt.endpoint == ApiEndpoint::kChat) {
    if (prompt.messages.is_array()) {
      j["messages"] = prompt.messages;
    } else if (!prompt.image_urls.empty()) {
      // The text part first, then the images (the twin places image tokens after the text).
      nlohmann::json parts = nlohmann::json::array({{{"type", "text"}, {"text", prompt.text}}});
      for (const std::string& url : prompt.image_urls) {
        parts.push_back({{"type", "image_url"}, {"image_url", {{"url", url}}}});
      }
      j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", std::move(parts)}}});
    } else {
      j["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", prompt.text}}});
    }
  } else if (prompt.messages.is_array()) {
    // Completions endpoint with a chat dataset: the contents, in order.
    std::string text;
    for (const auto& m : prompt.messages) {
      if (m.contains("content") && m["content"].is_string()) {
        if (!text.empty()) text += "\n";
        text += m["content"].get<std::string>();
      }
    }
    j["prompt"] = text;
  } else {
    j["prompt"] = prompt.text;
  }
  j["max_tokens"] = max_tokens;
  j["stream"] = opt.stream;
  if (opt.stream) {
    j["stream_options"] = {{"include_usage", true}};
    if (opt.caps.continuous_usage) j["stream_options"]["continuous_usage_stats"] = true;
  }
  if (opt.caps.ignore_eos) j["ignore_eos"] = true;
  if (opt.caps.min_tokens) j["min_tokens"] = max_tokens;
  return j.dump();
}

}  // namespace infereng::bench
