#include "bench/dataset.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace infereng::bench {
namespace {

using nlohmann::json;

int32_t WordCount(const std::string& s) {
  int32_t n = 0;
  bool in = false;
  for (char c : s) {
    const bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!ws && !in) ++n;
    in = !ws;
  }
  return n;
}

Result<DatasetItem> FromShareGpt(const json& j, const std::string& where) {
  auto conv = j.find("conversations");
  if (conv == j.end() || !conv->is_array()) return Status::InvalidArgument(where + ": expected \"conversations\": [...]");
  DatasetItem item;
  item.prompt.messages = json::array();
  bool have_user = false;
  for (const json& turn : *conv) {
    if (!turn.is_object() || !turn.contains("value") || !turn["value"].is_string()) {
      return Status::InvalidArgument(where + ": each conversation turn needs \"from\" and a string \"value\"");
    }
    const std::string from = turn.value("from", "");
    const std::string value = turn["value"].get<std::string>();
    if (from == "human" || from == "user") {
      if (have_user) break;
      item.prompt.messages.push_back({{"role", "user"}, {"content", value}});
      have_user = true;
    } else if (from == "system") {
      item.prompt.messages.push_back({{"role", "system"}, {"content", value}});
    } else if ((from == "gpt" || from == "assistant" || from == "chatgpt") && have_user) {
      item.output_tokens = std::max<int32_t>(1, WordCount(value));
      break;
    }
  }
  if (!have_user) return Status::InvalidArgument(where + ": no human/user turn");
  return item;
}

Result<DatasetItem> FromJsonl(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected a JSON object");
  if (j.contains("conversations")) return FromShareGpt(j, where);
  DatasetItem item;
  if (auto m = j.find("messages"); m != j.end()) {
    if (!m->is_array() || m->empty()) return Status::InvalidArgument(where + ": \"messages\" must be a non-empty array");
    for (const json& msg : *m) {
      if (!msg.is_object() || !msg.contains("role") || !msg.contains("content")) {
        return Status::InvalidArgument(where + ": each message needs \"role\" and \"content\"");
      }
    }
    item.prompt.messages = *m;
  } else if (auto p = j.find("prompt"); p != j.end() && p->is_string()) {
    item.prompt.text = p->get<std::string>();
  } else if (auto t = j.find("text"); t != j.end() && t->is_string()) {
    item.prompt.text = t->get<std::string>();
  } else {
    return Status::InvalidArgument(where + ": expected \"prompt\" (string) or \"messages\" (array)");
  }
  for (const char* key : {"output_tokens", "max_tokens"}) {
    if (auto o = j.find(key); o != j.end()) {
      if (!o->is_number_integer() || o->get<int64_t>() < 1) {
        return Status::InvalidArgument(where + ": \"" + key + "\" must be a positive integer");
      }
      item.output_tokens = static_cast<int32_t>(o->get<int64_t>());
      break;
    }
  }
  return item;
}

}  // namespace

Result<std::vector<DatasetItem>> LoadDataset(const std::string& path, const std::string& format) {
  if (format != "jsonl" && format != "sharegpt" && format != "auto") {
    return Status::InvalidArgument("--dataset-format " + format + ": expected jsonl, sharegpt or auto");
  }
  std::ifstream in(path);
  if (!in) return Status::NotFound(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  std::vector<DatasetItem> items;
  const size_t first = all.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && all[first] == '[') {
    // A whole-file JSON array (the ShareGPT export).
    json arr = json::parse(all, nullptr, false);
    if (arr.is_discarded() || !arr.is_array()) return Status::InvalidArgument(path + ": not a valid JSON array");
    for (size_t i = 0; i < arr.size(); ++i) {
      const std::string where = path + ": item " + std::to_string(i + 1);
      auto item = format == "jsonl" ? FromJsonl(arr[i], where) : FromShareGpt(arr[i], where);
      if (!item.ok() && format == "auto") item = FromJsonl(arr[i], where);
      if (!item.ok()) return item.status();
      items.push_back(std::move(item).value());
    }
  } else {
    std::istringstream lines(all);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      const std::string where = path + ":" + std::to_string(n);
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded()) return Status::InvalidArgument(where + ": not valid JSON");
      auto item = format == "sharegpt" ? FromShareGpt(j, where) : FromJsonl(j, where);
      if (!item.ok()) return item.status();
      items.push_back(std::move(item).value());
    }
  }
  if (items.empty()) return Status::InvalidArgument(path + ": no prompts in the dataset");
  return items;
}

}  // namespace infereng::bench
