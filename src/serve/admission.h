// The answer to a request admission control refuses: the status (429, or 503 with
// --overload-status 503), an OpenAI-shaped message saying why, and optionally the
// `Retry-After` header that tells a well-behaved client when to come back (RFC 9110 §10.2.3:
// whole seconds). Shedding with a status and a retry hint, rather than queueing without
// bound, is what `infereng probe --only overload` looks for.
#pragma once

#include <string>
#include <string_view>

#include "core/clock.h"
#include "serve/request_parser.h"

namespace infereng::serve {

// "The server is overloaded: WHY. Retry later." with type overloaded_error.
ApiError OverloadError(int status, std::string_view why);

// "Retry-After: N\r\n" with N = ceil(retry_after in seconds), at least 1; "" when
// retry_after <= 0 (no header).
std::string RetryAfterHeader(Nanos retry_after);

}  // namespace infereng::serve
