// FieldReader: walks a YAML tree for a schema-checked document (the workload card).
//
// It owns the conventions every card field follows:
//  - `{value: X, assumed: true}` may wrap any field; children of an assumed field are
//    assumed too. The reader unwraps it and records {line, assumed} per dotted path.
//  - unknown keys are errors with a "did you mean" hint; duplicate keys are errors.
//  - errors read "FILE:LINE: path: expected WHAT, got FOUND".
// Internal to card/ (the parser uses it); not thread-safe, one per parse.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "card/card.h"
#include "core/status.h"
#include "core/strings.h"
#include "core/units.h"

namespace infereng::card {

class FieldReader {
 public:
  using Handler = std::function<Status(const YAML::Node& value, const std::string& path)>;
  struct Entry {
    std::string_view key;
    Handler handle;
  };

  FieldReader(std::string source, std::map<std::string, FieldMeta>* fields)
      : source_(std::move(source)), fields_(fields) {}

  // `node` must be a map (or null = empty). For each key: find its entry (unknown -> error
  // with suggestion), unwrap {value, assumed}, record the path, call the handler.
  Status Map(const YAML::Node& node, const std::string& path, std::span<const Entry> entries);

  // Like Map for maps with free keys (percentiles, engine knobs): calls fn(key, value, path)
  // for each entry after unwrapping and recording.
  Status FreeMap(const YAML::Node& node, const std::string& path,
                 const std::function<Status(const std::string& key, const YAML::Node& value,
                                            const std::string& path)>& fn);

  // "FILE:LINE: path: expected WHAT, got FOUND" (FOUND describes `at`).
  Status Error(const YAML::Node& at, const std::string& path, std::string_view expected) const;
  // "FILE:LINE: path: MESSAGE" for range and consistency errors.
  Status Fail(const YAML::Node& at, const std::string& path, std::string_view message) const;
  Status FailAtLine(int line, const std::string& path, std::string_view message) const;

  Result<std::string> String(const YAML::Node& n, const std::string& path) const;
  Result<double> Number(const YAML::Node& n, const std::string& path) const;
  Result<int64_t> Integer(const YAML::Node& n, const std::string& path) const;
  Result<bool> Bool(const YAML::Node& n, const std::string& path) const;
  // Durations; `default_unit` applies to plain numbers ("" = unit required).
  Result<double> Seconds(const YAML::Node& n, const std::string& path, std::string_view default_unit = {}) const;
  Result<double> Millis(const YAML::Node& n, const std::string& path, std::string_view default_unit = {}) const;
  Result<double> Rate(const YAML::Node& n, const std::string& path) const;
  Result<units::Money> Money(const YAML::Node& n, const std::string& path) const;

  static int LineOf(const YAML::Node& n);
  const std::string& source() const { return source_; }

 private:
  using FreeFn = std::function<Status(const std::string&, const YAML::Node&, const std::string&)>;
  Status FreeMap(const YAML::Node& node, const std::string& path, const FreeFn& fn,
                 const std::span<const Entry>* entries);
  // Returns the node inside a {value:, assumed:} wrapper, recording path meta (the line
  // recorded is the key's).
  Result<YAML::Node> Unwrap(const YAML::Node& n, const std::string& path, int key_line);

  std::string source_;
  std::map<std::string, FieldMeta>* fields_;
  bool inherited_assumed_ = false;
};

}  // namespace infereng::card
