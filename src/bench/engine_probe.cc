#include "bench/engine_probe.h"

#include <chrono>
#include <thread>

namespace infereng::bench {
namespace {

using nlohmann::json;

// GET path; records the status in info.probes; returns the parsed JSON body when 200.
std::optional<json> ProbeJson(const client::ClientOptions& opt, const char* path, Nanos timeout,
                              ServerInfo& info, bool* any_answer) {
  Result<client::FetchResponse> r = client::Fetch(opt, "GET", path, {}, timeout);
  if (!r.ok()) {
    info.probes[path] = 0;
    return std::nullopt;
  }
  *any_answer = true;
  info.probes[path] = r->status;
  if (r->status != 200) return std::nullopt;
  json j = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

Result<ServerInfo> ProbeServer(const client::ClientOptions& opt, Nanos timeout) {
  ServerInfo info;
  bool any = false;
  // A first call that distinguishes "unreachable" from "answers": /v1/models.
  Result<client::FetchResponse> first = client::Fetch(opt, "GET", "/v1/models", {}, timeout);
  if (!first.ok()) {
    if (first.status().code() == Status::Code::kUnavailable ||
        first.status().code() == Status::Code::kDeadlineExceeded) {
      return Status::Unavailable("target " + opt.base_url + " is unreachable: " + first.status().message());
    }
    return first.status();
  }
  any = true;
  info.probes["/v1/models"] = first->status;
  std::string owned_by;
  if (first->status == 200) {
    json j = json::parse(first->body, nullptr, false);
    if (!j.is_discarded() && j.contains("data") && j["data"].is_array() && !j["data"].empty()) {
      info.model_id = Str(j["data"][0], "id");
      owned_by = Str(j["data"][0], "owned_by");
    }
  }
  if (auto v = ProbeJson(opt, "/version", timeout, info, &any)) {
    info.engine_version = Str(*v, "version");
    const std::string engine = Str(*v, "engine");
    if (!engine.empty()) info.engine = engine;
    else if (v->dump().find("infereng") != std::string::npos) info.engine = "infereng";
    else if (!info.engine_version.empty()) info.engine = "vllm";  // vLLM and TRT-LLM answer {"version"}
  }
  if (auto p = ProbeJson(opt, "/props", timeout, info, &any)) {
    if (p->contains("default_generation_settings") || p->contains("build_info")) {
      info.engine = "llamacpp";
      info.engine_version = Str(*p, "build_info");
    }
  }
  if (auto t = ProbeJson(opt, "/info", timeout, info, &any)) {
    if (t->contains("model_id") && t->contains("version")) {
      info.engine = "tgi";
      info.engine_version = Str(*t, "version");
      info.model_revision = Str(*t, "model_sha");
      if (info.model_id.empty()) info.model_id = Str(*t, "model_id");
    }
  }
  if (auto s = ProbeJson(opt, "/get_server_info", timeout, info, &any)) {
    info.engine = "sglang";
    if (std::string v = Str(*s, "version"); !v.empty()) info.engine_version = v;
  }
  if (info.engine == "unknown" || info.engine == "vllm") {
    if (owned_by == "vllm" || owned_by == "sglang" || owned_by == "llamacpp" || owned_by == "infereng") {
      info.engine = owned_by;
    } else if (owned_by == "tensorrt_llm") {
      info.engine = "tensorrt-llm";
    }
  }
  // /tokenize: a one-word probe per request shape (vLLM/SGLang "prompt", llama.cpp
  // "content"); the counter later sends exactly the shape that answered.
  for (const char* field : {"prompt", "content"}) {
    Result<client::FetchResponse> tok = client::Fetch(opt, "POST", "/tokenize", json{{field, "hello"}}.dump(), timeout);
    info.probes["/tokenize"] = tok.ok() ? tok->status : 0;  // the last shape tried
    if (!tok.ok() || tok->status != 200) continue;
    json j = json::parse(tok->body, nullptr, false);
    // A field the server ignores still answers 200 (llama.cpp: {"tokens": []}): "hello" must count.
    const bool counted = j.is_object() && ((j.contains("count") && j["count"].is_number_integer() && j["count"].get<int64_t>() > 0) ||
                                           (j.contains("tokens") && j["tokens"].is_array() && !j["tokens"].empty()));
    if (counted) {
      info.has_tokenize = true;
      info.tokenize_field = field;
      break;
    }
  }
  Result<client::FetchResponse> met = client::Fetch(opt, "GET", "/metrics", {}, timeout);
  info.probes["/metrics"] = met.ok() ? met->status : 0;
  info.has_metrics = met.ok() && met->status == 200;
  if (info.engine == "llamacpp") {  // per-slot state beside /metrics (client/llamacpp_slots.h)
    Result<client::FetchResponse> slots = client::Fetch(opt, "GET", "/slots", {}, timeout);
    info.probes["/slots"] = slots.ok() ? slots->status : 0;
    info.has_slots = slots.ok() && slots->status == 200;
  }
  return info;
}

Status WaitHealthy(const client::ClientOptions& opt, Nanos timeout) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(timeout);
  std::string last = "no answer";
  for (;;) {
    Result<client::FetchResponse> r = client::Fetch(opt, "GET", "/health", {}, 2 * kNanosPerSecond);
    if (r.ok() && r->status == 200) return Status::Ok();
    last = r.ok() ? "HTTP " + std::to_string(r->status) : r.status().message();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("target " + opt.base_url + " did not become healthy: " + last);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TokenCountFn MakeTokenizeCounter(const client::ClientOptions& opt, const ServerInfo& info,
                                 ApiEndpoint endpoint) {
  const bool messages = endpoint == ApiEndpoint::kChat && (info.engine == "vllm" || info.engine == "infereng");
  const std::string field = info.tokenize_field.empty() ? "prompt" : info.tokenize_field;
  const std::string model = field == "prompt" ? info.model_id : std::string();
  return [opt, messages, field, model](const std::string& text) -> Result<int64_t> {
    json body;
    if (!model.empty()) body["model"] = model;
    if (messages) {
      body["messages"] = json::array({{{"role", "user"}, {"content", text}}});
    } else {
      body[field] = text;
    }
    INFERENG_ASSIGN_OR_RETURN(client::FetchResponse r,
                              client::Fetch(opt, "POST", "/tokenize", body.dump(), 30 * kNanosPerSecond));
    if (r.status != 200) return Status::ProtocolError("POST /tokenize answered HTTP " + std::to_string(r.status));
    json j = json::parse(r.body, nullptr, false);
    if (j.is_discarded()) return Status::ProtocolError("POST /tokenize: the answer is not JSON");
    if (auto c = j.find("count"); c != j.end() && c->is_number_integer()) return c->get<int64_t>();
    if (auto t = j.find("tokens"); t != j.end() && t->is_array()) return static_cast<int64_t>(t->size());
    return Status::ProtocolError("POST /tokenize: expected {\"count\": N} or {\"tokens\": [...]}");
  };
}

Result<int64_t> ServerPromptTokens(const client::ClientOptions& opt, ApiEndpoint endpoint,
                                   const std::string& model, const std::string& text, Nanos timeout) {
  json body;
  if (!model.empty()) body["model"] = model;
  const bool rerank = endpoint == ApiEndpoint::kRerank;
  if (endpoint == ApiEndpoint::kEmbeddings) {
    body["input"] = json::array({text});  // one input: its usage.prompt_tokens is the text's
  } else if (rerank) {
    // One pair of the text with itself: half its tokens are the text's, with half of what
    // the server adds per pair ([CLS] q [SEP] d [SEP]), so a query and a document built to
    // this count add up to the pair's (an odd overhead loses half a token per pair).
    body["query"] = text;
    body["documents"] = json::array({text});
  } else {
    if (endpoint == ApiEndpoint::kChat) {
      body["messages"] = json::array({{{"role", "user"}, {"content", text}}});
    } else {
      body["prompt"] = text;
    }
    body["max_tokens"] = 1;
    body["stream"] = false;
  }
  const char* path = EndpointPath(endpoint);
  INFERENG_ASSIGN_OR_RETURN(client::FetchResponse r, client::Fetch(opt, "POST", path, body.dump(), timeout));
  if (r.status != 200) {
    std::string snippet = r.body.substr(0, 200);
    for (char& c : snippet) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return Status::ProtocolError(std::string("POST ") + path + " answered HTTP " + std::to_string(r.status) +
                                 (snippet.empty() ? "" : ": " + snippet));
  }
  json j = json::parse(r.body, nullptr, false);
  if (j.is_object()) {
    if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
      if (auto p = u->find("prompt_tokens"); p != u->end() && p->is_number_integer()) {
        return rerank ? p->get<int64_t>() / 2 : p->get<int64_t>();
      }
      // vLLM's and Jina's rerank usage has only total_tokens (there is no completion).
      if (auto t = u->find("total_tokens"); rerank && t != u->end() && t->is_number_integer()) return t->get<int64_t>() / 2;
    }
  }
  return Status::ProtocolError(std::string("POST ") + path + ": the answer has no usage.prompt_tokens");
}

Result<std::string> ScrapeMetrics(const client::ClientOptions& opt) {
  INFERENG_ASSIGN_OR_RETURN(client::FetchResponse r, client::Fetch(opt, "GET", "/metrics", {}, 10 * kNanosPerSecond));
  if (r.status != 200) return Status::NotFound("GET /metrics answered HTTP " + std::to_string(r.status));
  return std::move(r.body);
}

}  // namespace infereng::bench
