// AppendRecordJson: one RequestRecord as its records.jsonl object, written straight into a
// string — the bytes RecordToJson(record, t0).dump() gives (records_io.h), without building
// the JSON tree.
//
// Why: the bench's record pipeline writes one line per finished request; building an
// nlohmann tree (a map node and a value per key, an array per chunk) and then dumping it
// cost more than everything else the pipeline does per request (issue 17, the leaner
// per-token path). The output stays byte-identical to the tree's dump so every reader,
// old files and new, and any diff between runs are unaffected: keys in the tree's (sorted)
// order, numbers through the same shortest round-trip float formatter nlohmann uses
// (nlohmann::detail::to_chars; non-finite → null, as dump does), strings escaped as dump
// with ensure_ascii = false and invalid UTF-8 replaced. Plain printable ASCII strings are
// copied as they are; any other string goes through nlohmann's own serializer, so escapes
// and replacement characters cannot drift. record_json_writer_test.cc compares the two on
// records with every optional field set and unset, escapes and invalid UTF-8.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <string>

#include "core/clock.h"
#include "metrics/record.h"

namespace infereng::metrics {

// Appends the JSON object (no newline) with times in ms relative to t0.
void AppendRecordJson(std::string& out, const RequestRecord& record, Nanos t0);

}  // namespace infereng::metrics
