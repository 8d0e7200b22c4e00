// The one-JSON-answer endpoints' shared messages (see json_answer.h).
#include "client/json_answer.h"

namespace infereng::client {

std::string BodyExcerpt(std::string_view body) {
  std::string s(body.substr(0, 120));
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return body.size() > 120 ? s + "..." : s;
}

Status AnswerErrorObject(const nlohmann::json& e, std::string_view what) {
  std::string text;
  if (e.is_object()) {
    for (const char* k : {"type", "message"}) {
      if (auto v = e.find(k); v != e.end() && v->is_string()) text += (text.empty() ? "" : ": ") + v->get<std::string>();
    }
  } else if (e.is_string()) {
    text = e.get<std::string>();
  }
  return Status::ProtocolError("error object in the " + std::string(what) +
                               " answer: " + (text.empty() ? e.dump().substr(0, 200) : text));
}

void JsonAnswerHandler::OnEnd(const StreamEnd& end) {
  StreamEnd e = end;
  e.body.clear();
  if (e.error == metrics::ErrorClass::kNone && e.http_status >= 200 && e.http_status < 300) {
    const Verdict v = Check(end.body);
    if (v.error != metrics::ErrorClass::kNone) {
      e.error = v.error;
      e.error_message = v.message;
    } else if (v.output) {
      // One output event at the answer's last byte (TTFT = E2E, docs/metrics.md), then its
      // usage as a stream's final usage event: the count is the answer's total, not growth.
      ChunkInfo text = *v.output;
      text.usage = Usage{};
      inner_->OnChunk(end.t_end, text);
      ChunkInfo usage;
      usage.usage = v.output->usage;
      inner_->OnChunk(end.t_end, usage);
      e.usage = v.output->usage;
      e.timings = v.output->timings;
      e.finish_reason = v.output->finish_reason.empty() ? "stop" : v.output->finish_reason;
    } else {
      e.usage.prompt_tokens = v.prompt_tokens;
      e.usage.completion_tokens = 0;
      e.finish_reason = "stop";
    }
  }
  RecordingHandler* inner = inner_;
  inner->OnEnd(e);  // may destroy this handler
}

}  // namespace infereng::client
