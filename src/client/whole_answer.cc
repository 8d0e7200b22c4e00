// A generation answered whole, read into one output event (see whole_answer.h).
#include "client/whole_answer.h"

#include <string>

#include <nlohmann/json.hpp>

namespace infereng::client {

Result<ChunkInfo> ParseWholeAnswer(Dialect dialect, std::string_view body) {
  const std::string what(TraitsOf(dialect).name);
  Result<ChunkInfo> info = InterpretData(dialect, body);  // the one parse of a good answer
  if (!info.ok()) {
    // Name what came instead of repeating the stream parser's words ("SSE data ...").
    if (!nlohmann::json::accept(body)) {
      return Status::ProtocolError("the " + what + " answer is not JSON: " + BodyExcerpt(body));
    }
    const std::size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || body[first] != '{') {
      return Status::ProtocolError("the " + what + " answer is not a JSON object: " + BodyExcerpt(body));
    }
    return Status::ProtocolError("the " + what + " answer: " + info.status().message());
  }
  if (info->error) return Status::ProtocolError("error object in the " + what + " answer: " + info->error_message);
  if (!info->has_output() && info->usage.completion_tokens <= 0) {
    return Status::ProtocolError("no output in the " + what + " answer (no text and no completion count): " +
                                 BodyExcerpt(body));
  }
  if (info->finish_reason.empty()) info->finish_reason = "stop";
  return info;
}

JsonAnswerHandler::Verdict WholeAnswerHandler::Check(std::string_view body) const {
  Result<ChunkInfo> info = ParseWholeAnswer(dialect_, body);
  if (!info.ok()) {
    const bool error_object = info.status().message().rfind("error object", 0) == 0;
    return {error_object ? metrics::ErrorClass::kStreamError : metrics::ErrorClass::kProtocol, info.status().message()};
  }
  Verdict v;
  v.output = std::move(info).value();
  return v;
}

}  // namespace infereng::client
