#include "serve/sse_format.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace infereng::serve {

nlohmann::json TimingsObject(const Timings& t, bool decode) {
  nlohmann::json timings = {{"prompt_n", t.prompt_n}, {"cache_n", t.cache_n}};
  if (decode) timings["predicted_n"] = t.predicted_n;
  for (auto [key, v] : {std::pair{"queue_ms", t.queue_ms}, {"prompt_ms", t.prompt_ms}, {"predicted_ms", t.predicted_ms}}) {
    if (v >= 0) timings[key] = v;
  }
  return timings;
}

void SseFormat::AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  out += '"';
}

SseFormat::SseFormat(bool chat, std::string_view id, int64_t created, std::string_view model, std::string_view object)
    : chat_(chat) {
  head_ = "data: {\"id\":";
  AppendJsonString(head_, id);
  head_ += ",\"object\":";
  AppendJsonString(head_, !object.empty() ? object : chat ? "chat.completion.chunk" : "text_completion");
  head_ += ",\"created\":" + std::to_string(created) + ",\"model\":";
  AppendJsonString(head_, model);
  head_ += ",\"choices\":";
}

void SseFormat::AppendUsageJson(std::string& out, const Usage& u, bool details) {
  fmt::format_to(std::back_inserter(out), "{{\"prompt_tokens\":{},\"total_tokens\":{},\"completion_tokens\":{}",
                 u.prompt, u.prompt + u.completion, u.completion);
  if (details) fmt::format_to(std::back_inserter(out), ",\"prompt_tokens_details\":{{\"cached_tokens\":{}}}", u.cached);
  if (details && u.reasoning >= 0) {
    fmt::format_to(std::back_inserter(out), ",\"completion_tokens_details\":{{\"reasoning_tokens\":{}}}", u.reasoning);
  }
  out += '}';
}

void SseFormat::AppendTimingsJson(std::string& out, const Timings& t) {
  out += '{';
  bool first = true;
  auto ms = [&](const char* key, double v) {
    if (v < 0) return;
    fmt::format_to(std::back_inserter(out), "{}\"{}\":{:.3f}", first ? "" : ",", key, v);
    first = false;
  };
  auto count = [&](const char* key, int64_t v) {
    fmt::format_to(std::back_inserter(out), "{}\"{}\":{}", first ? "" : ",", key, v);
    first = false;
  };
  ms("queue_ms", t.queue_ms);
  count("prompt_n", t.prompt_n);
  ms("prompt_ms", t.prompt_ms);
  count("cache_n", t.cache_n);
  count("predicted_n", t.predicted_n);
  ms("predicted_ms", t.predicted_ms);
  out += '}';
}

namespace {
void Tail(std::string& out, const Usage* usage, const Timings* timings = nullptr) {
  if (usage) {
    out += ",\"usage\":";
    SseFormat::AppendUsageJson(out, *usage, false);
  }
  if (timings) {
    out += ",\"timings\":";
    SseFormat::AppendTimingsJson(out, *timings);
  }
  out += "}\n\n";
}
}  // namespace

void SseFormat::AppendRole(std::string& out, const Usage* usage) const {
  out += head_;
  out += R"([{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}])";
  Tail(out, usage);
}

void SseFormat::AppendContent(std::string& out, std::string_view text, const Usage* usage) const {
  out += head_;
  if (chat_) {
    out += R"([{"index":0,"delta":{"content":)";
    AppendJsonString(out, text);
    out += R"(},"logprobs":null,"finish_reason":null}])";
  } else {
    out += R"([{"index":0,"text":)";
    AppendJsonString(out, text);
    out += R"(,"logprobs":null,"finish_reason":null,"stop_reason":null}])";
  }
  Tail(out, usage);
}

void SseFormat::AppendReasoning(std::string& out, std::string_view text, const Usage* usage) const {
  out += head_;
  out += R"([{"index":0,"delta":{"reasoning_content":)";
  AppendJsonString(out, text);
  out += R"(},"logprobs":null,"finish_reason":null}])";
  Tail(out, usage);
}

void SseFormat::AppendFinal(std::string& out, std::string_view text, std::string_view finish_reason,
                            std::string_view stop_reason, const Usage* usage, const Timings* timings) const {
  out += head_;
  out += chat_ ? R"([{"index":0,"delta":{"content":)" : R"([{"index":0,"text":)";
  AppendJsonString(out, text);
  out += chat_ ? R"(},"logprobs":null,"finish_reason":)" : R"(,"logprobs":null,"finish_reason":)";
  AppendJsonString(out, finish_reason);
  out += ",\"stop_reason\":";
  if (stop_reason.empty()) out += "null";
  else AppendJsonString(out, stop_reason);
  out += "}]";
  Tail(out, usage, timings);
}

void SseFormat::AppendUsage(std::string& out, const Usage& usage) const {
  out += head_;
  out += "[],\"usage\":";
  AppendUsageJson(out, usage, true);
  out += "}\n\n";
}

void SseFormat::AppendError(std::string& out, std::string_view error_json) {
  out += "data: ";
  out += error_json;
  out += "\n\n";
}

void SseFormat::AppendDone(std::string& out) { out += "data: [DONE]\n\n"; }

}  // namespace infereng::serve
