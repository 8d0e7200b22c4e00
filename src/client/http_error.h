// Turning HTTP error responses into short, secret-free messages (internal to client/).
//
// Engines put the reason in different places: OpenAI-style {"error":{"message","type"}},
// TGI {"error":"...","error_type":"..."}, FastAPI {"detail":...}, or {"message":...}; a
// non-JSON body is quoted (bounded). Header validation keeps CR/LF out of requests.
#pragma once

#include <string>
#include <string_view>

#include "client/http_client.h"

namespace infereng::client {

// "HTTP 429 Too Many Requests: overloaded: Model is overloaded"
std::string HttpErrorMessage(int status, std::string_view reason, std::string_view body);

// A token name and a value without CR, LF or NUL.
bool HeaderIsValid(const Header& header);

}  // namespace infereng::client
