// Trace formats: the public request-log formats infereng reads, each a column map over CSV
// or JSONL, and the names auto-detection looks for in a generic file. One table
// (formats.cc) owns both, so adding a format is one row.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace infereng::trace {

enum class Format { kAuto, kAzure, kMooncake, kBurstGpt, kCsv, kJsonl };
enum class TimeUnit { kAuto, kSeconds, kMillis, kMicros, kDatetime };

// Which column (CSV header name or JSON key) holds each field; "" = none.
struct ColumnMap {
  std::string time{}, input{}, output{}, tenant{}, session{}, hashes{}, category{}, items{};
};

std::string_view FormatName(Format f);
Result<Format> ParseFormat(std::string_view name);  // auto|azure|mooncake|burstgpt|csv|jsonl
std::string_view TimeUnitName(TimeUnit u);
Result<TimeUnit> ParseTimeUnit(std::string_view name);  // auto|s|ms|us|datetime

// "time=ts,input=prompt_tokens,output=completion_tokens[,tenant=..,session=..,hashes=..,class=..,items=..]"
Result<ColumnMap> ParseColumnMap(std::string_view spec);

// The preset of a named format (azure, mooncake, burstgpt) with its time unit; nullopt for
// auto/csv/jsonl.
struct Preset {
  Format format;
  bool jsonl;
  ColumnMap columns;
  TimeUnit unit;
};
std::optional<Preset> PresetFor(Format f);

// The format a file looks like from its first line (a CSV header or a JSON object's keys):
// azure, mooncake or burstgpt when the names match exactly, else csv or jsonl.
Format DetectFormat(bool jsonl, const std::vector<std::string>& names);

// Fills every empty entry of `map` with the first name of `names` (case-insensitive) that
// the auto-detection table lists for that field.
void AutoDetectColumns(const std::vector<std::string>& names, ColumnMap* map);

// The names auto-detection tries for a field ("time", "input", ...), for error messages.
std::string CandidateNames(std::string_view field);

}  // namespace infereng::trace
