#include "serve/admission.h"

#include <fmt/format.h>

namespace infereng::serve {

ApiError OverloadError(int status, std::string_view why) {
  return MakeApiError(status, fmt::format("The server is overloaded: {}. Retry later.", why), "overloaded_error");
}

std::string RetryAfterHeader(Nanos retry_after) {
  if (retry_after <= 0) return {};
  const Nanos secs = std::max<Nanos>(1, (retry_after + kNanosPerSecond - 1) / kNanosPerSecond);
  return fmt::format("Retry-After: {}\r\n", secs);
}

}  // namespace infereng::serve
