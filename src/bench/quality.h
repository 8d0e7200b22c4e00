// Quality pairing: the card's quality.eval_set, run alongside the load.
//
// Eval set: JSONL, one item per line:
//   {"prompt": "..." | "messages": [...], "max_tokens": 64,
//    "check": {"type": "exact" | "contains" | "regex" | "json" | "json_schema",
//              "value": "..." (exact/contains/regex), "schema": {...} (json_schema)}}
// Shorthands: "expect_exact", "expect_contains", "expect_regex": "...", "expect_json": true,
// "json_schema": {...}. Exact and contains compare after trimming surrounding whitespace;
// regex is ECMAScript and must match somewhere (use ^...$ for the whole output).
// JSON Schema subset: type (one or a list), enum, const, properties, required,
// additionalProperties (bool), items, minItems/maxItems, minLength/maxLength,
// minimum/maximum. Unknown schema keywords are refused at load time, so a schema never
// silently checks less than it says.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/request_body.h"
#include "core/status.h"

namespace infereng::bench {

struct QualityCheck {
  enum class Kind { kExact, kContains, kRegex, kJson, kJsonSchema };
  Kind kind = Kind::kContains;
  std::string value;
  std::shared_ptr<const std::regex> regex;  // kRegex, compiled at load
  nlohmann::json schema;                    // kJsonSchema
};

struct EvalItem {
  PromptContent prompt;
  int32_t max_tokens = 256;
  QualityCheck check;
};

Result<std::vector<EvalItem>> LoadEvalSet(const std::string& path);

// Whether `output` passes; when not, `*why` says what failed (bounded, no prompt text).
bool RunCheck(const QualityCheck& check, const std::string& output, std::string* why = nullptr);

// Validates `value` against the schema subset; false with a path in *why when not.
bool ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value, std::string* why);

// Checks that a schema only uses the supported keywords (InvalidArgument naming the first other).
Status CheckSchemaSupported(const nlohmann::json& schema, const std::string& where);

}  // namespace infereng::bench
