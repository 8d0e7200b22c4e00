// A generation answered whole: the JSON body of a non-streamed chat, completions or
// transcription request (the card's `product.streaming: false`), read into the one output
// event the request has.
//
// Shapes (each read by the dialect's adapter, dialect.h, which already reads them):
//   chat:           {"choices":[{"message":{"content", "reasoning_content"}, "finish_reason"}],
//                    "usage":{"prompt_tokens","completion_tokens",...}, "timings"?}
//   completions:    {"choices":[{"text", "finish_reason"}], "usage":{...}}
//   transcription:  {"text"} with usage {"type":"tokens","input_tokens","output_tokens"}
//                   (OpenAI), {"type":"duration","seconds"} (vLLM, OpenAI whisper-1: no
//                   token count), none (whisper.cpp); verbose_json adds "segments", whose
//                   "tokens" id lists are the decoder's output when usage has no count.
//
// The user of a non-streamed answer sees nothing until all of it has arrived, so the answer
// is one output event at the moment its last byte arrived (StreamEnd::t_end): TTFT = E2E,
// and TPOT/ITL are undefined (docs/metrics.md: "a single output event"). Its tokens are the
// answer's completion count; without one the record counts the event as one token and says
// so (token_source client_count), as a stream without usage does.
//
// Thread-safety: a handler belongs to one request on the io thread.
#pragma once

#include <string_view>

#include "client/dialect.h"
#include "client/json_answer.h"

namespace infereng::client {

// The answer as one ChunkInfo (text, reasoning, usage, timings, finish reason "stop" when
// the answer names none). ProtocolError for a body that is not a JSON object, or that has
// neither output text nor a completion count ("no output in the chat answer: {...}"); an
// "error" object is a ProtocolError "error object in the chat answer: TYPE: MESSAGE".
Result<ChunkInfo> ParseWholeAnswer(Dialect dialect, std::string_view body);

class WholeAnswerHandler final : public JsonAnswerHandler {
 public:
  WholeAnswerHandler(RecordingHandler* inner, Dialect dialect) : JsonAnswerHandler(inner), dialect_(dialect) {}

 private:
  Verdict Check(std::string_view body) const override;
  Dialect dialect_;
};

}  // namespace infereng::client
