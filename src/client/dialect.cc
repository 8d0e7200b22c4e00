// Dialect adapters: one function per API shape, chosen through a table. See dialect.h.
#include "client/dialect.h"

#include <array>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "client/fast_chunk.h"

namespace infereng::client {
namespace {

using nlohmann::json;

constexpr std::size_t kQuoteBytes = 200;      // payload prefix quoted in protocol errors
constexpr std::size_t kMessageBytes = 1000;   // bound on error messages taken from servers

std::string Quote(std::string_view s) {
  std::string out(s.substr(0, kQuoteBytes));
  if (s.size() > kQuoteBytes) out += "...";
  return out;
}

std::string_view Trim(std::string_view s) {
  auto ws = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

// obj[key] as a string, "" when absent, null or not a string.
std::string_view StringAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

// obj[key] as a non-negative count clamped to kMaxCount; -1 when absent or not a number.
constexpr int64_t kMaxCount = int64_t{1} << 40;
int64_t IntAt(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return -1;
  if (it->is_number_float()) {
    double v = it->get<double>();
    if (!(v >= 0)) return -1;  // negative or NaN
    return v >= static_cast<double>(kMaxCount) ? kMaxCount : static_cast<int64_t>(v);
  }
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    return v > static_cast<uint64_t>(kMaxCount) ? kMaxCount : static_cast<int64_t>(v);
  }
  int64_t v = it->get<int64_t>();
  return v < 0 ? -1 : (v > kMaxCount ? kMaxCount : v);
}

// OpenAI-style usage object; zeroed objects (Ollama) are ignored.
void ReadUsage(const json& obj, Usage& usage) {
  auto it = obj.find("usage");
  if (it == obj.end() || !it->is_object()) return;
  Usage u;
  u.prompt_tokens = IntAt(*it, "prompt_tokens");
  u.completion_tokens = IntAt(*it, "completion_tokens");
  if (auto d = it->find("prompt_tokens_details"); d != it->end() && d->is_object()) {
    u.cached_tokens = IntAt(*d, "cached_tokens");
  }
  // Reasoning models (OpenAI, vLLM): how many of completion_tokens were reasoning.
  if (auto d = it->find("completion_tokens_details"); d != it->end() && d->is_object()) {
    u.reasoning_tokens = IntAt(*d, "reasoning_tokens");
  }
  if (u.prompt_tokens <= 0 && u.completion_tokens <= 0) return;  // zeroed or empty
  usage = u;
}

// A top-level `timings` object (any dialect: llama.cpp puts it on OpenAI routes too).
// Longer than this is not a phase of one request but a broken field.
constexpr double kMaxPhaseMs = 1e9;  // ~11.6 days
void ReadTimings(const json& obj, ServerTimings& out) {
  auto it = obj.find("timings");
  if (it == obj.end() || it->is_null()) return;
  if (!it->is_object()) {
    out.malformed = true;
    return;
  }
  ServerTimings t;
  for (auto [key, field] : {std::pair{"queue_ms", &t.queue_ms}, {"prompt_ms", &t.prefill_ms},
                            {"predicted_ms", &t.decode_ms}}) {
    auto f = it->find(key);
    if (f == it->end() || f->is_null()) continue;  // not reported
    const double v = f->is_number() ? f->get<double>() : -1;
    if (!(v >= 0 && v <= kMaxPhaseMs)) {  // not a number, negative, NaN or absurd
      out.malformed = true;
      return;
    }
    *field = v;
  }
  out = t;
}

// Any top-level "error" key: {"error":{"message","type",...}} or {"error":"...","error_type"}.
void ReadError(const json& obj, ChunkInfo& info) {
  auto it = obj.find("error");
  if (it == obj.end()) return;
  info.error = true;
  std::string type;
  std::string message;
  if (it->is_object()) {
    type = std::string(StringAt(*it, "type"));
    message = std::string(StringAt(*it, "message"));
    if (message.empty()) message = Quote(it->dump());
  } else if (it->is_string()) {
    message = it->get<std::string>();
    type = std::string(StringAt(obj, "error_type"));
  } else {
    message = Quote(it->dump());
  }
  info.error_message = type.empty() ? message : type + ": " + message;
  if (info.error_message.size() > kMessageBytes) info.error_message.resize(kMessageBytes);
}

void ReadFinish(const json& obj, const char* key, ChunkInfo& info) {
  std::string_view reason = StringAt(obj, key);
  if (!reason.empty()) info.finish_reason.assign(reason);
}

// ---- adapters ------------------------------------------------------------------------

void AppendChoiceText(const json& msg, ChunkInfo& info) {
  info.text.append(StringAt(msg, "content"));
  info.reasoning.append(StringAt(msg, "reasoning_content"));
  info.reasoning.append(StringAt(msg, "reasoning"));
}

Status OpenAiChat(const json& obj, ChunkInfo& info) {
  auto choices = obj.find("choices");
  if (choices == obj.end() || !choices->is_array()) return Status::Ok();  // usage-only etc.
  for (const json& choice : *choices) {
    if (!choice.is_object()) continue;
    if (auto d = choice.find("delta"); d != choice.end() && d->is_object()) AppendChoiceText(*d, info);
    if (auto m = choice.find("message"); m != choice.end() && m->is_object()) AppendChoiceText(*m, info);
    ReadFinish(choice, "finish_reason", info);
  }
  return Status::Ok();
}

Status OpenAiCompletions(const json& obj, ChunkInfo& info) {
  auto choices = obj.find("choices");
  if (choices == obj.end() || !choices->is_array()) return Status::Ok();
  for (const json& choice : *choices) {
    if (!choice.is_object()) continue;
    info.text.append(StringAt(choice, "text"));
    ReadFinish(choice, "finish_reason", info);
  }
  return Status::Ok();
}

// {index, token:{id,text,logprob,special}, generated_text, details}
Status TgiGenerate(const json& obj, ChunkInfo& info) {
  if (auto tok = obj.find("token"); tok != obj.end() && tok->is_object()) {
    auto special = tok->find("special");
    bool is_special = special != tok->end() && special->is_boolean() && special->get<bool>();
    if (!is_special) info.text.append(StringAt(*tok, "text"));
  }
  auto details = obj.find("details");
  if (details != obj.end() && details->is_object()) {
    ReadFinish(*details, "finish_reason", info);
    int64_t generated = IntAt(*details, "generated_tokens");
    if (generated > 0) info.usage.completion_tokens = generated;
  }
  auto generated_text = obj.find("generated_text");
  if (info.finish_reason.empty() && generated_text != obj.end() && generated_text->is_string()) {
    info.finish_reason = "stop";  // last event without details: the generation finished
  }
  return Status::Ok();
}

// {content, tokens, stop, tokens_predicted (cumulative), tokens_evaluated, stop_type, timings}
Status LlamaCppCompletion(const json& obj, ChunkInfo& info) {
  info.text.append(StringAt(obj, "content"));
  int64_t predicted = IntAt(obj, "tokens_predicted");
  int64_t evaluated = IntAt(obj, "tokens_evaluated");
  if (predicted >= 0 || evaluated > 0) {
    info.usage.completion_tokens = predicted;
    info.usage.prompt_tokens = evaluated;
  }
  if (auto t = obj.find("timings"); t != obj.end() && t->is_object()) {
    info.usage.cached_tokens = IntAt(*t, "cache_n");
  }
  auto stop = obj.find("stop");
  if (stop != obj.end() && stop->is_boolean() && stop->get<bool>()) {
    std::string_view type = StringAt(obj, "stop_type");
    info.finish_reason = type.empty() ? "stop" : std::string(type);
  }
  return Status::Ok();
}

// OpenAI's transcription usage of type "tokens": {input_tokens, output_tokens}. Type
// "duration" ({seconds}) has no token counts and is left out.
void ReadTokensUsage(const json& obj, ChunkInfo& info) {
  auto u = obj.find("usage");
  if (u == obj.end() || !u->is_object()) return;
  const int64_t in = IntAt(*u, "input_tokens"), out = IntAt(*u, "output_tokens");
  if (in > 0 || out > 0) {
    info.usage.prompt_tokens = in;
    info.usage.completion_tokens = out;
  }
}

// A transcription answered whole (response_format json or verbose_json): {"text", "usage",
// "segments"}. The output count is usage.output_tokens (OpenAI's type "tokens"); else, with
// verbose_json, the segments' decoder token ids (OpenAI and whisper.cpp list them per
// segment); type "duration" (vLLM, whisper-1) counts no tokens.
Status TranscriptionAnswer(const json& obj, ChunkInfo& info) {
  info.text.append(StringAt(obj, "text"));
  info.finish_reason = "stop";
  ReadTokensUsage(obj, info);
  auto segments = obj.find("segments");
  if (info.usage.completion_tokens < 0 && segments != obj.end() && segments->is_array()) {
    int64_t tokens = 0;
    bool listed = false;
    for (const json& seg : *segments) {
      if (!seg.is_object()) continue;
      if (auto t = seg.find("tokens"); t != seg.end() && t->is_array()) {
        tokens += static_cast<int64_t>(t->size());
        listed = true;
      }
    }
    if (listed) info.usage.completion_tokens = tokens;
  }
  return Status::Ok();
}

// vLLM streams a transcription as chat deltas; OpenAI as typed events whose usage counts
// input_tokens/output_tokens (type "tokens"; type "duration" has no token counts).
Status OpenAiTranscription(const json& obj, ChunkInfo& info) {
  const std::string_view type = StringAt(obj, "type");
  if (type == "transcript.text.delta") {
    info.text.append(StringAt(obj, "delta"));
    return Status::Ok();
  }
  if (type == "transcript.text.done") {
    info.finish_reason = "stop";
    ReadTokensUsage(obj, info);
    return Status::Ok();
  }
  if (auto text = obj.find("text"); type.empty() && text != obj.end() && text->is_string()) {
    return TranscriptionAnswer(obj, info);
  }
  return OpenAiChat(obj, info);
}

using Adapter = Status (*)(const json&, ChunkInfo&);

struct DialectEntry {
  DialectTraits traits;
  Adapter adapter;
  std::array<std::string_view, 2> aliases;
};

constexpr std::array<DialectEntry, 5> kDialects = {{
    {{Dialect::kOpenAiChat, "chat", "/chat/completions", true}, OpenAiChat,
     {"openai-chat", "chat-completions"}},
    {{Dialect::kOpenAiCompletions, "completions", "/completions", true}, OpenAiCompletions,
     {"openai-completions", "text"}},
    {{Dialect::kTgiGenerate, "tgi", "/generate_stream", false}, TgiGenerate,
     {"tgi-generate", "generate_stream"}},
    {{Dialect::kLlamaCppCompletion, "llamacpp", "/completion", false}, LlamaCppCompletion,
     {"llamacpp-completion", "llama.cpp"}},
    {{Dialect::kOpenAiTranscription, "transcription", "/audio/transcriptions", false}, OpenAiTranscription,
     {"openai-transcription", "transcriptions"}},
}};

const DialectEntry& EntryOf(Dialect dialect) {
  for (const DialectEntry& e : kDialects) {
    if (e.traits.dialect == dialect) return e;
  }
  return kDialects[0];  // unreachable for valid enum values
}

}  // namespace

const DialectTraits& TraitsOf(Dialect dialect) { return EntryOf(dialect).traits; }

Result<Dialect> ParseDialect(std::string_view name) {
  for (const DialectEntry& e : kDialects) {
    if (name == e.traits.name || name == e.aliases[0] || name == e.aliases[1]) return e.traits.dialect;
  }
  std::string valid;
  for (const DialectEntry& e : kDialects) valid += (valid.empty() ? "" : ", ") + std::string(e.traits.name);
  return Status::InvalidArgument("unknown API dialect \"" + Quote(name) + "\" (valid: " + valid + ")");
}

// The common OpenAI chunk takes the one-pass fast path (fast_chunk.h); whatever it
// declines gets the full parse.
Result<ChunkInfo> InterpretData(Dialect dialect, std::string_view data, bool is_error_field) {
  const std::string_view payload = Trim(data);
  if (!is_error_field && payload != "[DONE]") {
    ChunkInfo info;
    if (TryFastOpenAiChunk(dialect, payload, info)) return info;
  }
  return InterpretDataFull(dialect, data, is_error_field);
}

Result<ChunkInfo> InterpretDataFull(Dialect dialect, std::string_view data, bool is_error_field) {
  ChunkInfo info;
  std::string_view payload = Trim(data);
  if (payload == "[DONE]") {
    info.done = true;
    return info;
  }
  json obj = json::parse(payload.begin(), payload.end(), nullptr, /*allow_exceptions=*/false);
  if (is_error_field) {  // llama.cpp legacy `error: {...}`: an error whatever its shape
    info.error = true;
    if (obj.is_object() && obj.contains("error")) {
      ReadError(obj, info);
    } else if (obj.is_object()) {
      json wrapped = {{"error", std::move(obj)}};
      ReadError(wrapped, info);
    } else {
      info.error_message = Quote(payload);
    }
    return info;
  }
  if (obj.is_discarded()) {
    return Status::ProtocolError("SSE data is not JSON: \"" + Quote(payload) + "\"");
  }
  if (!obj.is_object()) {
    return Status::ProtocolError("SSE data is not a JSON object: \"" + Quote(payload) + "\"");
  }
  ReadError(obj, info);
  ReadUsage(obj, info.usage);
  ReadTimings(obj, info.timings);
  INFERENG_RETURN_IF_ERROR(EntryOf(dialect).adapter(obj, info));
  if (info.usage.completion_tokens == 0 && info.usage.prompt_tokens <= 0) info.usage = Usage{};
  return info;
}

Result<ChunkInfo> InterpretEvent(Dialect dialect, const SseEventView& event) {
  // `event: error` (a named SSE event) is treated like llama.cpp's `error:` field.
  return InterpretData(dialect, event.data, event.is_error_field || event.event == "error");
}

Result<ChunkInfo> InterpretEvent(Dialect dialect, const SseEvent& event) {
  return InterpretEvent(dialect, SseEventView{event.event, event.data, event.id, event.is_error_field});
}

// ---- token accounting ------------------------------------------------------------------

void StreamTokenCounter::On(Nanos t, const ChunkInfo& info) {
  const int64_t completion = info.usage.completion_tokens;
  if (info.has_output()) {
    metrics::Chunk chunk{.t = t, .tokens = 1, .reasoning = info.reasoning_only()};
    if (completion > completion_before_) {
      int64_t growth = completion - completion_before_;
      chunk.tokens = growth > INT32_MAX ? INT32_MAX : static_cast<int32_t>(growth);
    } else {
      continuous_ = false;
    }
    chunks_.push_back(chunk);
  }
  if (completion >= 0) completion_before_ = completion;
  if (info.usage.prompt_tokens >= 0) usage_.prompt_tokens = info.usage.prompt_tokens;
  if (completion >= 0) usage_.completion_tokens = completion;
  if (info.usage.cached_tokens >= 0) usage_.cached_tokens = info.usage.cached_tokens;
  if (info.usage.reasoning_tokens >= 0) usage_.reasoning_tokens = info.usage.reasoning_tokens;
}

metrics::TokenSource StreamTokenCounter::Finish() {
  if (!chunks_.empty() && continuous_) return metrics::TokenSource::kUsageContinuous;
  for (metrics::Chunk& c : chunks_) c.tokens = 1;
  const int64_t total = usage_.completion_tokens;
  if (total < 0) return metrics::TokenSource::kClientCount;
  const int64_t n = static_cast<int64_t>(chunks_.size());
  if (n > 0 && total >= n) {
    // Spread `total` over the chunks as evenly as integers allow (sum == total).
    for (int64_t i = 0; i < n; ++i) {
      int64_t share = (i + 1) * total / n - i * total / n;
      chunks_[static_cast<std::size_t>(i)].tokens =
          share > INT32_MAX ? INT32_MAX : static_cast<int32_t>(share);
    }
  }
  return metrics::TokenSource::kUsageFinal;
}

}  // namespace infereng::client
