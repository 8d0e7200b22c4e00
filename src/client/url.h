// Url: the parsed base URL of a target server ("https://host:8443/v1").
//
// Only what a benchmark client needs: scheme http/https, host (name, IPv4 or [IPv6]),
// port (default 80/443), and a path prefix that every request path is appended to
// (http://h:8000/v1 + "/chat/completions" → /v1/chat/completions). User info, query and
// fragment are rejected with a clear error (credentials belong in headers, never URLs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace infereng::client {

struct Url {
  bool tls = false;          // https
  std::string host;          // without brackets for IPv6
  uint16_t port = 0;
  std::string path_prefix;   // "" or "/v1" (never ends with '/')

  // "host:port" as sent in the Host header (brackets kept for IPv6, default port omitted).
  std::string HostHeader() const;
  // path_prefix + path; `path` must start with '/' (or be empty → prefix or "/").
  std::string Target(std::string_view path) const;
  // "http://host:port/prefix" (for messages and manifests).
  std::string ToString() const;
};

// InvalidArgument naming the problem, e.g. `url "ftp://x": scheme must be http or https`.
Result<Url> ParseUrl(std::string_view text);

}  // namespace infereng::client
