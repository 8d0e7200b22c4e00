// Paths for tests: the source tree (test data lives beside the tests that read it, in
// src/<folder>/testdata/) and the built infereng binary, both resolved at build time.
#pragma once

#include <string>

namespace infereng::testing {

inline std::string SourceDir() { return INFERENG_SOURCE_DIR; }
inline std::string InferengBinary() { return INFERENG_BINARY; }

}  // namespace infereng::testing
