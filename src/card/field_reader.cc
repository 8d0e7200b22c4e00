// FieldReader: schema walking, {value, assumed} unwrapping and located errors.
#include "card/field_reader.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

namespace infereng::card {
namespace {

std::string Describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  std::string s = n.Scalar();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return "\"" + s + "\"";
}

bool IsWrapper(const YAML::Node& n) {
  if (!n.IsMap()) return false;
  bool has_value = false;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) return false;
    const std::string& k = it->first.Scalar();
    if (k == "value") {
      has_value = true;
    } else if (k != "assumed" && k != "note") {
      return false;
    }
  }
  return has_value;
}

std::string Suggest(std::string_view key, std::span<const FieldReader::Entry> entries) {
  std::vector<std::string> keys;
  for (const auto& e : entries) keys.emplace_back(e.key);
  std::string list;
  for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
  return "unknown key \"" + std::string(key) + "\"" + DidYouMean(key, keys) + "; expected one of: " + list;
}

}  // namespace

int FieldReader::LineOf(const YAML::Node& n) {
  if (!n.IsDefined()) return 0;
  int line = n.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

Status FieldReader::FailAtLine(int line, const std::string& path, std::string_view message) const {
  std::string where = source_;
  if (line > 0) where += ":" + std::to_string(line);
  return Status::InvalidArgument(where + ": " + (path.empty() ? "" : path + ": ") + std::string(message));
}

Status FieldReader::Fail(const YAML::Node& at, const std::string& path, std::string_view message) const {
  return FailAtLine(LineOf(at), path, message);
}

Status FieldReader::Error(const YAML::Node& at, const std::string& path, std::string_view expected) const {
  return Fail(at, path, "expected " + std::string(expected) + ", got " + Describe(at));
}

Result<YAML::Node> FieldReader::Unwrap(const YAML::Node& n, const std::string& path, int key_line) {
  FieldMeta meta{key_line > 0 ? key_line : LineOf(n), inherited_assumed_};
  // Node::operator= would overwrite the referenced node in the tree; reset() rebinds.
  YAML::Node value;
  value.reset(n);
  if (IsWrapper(n)) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string& k = it->first.Scalar();
      if (k == "value") {
        value.reset(it->second);
      } else if (k == "assumed") {
        INFERENG_ASSIGN_OR_RETURN(bool assumed, Bool(it->second, path + ".assumed"));
        meta.assumed = meta.assumed || assumed;
      }
    }
    if (IsWrapper(value)) return Fail(n, path, "nested {value: ...} wrappers are not allowed");
  }
  (*fields_)[path] = meta;
  return value;
}

Status FieldReader::Map(const YAML::Node& node, const std::string& path, std::span<const Entry> entries) {
  return FreeMap(node, path, [&](const std::string& key, const YAML::Node& value, const std::string& sub) -> Status {
    for (const auto& e : entries) {
      if (e.key == key) return e.handle(value, sub);
    }
    return Status::Internal("unreachable");
  }, &entries);
}

Status FieldReader::FreeMap(const YAML::Node& node, const std::string& path,
                            const std::function<Status(const std::string&, const YAML::Node&, const std::string&)>& fn) {
  return FreeMap(node, path, fn, nullptr);
}

Status FieldReader::FreeMap(const YAML::Node& node, const std::string& path,
                            const std::function<Status(const std::string&, const YAML::Node&, const std::string&)>& fn,
                            const std::span<const Entry>* entries) {
  if (!node.IsDefined() || node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return Error(node, path.empty() ? "(top level)" : path, "a map of fields");
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) return Error(it->first, path, "a key name");
    const std::string key = it->first.Scalar();
    const std::string sub = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second) return Fail(it->first, sub, "duplicate key");
    if (entries != nullptr &&
        std::none_of(entries->begin(), entries->end(), [&](const Entry& e) { return e.key == key; })) {
      return Fail(it->first, path.empty() ? key : sub, Suggest(key, *entries));
    }
    const bool saved = inherited_assumed_;
    auto value = Unwrap(it->second, sub, LineOf(it->first));
    if (!value.ok()) return value.status();
    inherited_assumed_ = (*fields_)[sub].assumed;
    Status st = fn(key, *value, sub);
    inherited_assumed_ = saved;
    INFERENG_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

Result<std::string> FieldReader::String(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) return Error(n, path, "a string");
  return n.Scalar();
}

Result<double> FieldReader::Number(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) return Error(n, path, "a number");
  auto v = units::ParseNumber(n.Scalar());
  if (!v.ok()) return Error(n, path, "a number");
  return *v;
}

Result<int64_t> FieldReader::Integer(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) return Error(n, path, "a whole number");
  auto v = units::ParseNumber(n.Scalar());
  if (!v.ok() || std::floor(*v) != *v || std::fabs(*v) > 9.0e15) return Error(n, path, "a whole number");
  return static_cast<int64_t>(*v);
}

Result<bool> FieldReader::Bool(const YAML::Node& n, const std::string& path) const {
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true" || s == "yes" || s == "on" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "no" || s == "off" || s == "False" || s == "FALSE") return false;
  }
  return Error(n, path, "true or false");
}

Result<double> FieldReader::Seconds(const YAML::Node& n, const std::string& path, std::string_view default_unit) const {
  if (!n.IsScalar()) return Error(n, path, "a duration like 250ms, 2s, 30m or 1h");
  auto v = units::ParseDurationSeconds(n.Scalar(), default_unit);
  if (!v.ok()) return Fail(n, path, v.status().message());
  return *v;
}

Result<double> FieldReader::Millis(const YAML::Node& n, const std::string& path, std::string_view default_unit) const {
  INFERENG_ASSIGN_OR_RETURN(double s, Seconds(n, path, default_unit));
  return s * 1e3;
}

Result<double> FieldReader::Rate(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) return Error(n, path, "a rate like 20rps, 20/s or 1200/min");
  auto v = units::ParseRate(n.Scalar());
  if (!v.ok()) return Fail(n, path, v.status().message());
  return *v;
}

Result<units::Money> FieldReader::Money(const YAML::Node& n, const std::string& path) const {
  if (!n.IsScalar()) return Error(n, path, "money like $2.50/h or $0.50/1M");
  auto v = units::ParseMoney(n.Scalar());
  if (!v.ok()) return Fail(n, path, v.status().message());
  return *v;
}

}  // namespace infereng::card
