// Reading a Hugging Face config.json into a ModelSpec.
//
// Supported model_type values: llama, qwen2, mistral, mixtral, deepseek_v3 (deepseek_v2
// reads the same keys). Errors name the file and the key:
//   "cfg/config.json: missing required key \"hidden_size\" (model_type llama)"
//   "cfg/config.json: key \"num_hidden_layers\": expected a positive integer, got \"x\""
//   "cfg/config.json: not valid JSON: ... at byte 17"
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "catalog/model_spec.h"
#include "core/status.h"

namespace infereng::catalog {

// Reads `path`; the spec's name is the parent directory's name (HF layout
// "<model>/config.json"), else the file stem. NotFound if unreadable.
Result<ModelSpec> LoadHfConfigFile(const std::string& path);

// Parses config.json text; `origin` names it in errors.
Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view origin);
Result<ModelSpec> ParseHfConfigJson(const nlohmann::json& config, std::string_view origin);

}  // namespace infereng::catalog
