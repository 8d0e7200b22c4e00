// The format table and column auto-detection.
#include "trace/formats.h"

#include <algorithm>
#include <cctype>

namespace infereng::trace {
namespace {

constexpr std::pair<std::string_view, Format> kFormatNames[] = {
    {"auto", Format::kAuto},         {"azure", Format::kAzure}, {"mooncake", Format::kMooncake},
    {"burstgpt", Format::kBurstGpt}, {"csv", Format::kCsv},     {"jsonl", Format::kJsonl}};

constexpr std::pair<std::string_view, TimeUnit> kUnitNames[] = {
    {"auto", TimeUnit::kAuto}, {"s", TimeUnit::kSeconds}, {"ms", TimeUnit::kMillis},
    {"us", TimeUnit::kMicros}, {"datetime", TimeUnit::kDatetime}};

// Names each field goes by in public traces and common request logs, tried in order.
struct Candidates {
  std::string_view field;
  std::string ColumnMap::*member;
  std::vector<std::string_view> names;
};
const std::vector<Candidates>& CandidateTable() {
  static const std::vector<Candidates> kTable = {
      {"time", &ColumnMap::time,
       {"timestamp", "time", "t", "ts", "arrival_time", "arrival", "created_at", "created", "start_time",
        "request_time", "timestamp_ms", "time_ms"}},
      {"input", &ColumnMap::input,
       {"input_tokens", "input_length", "prompt_tokens", "contexttokens", "context_tokens", "request tokens",
        "num_prompt_tokens", "input_len", "prompt_len"}},
      {"output", &ColumnMap::output,
       {"output_tokens", "output_length", "completion_tokens", "generatedtokens", "generated_tokens",
        "response tokens", "num_completion_tokens", "output_len"}},
      {"tenant", &ColumnMap::tenant, {"tenant", "tenant_id", "user", "user_id", "customer"}},
      {"session", &ColumnMap::session,
       {"session", "session_id", "conversation", "conversation_id", "chat_id"}},
      {"hashes", &ColumnMap::hashes, {"hash_ids"}},
      {"class", &ColumnMap::category, {"class", "log type", "traffic_class"}},
      {"items", &ColumnMap::items, {"batch_size", "num_inputs", "n_inputs", "inputs", "items"}},
  };
  return kTable;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool SameNames(const std::vector<std::string>& names, std::initializer_list<std::string_view> want) {
  if (names.size() != want.size()) return false;
  return std::equal(names.begin(), names.end(), want.begin());
}

}  // namespace

std::string_view FormatName(Format f) {
  for (const auto& [name, v] : kFormatNames) {
    if (v == f) return name;
  }
  return "auto";
}

Result<Format> ParseFormat(std::string_view name) {
  for (const auto& [n, v] : kFormatNames) {
    if (n == name) return v;
  }
  return Status::InvalidArgument("--format: unknown format \"" + std::string(name) +
                                 "\"; expected auto, azure, mooncake, burstgpt, csv or jsonl");
}

std::string_view TimeUnitName(TimeUnit u) {
  for (const auto& [name, v] : kUnitNames) {
    if (v == u) return name;
  }
  return "auto";
}

Result<TimeUnit> ParseTimeUnit(std::string_view name) {
  for (const auto& [n, v] : kUnitNames) {
    if (n == name) return v;
  }
  return Status::InvalidArgument("--time-unit: unknown unit \"" + std::string(name) +
                                 "\"; expected auto, s, ms, us or datetime");
}

Result<ColumnMap> ParseColumnMap(std::string_view spec) {
  ColumnMap map;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return Status::InvalidArgument("--columns: expected FIELD=COLUMN, got \"" + std::string(item) + "\"");
    }
    const std::string_view field = item.substr(0, eq);
    const auto& table = CandidateTable();
    auto it = std::find_if(table.begin(), table.end(), [&](const Candidates& c) { return c.field == field; });
    if (it == table.end()) {
      return Status::InvalidArgument("--columns: unknown field \"" + std::string(field) +
                                     "\"; expected time, input, output, tenant, session, hashes, class or items");
    }
    map.*(it->member) = std::string(item.substr(eq + 1));
  }
  return map;
}

std::optional<Preset> PresetFor(Format f) {
  switch (f) {
    case Format::kAzure:
      return Preset{f, false, {.time = "TIMESTAMP", .input = "ContextTokens", .output = "GeneratedTokens"},
                    TimeUnit::kDatetime};
    case Format::kMooncake:
      return Preset{f, true,
                    {.time = "timestamp", .input = "input_length", .output = "output_length", .hashes = "hash_ids"},
                    TimeUnit::kMillis};
    case Format::kBurstGpt:
      return Preset{f, false,
                    {.time = "Timestamp", .input = "Request tokens", .output = "Response tokens",
                     .category = "Log Type"},
                    TimeUnit::kSeconds};
    default:
      return std::nullopt;
  }
}

Format DetectFormat(bool jsonl, const std::vector<std::string>& names) {
  if (jsonl) {
    const bool mooncake = std::find(names.begin(), names.end(), "input_length") != names.end() &&
                          std::find(names.begin(), names.end(), "hash_ids") != names.end() &&
                          std::find(names.begin(), names.end(), "timestamp") != names.end();
    return mooncake ? Format::kMooncake : Format::kJsonl;
  }
  if (SameNames(names, {"TIMESTAMP", "ContextTokens", "GeneratedTokens"})) return Format::kAzure;
  if (SameNames(names, {"Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"})) {
    return Format::kBurstGpt;
  }
  return Format::kCsv;
}

void AutoDetectColumns(const std::vector<std::string>& names, ColumnMap* map) {
  for (const Candidates& c : CandidateTable()) {
    if (!(map->*(c.member)).empty()) continue;
    for (std::string_view want : c.names) {
      auto it = std::find_if(names.begin(), names.end(), [&](const std::string& n) { return Lower(n) == want; });
      if (it != names.end()) {
        map->*(c.member) = *it;
        break;
      }
    }
  }
}

std::string CandidateNames(std::string_view field) {
  std::string out;
  for (const Candidates& c : CandidateTable()) {
    if (c.field != field) continue;
    for (std::string_view n : c.names) out += (out.empty() ? "" : ", ") + std::string(n);
  }
  return out;
}

}  // namespace infereng::trace
