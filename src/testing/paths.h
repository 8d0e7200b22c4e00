// Paths for tests: the shared fixtures, the source tree and the built infereng binary.
#pragma once

#include <string>

namespace infereng::testing {

// ../shared (read-only fixtures and docs), resolved at build time.
inline std::string SharedDir() { return INFERENG_SHARED_DIR; }
inline std::string FixturePath(const std::string& rel) { return SharedDir() + "/fixtures/" + rel; }
inline std::string SourceDir() { return INFERENG_SOURCE_DIR; }
inline std::string InferengBinary() { return INFERENG_BINARY; }

}  // namespace infereng::testing
