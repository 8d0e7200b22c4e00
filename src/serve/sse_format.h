// Pre-built SSE chunk templates in vLLM's framing, so emitting a token costs a few
// memcpy's and no JSON building. Internal to serve/.
//
// Chat:        data: {"id":ID,"object":"chat.completion.chunk","created":T,"model":M,
//                     "choices":[{"index":0,"delta":{"content":TEXT},"logprobs":null,
//                     "finish_reason":null}]}            (+ "usage" with continuous usage)
// Completions: data: {"id":ID,"object":"text_completion","created":T,"model":M,
//                     "choices":[{"index":0,"text":TEXT,"logprobs":null,"finish_reason":null,
//                     "stop_reason":null}]}
// The chunk with the last token carries finish_reason ("length" | "stop") and stop_reason,
// as vLLM does, and the request's phases as a llama.cpp-style "timings" object (below).
// Chat starts with a role chunk {"role":"assistant","content":""}; with
// include_usage a final chunk with "choices":[] and usage precedes data: [DONE].
// A reasoning model's reasoning tokens come first, as vLLM's reasoning parsers stream them:
// "delta":{"reasoning_content":TEXT}; the final usage then carries
// "completion_tokens_details":{"reasoning_tokens":N} (completion_tokens includes them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace infereng::serve {

struct Usage {
  int64_t prompt = 0, completion = 0, cached = 0;
  int64_t reasoning = -1;  // of `completion`; < 0: not a reasoning answer (no details)
};

// The phases of one request as the engine saw them, in milliseconds of the server's clock
// (engine time / speed-up): queue = arrival at the engine -> first scheduled, prefill
// (`prompt_ms`) = first scheduled -> first token, decode (`predicted_ms`) = first token ->
// last token. Names follow llama.cpp's `timings` (prompt_n: prompt tokens computed, i.e.
// not served from the prefix cache; cache_n: served from it), plus `queue_ms`, which
// llama.cpp does not report. A phase that did not happen is < 0 and left out of the JSON.
// docs/serve.md documents the object.
struct Timings {
  double queue_ms = -1, prompt_ms = -1, predicted_ms = -1;
  int64_t prompt_n = 0, cache_n = 0, predicted_n = 0;
};

// The same object for a non-streamed answer: prompt_n and cache_n always, the phases that
// happened; predicted_n only with `decode` (the prefill-only answers have none).
nlohmann::json TimingsObject(const Timings& t, bool decode);

class SseFormat {
 public:
  // `id` is the response id, `model` the served model id (JSON-escaped here).
  // `object` replaces the chunk's object name when given ("transcription.chunk": vLLM's
  // transcription stream has chat's delta shape under its own object name).
  SseFormat(bool chat, std::string_view id, int64_t created, std::string_view model, std::string_view object = {});

  // Appends one SSE event (without HTTP chunk framing) to `out`.
  void AppendRole(std::string& out, const Usage* usage) const;
  void AppendContent(std::string& out, std::string_view text, const Usage* usage) const;
  // Chat only: a delta with reasoning_content instead of content.
  void AppendReasoning(std::string& out, std::string_view text, const Usage* usage) const;
  // finish_reason "length" | "stop"; stop_reason: the matched stop string or "" (null).
  // `timings` (may be null) goes on this chunk, as llama.cpp puts it on its last one.
  void AppendFinal(std::string& out, std::string_view text, std::string_view finish_reason,
                   std::string_view stop_reason, const Usage* usage, const Timings* timings = nullptr) const;
  void AppendUsage(std::string& out, const Usage& usage) const;
  static void AppendError(std::string& out, std::string_view error_json);
  static void AppendDone(std::string& out);

  static void AppendUsageJson(std::string& out, const Usage& u, bool details);
  static void AppendTimingsJson(std::string& out, const Timings& t);
  static void AppendJsonString(std::string& out, std::string_view s);  // with quotes

 private:
  bool chat_;
  std::string head_;  // data: {"id":...,"model":...,"choices":
};

}  // namespace infereng::serve
