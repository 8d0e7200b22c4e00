#include "bench/quality.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

namespace infereng::bench {
namespace {

using nlohmann::json;

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool TypeMatches(const std::string& type, const json& v) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  }
  if (type == "boolean") return v.is_boolean();
  if (type == "null") return v.is_null();
  return false;
}

bool Validate(const json& s, const json& v, const std::string& path, std::string* why) {
  auto fail = [&](const std::string& what) {
    if (why) *why = (path.empty() ? "$" : path) + ": " + what;
    return false;
  };
  if (s.is_boolean()) return s.get<bool>() || fail("schema false");
  if (auto t = s.find("type"); t != s.end()) {
    bool ok = false;
    if (t->is_string()) ok = TypeMatches(t->get<std::string>(), v);
    if (t->is_array()) {
      for (const json& x : *t) ok = ok || (x.is_string() && TypeMatches(x.get<std::string>(), v));
    }
    if (!ok) return fail("expected type " + t->dump() + ", got " + std::string(v.type_name()));
  }
  if (auto e = s.find("enum"); e != s.end() && e->is_array()) {
    if (std::find(e->begin(), e->end(), v) == e->end()) return fail("not one of " + e->dump());
  }
  if (auto c = s.find("const"); c != s.end() && *c != v) return fail("expected " + c->dump());
  if (v.is_string()) {
    const auto len = static_cast<int64_t>(v.get<std::string>().size());
    if (auto m = s.find("minLength"); m != s.end() && len < m->get<int64_t>()) return fail("string too short");
    if (auto m = s.find("maxLength"); m != s.end() && len > m->get<int64_t>()) return fail("string too long");
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (auto m = s.find("minimum"); m != s.end() && x < m->get<double>()) return fail("below minimum");
    if (auto m = s.find("maximum"); m != s.end() && x > m->get<double>()) return fail("above maximum");
  }
  if (v.is_object()) {
    if (auto r = s.find("required"); r != s.end()) {
      for (const json& k : *r) {
        if (!v.contains(k.get<std::string>())) return fail("missing required key \"" + k.get<std::string>() + "\"");
      }
    }
    const json* props = s.contains("properties") ? &s["properties"] : nullptr;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props != nullptr && props->contains(it.key())) {
        if (!Validate((*props)[it.key()], it.value(), path + "." + it.key(), why)) return false;
      } else if (auto a = s.find("additionalProperties"); a != s.end() && a->is_boolean() && !a->get<bool>()) {
        return fail("unexpected key \"" + it.key() + "\"");
      }
    }
  }
  if (v.is_array()) {
    const auto n = static_cast<int64_t>(v.size());
    if (auto m = s.find("minItems"); m != s.end() && n < m->get<int64_t>()) return fail("too few items");
    if (auto m = s.find("maxItems"); m != s.end() && n > m->get<int64_t>()) return fail("too many items");
    if (auto items = s.find("items"); items != s.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (!Validate(*items, v[i], path + "[" + std::to_string(i) + "]", why)) return false;
      }
    }
  }
  return true;
}

// A JSON value from model output: the whole trimmed text, or a ```json fenced block.
bool ParseOutputJson(const std::string& output, json* out) {
  std::string t = Trim(output);
  if (t.starts_with("```")) {
    const size_t nl = t.find('\n');
    const size_t end = t.rfind("```");
    if (nl != std::string::npos && end != std::string::npos && end > nl) t = t.substr(nl + 1, end - nl - 1);
  }
  *out = json::parse(t, nullptr, false);
  return !out->is_discarded();
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<double> LastNumber(std::string_view t) {
  // Scan backwards for the last digit, then extend left over digits, thousands commas
  // (a comma between digits), one decimal point and a sign.
  size_t end = t.size();
  while (end > 0 && !IsDigit(t[end - 1])) --end;
  if (end == 0) return std::nullopt;
  size_t b = end;
  bool dot = false;
  while (b > 0) {
    const char c = t[b - 1];
    if (IsDigit(c)) {
      --b;
    } else if (c == ',' && b >= 2 && IsDigit(t[b - 2]) && IsDigit(t[b])) {
      --b;
    } else if (c == '.' && !dot && b >= 2 && IsDigit(t[b - 2]) && IsDigit(t[b])) {
      dot = true;
      --b;
    } else {
      break;
    }
  }
  const bool negative = b > 0 && t[b - 1] == '-' && (b < 2 || !IsDigit(t[b - 2]));
  std::string digits;
  for (size_t i = b; i < end; ++i) {
    if (t[i] != ',') digits += t[i];
  }
  try {
    const double v = std::stod(digits);
    return negative ? -v : v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const char* CheckKindName(QualityCheck::Kind kind) {
  switch (kind) {
    case QualityCheck::Kind::kExact: return "exact";
    case QualityCheck::Kind::kContains: return "contains";
    case QualityCheck::Kind::kRegex: return "regex";
    case QualityCheck::Kind::kJson: return "json";
    case QualityCheck::Kind::kJsonSchema: return "json_schema";
    case QualityCheck::Kind::kNumber: return "number";
  }
  return "unknown";
}

std::string DescribeExpected(const QualityCheck& check) {
  switch (check.kind) {
    case QualityCheck::Kind::kExact: return "\"" + check.value + "\"";
    case QualityCheck::Kind::kContains: return "contains \"" + check.value + "\"";
    case QualityCheck::Kind::kRegex: return "/" + check.value + "/";
    case QualityCheck::Kind::kJson: return "valid JSON";
    case QualityCheck::Kind::kJsonSchema: return "JSON matching " + check.schema.dump();
    case QualityCheck::Kind::kNumber: return check.value;
  }
  return "";
}

std::string PromptText(const EvalItem& item) {
  const json& m = item.prompt.messages;
  if (!m.is_array()) return item.prompt.text;
  for (auto it = m.rbegin(); it != m.rend(); ++it) {
    if (it->is_object() && it->value("role", "") == "user" && it->contains("content") && (*it)["content"].is_string()) {
      return (*it)["content"].get<std::string>();
    }
  }
  return m.dump();
}

Status CheckSchemaSupported(const json& schema, const std::string& where) {
  static const std::set<std::string> kKeys = {
      "type", "enum", "const", "properties", "required", "additionalProperties", "items",
      "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
      "$schema", "title", "description"};
  if (schema.is_boolean()) return Status::Ok();
  if (!schema.is_object()) return Status::InvalidArgument(where + ": a schema must be an object");
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (!kKeys.count(it.key())) {
      return Status::InvalidArgument(where + ": JSON Schema keyword \"" + it.key() +
                                     "\" is not supported (supported: type, enum, const, properties, required, "
                                     "additionalProperties, items, minItems, maxItems, minLength, maxLength, minimum, maximum)");
    }
  }
  if (auto p = schema.find("properties"); p != schema.end()) {
    if (!p->is_object()) return Status::InvalidArgument(where + ".properties: expected an object");
    for (auto it = p->begin(); it != p->end(); ++it) {
      INFERENG_RETURN_IF_ERROR(CheckSchemaSupported(it.value(), where + ".properties." + it.key()));
    }
  }
  if (auto i = schema.find("items"); i != schema.end()) INFERENG_RETURN_IF_ERROR(CheckSchemaSupported(*i, where + ".items"));
  if (auto r = schema.find("required"); r != schema.end()) {
    if (!r->is_array()) return Status::InvalidArgument(where + ".required: expected an array of strings");
    for (const json& k : *r) {
      if (!k.is_string()) return Status::InvalidArgument(where + ".required: expected an array of strings");
    }
  }
  for (const char* k : {"minItems", "maxItems", "minLength", "maxLength"}) {
    if (auto x = schema.find(k); x != schema.end() && !x->is_number_integer()) {
      return Status::InvalidArgument(where + "." + k + ": expected an integer");
    }
  }
  for (const char* k : {"minimum", "maximum"}) {
    if (auto x = schema.find(k); x != schema.end() && !x->is_number()) {
      return Status::InvalidArgument(where + "." + k + ": expected a number");
    }
  }
  return Status::Ok();
}

bool ValidateJsonSchema(const json& schema, const json& value, std::string* why) {
  return Validate(schema, value, "", why);
}

bool RunCheck(const QualityCheck& check, const std::string& output, std::string* why) {
  auto fail = [&](std::string what) {
    if (why) *why = std::move(what);
    return false;
  };
  switch (check.kind) {
    case QualityCheck::Kind::kExact:
      return Trim(output) == Trim(check.value) || fail("output differs from the expected text");
    case QualityCheck::Kind::kContains:
      return output.find(check.value) != std::string::npos || fail("expected text not found");
    case QualityCheck::Kind::kRegex:
      return std::regex_search(output, *check.regex) || fail("regex did not match");
    case QualityCheck::Kind::kJson: {
      json j;
      return ParseOutputJson(output, &j) || fail("output is not valid JSON");
    }
    case QualityCheck::Kind::kJsonSchema: {
      json j;
      if (!ParseOutputJson(output, &j)) return fail("output is not valid JSON");
      return ValidateJsonSchema(check.schema, j, why);
    }
    case QualityCheck::Kind::kNumber: {
      const std::optional<double> got = LastNumber(output);
      if (!got) return fail("no number in the output");
      const double tol = 1e-6 * std::max(1.0, std::fabs(check.number));
      return std::fabs(*got - check.number) <= tol || fail("last number differs from the expected number");
    }
  }
  return false;
}

namespace {

// The item's reference answer: "answer" (which must pass the check), else one derived
// from the check where the check determines it.
Status SetAnswer(const json& j, const std::string& where, EvalItem* item) {
  if (auto a = j.find("answer"); a != j.end()) {
    if (!a->is_string()) return Status::InvalidArgument(where + ": \"answer\" must be a string");
    std::string why;
    if (!RunCheck(item->check, a->get<std::string>(), &why)) {
      return Status::InvalidArgument(where + ": \"answer\" does not pass the item's own check (" + why + ")");
    }
    item->answer = a->get<std::string>();
    return Status::Ok();
  }
  switch (item->check.kind) {
    case QualityCheck::Kind::kExact:
    case QualityCheck::Kind::kContains:
    case QualityCheck::Kind::kNumber: item->answer = item->check.value; break;
    case QualityCheck::Kind::kJson: item->answer = "{}"; break;
    case QualityCheck::Kind::kRegex:
    case QualityCheck::Kind::kJsonSchema: break;  // no answer follows from the check
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<EvalItem>> LoadEvalSet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot be read (quality.eval_set)");
  std::vector<EvalItem> items;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(where + ": expected a JSON object");
    EvalItem item;
    if (auto m = j.find("messages"); m != j.end() && m->is_array() && !m->empty()) {
      item.prompt.messages = *m;
    } else if (auto p = j.find("prompt"); p != j.end() && p->is_string()) {
      item.prompt.text = p->get<std::string>();
    } else {
      return Status::InvalidArgument(where + ": expected \"prompt\" (string) or \"messages\" (array)");
    }
    if (auto mt = j.find("max_tokens"); mt != j.end()) {
      if (!mt->is_number_integer() || mt->get<int64_t>() < 1) return Status::InvalidArgument(where + ": max_tokens must be a positive integer");
      item.max_tokens = static_cast<int32_t>(mt->get<int64_t>());
    }
    json check;
    if (auto c = j.find("check"); c != j.end()) {
      check = *c;
    } else if (j.contains("expect_exact")) {
      check = {{"type", "exact"}, {"value", j["expect_exact"]}};
    } else if (j.contains("expect_contains")) {
      check = {{"type", "contains"}, {"value", j["expect_contains"]}};
    } else if (j.contains("expect_regex")) {
      check = {{"type", "regex"}, {"value", j["expect_regex"]}};
    } else if (j.contains("expect_number")) {
      const json& v = j["expect_number"];
      check = {{"type", "number"}, {"value", v.is_number() ? json(v.dump()) : v}};
    } else if (j.contains("json_schema")) {
      check = {{"type", "json_schema"}, {"schema", j["json_schema"]}};
    } else if (j.value("expect_json", false)) {
      check = {{"type", "json"}};
    } else {
      return Status::InvalidArgument(where + ": no check (\"check\": {\"type\": ...} or expect_exact/expect_contains/"
                                     "expect_regex/expect_number/expect_json/json_schema)");
    }
    const std::string type = check.is_object() ? check.value("type", "") : "";
    auto need_value = [&]() -> Status {
      if (!check.contains("value") || !check["value"].is_string()) {
        return Status::InvalidArgument(where + ": check \"" + type + "\" needs a string \"value\"");
      }
      item.check.value = check["value"].get<std::string>();
      return Status::Ok();
    };
    if (type == "exact" || type == "contains") {
      INFERENG_RETURN_IF_ERROR(need_value());
      item.check.kind = type == "exact" ? QualityCheck::Kind::kExact : QualityCheck::Kind::kContains;
    } else if (type == "regex") {
      INFERENG_RETURN_IF_ERROR(need_value());
      item.check.kind = QualityCheck::Kind::kRegex;
      try {
        item.check.regex = std::make_shared<const std::regex>(item.check.value, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return Status::InvalidArgument(where + ": bad regex: " + e.what());
      }
    } else if (type == "json") {
      item.check.kind = QualityCheck::Kind::kJson;
    } else if (type == "json_schema") {
      if (!check.contains("schema")) return Status::InvalidArgument(where + ": check \"json_schema\" needs \"schema\"");
      INFERENG_RETURN_IF_ERROR(CheckSchemaSupported(check["schema"], where + ": schema"));
      item.check.kind = QualityCheck::Kind::kJsonSchema;
      item.check.schema = check["schema"];
    } else if (type == "number") {
      if (check.contains("value") && check["value"].is_number()) check["value"] = check["value"].dump();
      INFERENG_RETURN_IF_ERROR(need_value());
      const std::optional<double> number = LastNumber(item.check.value);
      if (!number || Trim(item.check.value).find_first_of(" \t") != std::string::npos) {
        return Status::InvalidArgument(where + ": check \"number\" needs one number as its value, got \"" +
                                       item.check.value + "\"");
      }
      item.check.kind = QualityCheck::Kind::kNumber;
      item.check.number = *number;
    } else {
      return Status::InvalidArgument(where + ": check type \"" + type +
                                     "\" unknown (exact, contains, regex, json, json_schema, number)");
    }
    INFERENG_RETURN_IF_ERROR(SetAnswer(j, where, &item));
    items.push_back(std::move(item));
  }
  if (items.empty()) return Status::InvalidArgument(path + ": the eval set has no items");
  return items;
}

std::string WrongAnswer(const EvalItem& item) {
  std::vector<std::string> candidates;
  if (item.check.kind == QualityCheck::Kind::kNumber) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.15g", item.check.number + 1);
    candidates.push_back(std::string("I worked it out: the answer is ") + buf + ".");
  }
  candidates.insert(candidates.end(), {"I am not sure.", "{\"answer\": null", "?"});
  for (const std::string& c : candidates) {
    if (!RunCheck(item.check, c)) return c;
  }
  return item.answer;
}

}  // namespace infereng::bench
