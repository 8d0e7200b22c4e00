// Test-only helpers: reading the captured llama.cpp exchanges under ../shared/fixtures.
// Each capture holds "### RESPONSE:" followed by the status line, headers (CRLF), a blank
// line and the body as curl received it (chunked encoding decoded, except *_rawwire.txt).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "testing/paths.h"

namespace infereng::client::testing {

struct CapturedResponse {
  std::string head;  // status line + headers, ending with "\r\n\r\n"
  std::string body;
  std::string raw;   // head + body exactly as in the file
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Empty strings when the file or its "### RESPONSE:" section is missing.
inline CapturedResponse LoadCapture(const std::string& name) {
  CapturedResponse out;
  std::string text = ReadFile(infereng::testing::FixturePath("llamacpp-b4748/" + name));
  const std::string marker = "### RESPONSE:\n";
  std::size_t at = text.find(marker);
  if (at == std::string::npos) return out;
  out.raw = text.substr(at + marker.size());
  std::size_t split = out.raw.find("\r\n\r\n");
  if (split == std::string::npos) return out;
  out.head = out.raw.substr(0, split + 4);
  out.body = out.raw.substr(split + 4);
  return out;
}

}  // namespace infereng::client::testing
