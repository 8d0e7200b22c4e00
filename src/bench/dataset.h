// Prompt datasets: real prompts instead of synthetic text.
//
// Formats (one item per prompt):
//   jsonl     one JSON object per line: {"prompt": "..."} or {"messages": [{role, content}...]}
//             (also "text"), optional "output_tokens" (or "max_tokens") for the length to ask.
//   sharegpt  the ShareGPT export: a JSON array (or JSONL) of {"conversations": [{"from":
//             "human"|"user"|"system"|"gpt"|"assistant", "value": "..."}]}; the prompt is the
//             conversation up to the first human turn, the first reply's length in
//             whitespace words is the output length asked (approximate: no tokenizer).
// Bad lines fail with "FILE:LINE: what was wrong"; nothing is skipped silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/request_body.h"
#include "core/status.h"

namespace infereng::bench {

struct DatasetItem {
  PromptContent prompt;
  int32_t output_tokens = -1;  // -1: take the card's output length
};

// format: "jsonl", "sharegpt" or "auto" (sharegpt when the items have "conversations").
Result<std::vector<DatasetItem>> LoadDataset(const std::string& path, const std::string& format);

}  // namespace infereng::bench
