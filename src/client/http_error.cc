// HTTP error messages and header validation: see http_error.h.
#include "client/http_error.h"

#include <nlohmann/json.hpp>

namespace infereng::client {
namespace {

constexpr std::size_t kMaxMessage = 500;

std::string Bounded(std::string_view s) {
  std::string out(s.substr(0, kMaxMessage));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (s.size() > kMaxMessage) out += "...";
  return out;
}

std::string FromJson(const nlohmann::json& obj) {
  if (!obj.is_object()) return {};
  auto str = [&](const nlohmann::json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (auto e = obj.find("error"); e != obj.end()) {
    if (e->is_object()) {
      std::string type = str(*e, "type");
      std::string message = str(*e, "message");
      if (message.empty()) message = e->dump();
      return type.empty() ? message : type + ": " + message;
    }
    if (e->is_string()) {
      std::string type = str(obj, "error_type");
      return type.empty() ? e->get<std::string>() : type + ": " + e->get<std::string>();
    }
  }
  if (auto d = obj.find("detail"); d != obj.end()) return d->is_string() ? d->get<std::string>() : d->dump();
  return str(obj, "message");
}

}  // namespace

std::string HttpErrorMessage(int status, std::string_view reason, std::string_view body) {
  std::string out = "HTTP " + std::to_string(status);
  if (!reason.empty()) out += " " + Bounded(reason);
  auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  std::string detail = json.is_discarded() ? std::string(body) : FromJson(json);
  if (detail.empty() && !json.is_discarded()) detail = std::string(body);
  if (!detail.empty()) out += ": " + Bounded(detail);
  return out;
}

bool HeaderIsValid(const Header& header) {
  if (header.name.empty()) return false;
  for (char c : header.name) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7f || c == ':') return false;
  }
  for (char c : header.value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;
  }
  return true;
}

}  // namespace infereng::client
