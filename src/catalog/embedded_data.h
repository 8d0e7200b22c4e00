// The catalog files compiled into the binary. The definition is generated at build time
// by cmake/catalog_data.cmake from data/models/*.yaml and data/accelerators/*.yaml.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace infereng::catalog {

struct EmbeddedFile {
  std::string_view name;  // "models/llama-3.1-8b.yaml"
  std::string_view text;
};

std::span<const EmbeddedFile> EmbeddedCatalogFiles();

}  // namespace infereng::catalog
