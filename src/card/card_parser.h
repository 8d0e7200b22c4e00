// Card parser: YAML text -> card::WorkloadCard, validated.
//
// The schema is documented in docs/workload-card.md. Every error names where it is and
// what was expected: "examples/chat.yaml:12: slo.ttft.p99: expected a duration like
// 250ms, 2s, 500us, 30m or 1h, got \"fast\"". Unknown keys are errors with a "did you
// mean" hint. Any field may be written `{value: X, assumed: true}` to mark an assumption;
// `fields` records every present path with its line and mark. Files a card refers to
// (empirical length files, traces) are resolved relative to the card's directory;
// empirical samples are loaded here, traces are only checked to exist (the workload
// generator streams and validates them).
//
// Thread-safety: the functions are pure (except for reading files); call them from any
// thread.
#pragma once

#include <string>
#include <string_view>

#include "card/card.h"
#include "core/status.h"

namespace infereng::card {

// Reads and parses a card file; sets source_path and content_hash (hex SHA-256 of the
// file's bytes). NotFound if it cannot be read; InvalidArgument for bad content.
Result<WorkloadCard> LoadCardFile(const std::string& path);

// Parses YAML text. `source_name` prefixes error locations ("chat.yaml:12: ...") and is
// the directory base for relative file references. content_hash is set from `yaml`.
Result<WorkloadCard> ParseCard(std::string_view yaml, std::string_view source_name);

// Checks ranges and cross-field consistency of a card built in code (ParseCard runs it).
// The checks that need the catalog and the twin's knob table are twin::CheckCard's.
Status ValidateCard(const WorkloadCard& card);

// Where `path` ("engine.max_num_seqs") is written: "FILE:LINE" (the line of the path or of
// its closest recorded parent), "FILE" without one, "<card>" for a card built in code.
std::string FieldLocation(const WorkloadCard& card, const std::string& path);

}  // namespace infereng::card
