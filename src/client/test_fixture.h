// Test-only helpers: reading the captured llama.cpp exchanges in src/client/testdata/
// (provenance: src/client/testdata/README.md). Each capture holds "### RESPONSE:" followed
// by the status line, headers (CRLF), a blank line and the body as curl received it
// (chunked encoding decoded, except *_rawwire.txt).
#pragma once

#include <gtest/gtest.h>

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

// The path of capture `name` in the source tree.
inline std::string CapturePath(const std::string& name) {
  return infereng::testing::SourceDir() + "/src/client/testdata/llamacpp-b4748/" + name;
}

// A missing or malformed capture fails the calling test with the file's path (and returns
// empty strings), so a test never silently runs on nothing.
inline CapturedResponse LoadCapture(const std::string& name) {
  CapturedResponse out;
  const std::string path = CapturePath(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "missing test capture " << path;
    return out;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string marker = "### RESPONSE:\n";
  std::size_t at = text.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << path << ": no \"### RESPONSE:\" section";
    return out;
  }
  out.raw = text.substr(at + marker.size());
  std::size_t split = out.raw.find("\r\n\r\n");
  if (split == std::string::npos) {
    ADD_FAILURE() << path << ": the response has no blank line after its headers";
    return out;
  }
  out.head = out.raw.substr(0, split + 4);
  out.body = out.raw.substr(split + 4);
  return out;
}

}  // namespace infereng::client::testing
