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

}  // namespace infereng::client
