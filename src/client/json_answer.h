// What the one-JSON-answer endpoints (embeddings, rerank) share on the client side: the
// handler that checks an answer after the recording handler saw every byte, and the two
// messages every such parser gives (an excerpt of a body that is not JSON, an "error" object
// inside a 200 answer).
//
// Thread-safety: a handler belongs to one stream; the functions are pure.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <optional>

#include "client/dialect.h"
#include "client/http_client.h"
#include "core/status.h"

namespace infereng::client {

// The first 120 bytes of `body`, newlines as spaces, "..." when cut.
std::string BodyExcerpt(std::string_view body);

// ProtocolError "error object in the WHAT answer: TYPE: MESSAGE" for an "error" value (an
// object with type/message, or a string; anything else quoted).
Status AnswerErrorObject(const nlohmann::json& e, std::string_view what);

// A StreamHandler that passes every callback to the recording handler and, at the end of a
// 2xx answer, has the endpoint check its body (EmbeddingsHandler, RerankHandler,
// WholeAnswerHandler): a wrong answer becomes the request's error, a right one its usage
// and finish reason. A prefill-only answer (embeddings, rerank) has prompt tokens, no
// completion and finish reason "stop"; a generation answered whole (`output`) is passed to
// the recording handler as one output event at the answer's end, with its usage, timings
// and finish reason. The body itself is not passed on.
class JsonAnswerHandler : public StreamHandler {
 public:
  explicit JsonAnswerHandler(RecordingHandler* inner) : inner_(inner) {}
  void OnSend(Nanos t_send) override { inner_->OnSend(t_send); }
  void OnFirstByte(Nanos t, int http_status) override { inner_->OnFirstByte(t, http_status); }
  void OnChunk(Nanos t, const ChunkInfo& info) override { inner_->OnChunk(t, info); }
  // May destroy this handler (through the inner one's on_done): touches nothing after.
  void OnEnd(const StreamEnd& end) final;

 protected:
  struct Verdict {
    metrics::ErrorClass error = metrics::ErrorClass::kNone;  // kProtocol, kMismatch
    std::string message{};
    int64_t prompt_tokens = -1;  // the answer's usage (-1: none)
    std::optional<ChunkInfo> output{};  // a generation's whole answer (whole_answer.h)
  };
  virtual Verdict Check(std::string_view body) const = 0;

 private:
  RecordingHandler* inner_;
};

}  // namespace infereng::client
