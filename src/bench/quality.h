// Quality pairing: the card's quality.eval_set, run alongside the load.
//
// Eval set: JSONL, one item per line:
//   {"prompt": "..." | "messages": [...], "max_tokens": 64,
//    "check": {"type": "exact" | "contains" | "regex" | "json" | "json_schema" | "number",
//              "value": "..." (exact/contains/regex/number), "schema": {...} (json_schema)},
//    "answer": "..." (optional: a reference answer that passes the check)}
// Shorthands: "expect_exact", "expect_contains", "expect_regex", "expect_number": "...",
// "expect_json": true, "json_schema": {...}. Exact and contains compare after trimming
// surrounding whitespace; regex is ECMAScript and must match somewhere (use ^...$ for the
// whole output). Number (GSM8K-style): the LAST number in the output (an optional sign,
// digits with optional thousands commas, an optional decimal part: "$1,250.50" reads 1250.5)
// must equal the expected number within a relative 1e-6; an output without a number fails.
// "answer" is what the embedded engine replies when it answers right (serve --eval-set);
// it must pass its own check (checked at load). Without it the answer is the check's
// value (exact, contains, number) or "{}" (json); regex and json_schema items need one.
// JSON Schema subset: type (one or a list), enum, const, properties, required,
// additionalProperties (bool), items, minItems/maxItems, minLength/maxLength,
// minimum/maximum. Unknown schema keywords are refused at load time, so a schema never
// silently checks less than it says.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/request_body.h"
#include "core/status.h"

namespace infereng::bench {

struct QualityCheck {
  enum class Kind { kExact, kContains, kRegex, kJson, kJsonSchema, kNumber };
  Kind kind = Kind::kContains;
  std::string value;
  std::shared_ptr<const std::regex> regex;  // kRegex, compiled at load
  nlohmann::json schema;                    // kJsonSchema
  double number = 0;                        // kNumber: `value` parsed
};

// "exact", "contains", "regex", "json", "json_schema", "number".
const char* CheckKindName(QualityCheck::Kind kind);

// What the check wants, for a person: the exact text, "contains \"...\"", "/regex/",
// "valid JSON", "JSON matching {schema}", the number (bounded by the caller).
std::string DescribeExpected(const QualityCheck& check);

// The last number in `text` ("1,250.50" reads 1250.5; "-3" reads -3); nullopt when none.
std::optional<double> LastNumber(std::string_view text);

struct EvalItem {
  PromptContent prompt;
  int32_t max_tokens = 256;
  QualityCheck check;
  std::string answer;  // a reference answer that passes `check` ("" when there is none)
};

// The item's prompt as one text: the prompt, or the last user message's text content
// (what a person recognises the case by).
std::string PromptText(const EvalItem& item);

Result<std::vector<EvalItem>> LoadEvalSet(const std::string& path);

// A wrong answer to `item`: the first of a few candidates that fails its check (for a
// number check, the expected number plus one). When every candidate passes (a regex that
// matches anything) there is no wrong answer and the item's `answer` is returned.
std::string WrongAnswer(const EvalItem& item);

// Whether `output` passes; when not, `*why` says what failed (bounded, no prompt text).
bool RunCheck(const QualityCheck& check, const std::string& output, std::string* why = nullptr);

// Validates `value` against the schema subset; false with a path in *why when not.
bool ValidateJsonSchema(const nlohmann::json& schema, const nlohmann::json& value, std::string* why);

// Checks that a schema only uses the supported keywords (InvalidArgument naming the first other).
Status CheckSchemaSupported(const nlohmann::json& schema, const std::string& where);

}  // namespace infereng::bench
