// Url parsing: see url.h.
#include "client/url.h"

#include <cctype>
#include <charconv>
#include <string>

namespace infereng::client {
namespace {

Status Bad(std::string_view text, std::string_view why) {
  std::string shown(text.substr(0, 200));
  return Status::InvalidArgument("url \"" + shown + "\": " + std::string(why));
}

}  // namespace

std::string Url::HostHeader() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != (tls ? 443 : 80)) h += ":" + std::to_string(port);
  return h;
}

std::string Url::Target(std::string_view path) const {
  if (path.empty()) return path_prefix.empty() ? "/" : path_prefix;
  return path_prefix + std::string(path);
}

std::string Url::ToString() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "https" : "http") + "://" + h + ":" + std::to_string(port) + path_prefix;
}

Result<Url> ParseUrl(std::string_view text) {
  Url url;
  std::string_view rest = text;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    url.tls = true;
  } else {
    return Bad(text, "scheme must be http:// or https://");
  }
  std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    return Bad(text, "user info is not allowed in the URL (pass credentials as a header)");
  }
  if (path.find_first_of("?#") != std::string_view::npos) {
    return Bad(text, "query strings and fragments are not allowed in the base URL");
  }
  for (char c : path) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return Bad(text, "the path has a space or control character");
  }
  std::string_view port_text;
  if (authority.starts_with("[")) {  // [IPv6]:port
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Bad(text, "unterminated [IPv6] host");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Bad(text, "expected ':port' after the [IPv6] host");
      port_text = after.substr(1);
      if (port_text.empty()) return Bad(text, "empty port");
    }
  } else {
    std::size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      authority = authority.substr(0, colon);
      if (port_text.empty()) return Bad(text, "empty port");
    }
    url.host = std::string(authority);
  }
  if (url.host.empty()) return Bad(text, "missing host");
  for (char c : url.host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':';
    if (!ok) return Bad(text, "invalid character in host");
  }
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return Bad(text, "port must be a number from 1 to 65535");
    }
    url.port = static_cast<uint16_t>(value);
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  url.path_prefix = std::string(path);
  return url;
}

}  // namespace infereng::client
