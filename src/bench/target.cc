#include "bench/target.h"

#include <cstdlib>
#include <fstream>

namespace infereng::bench {

std::string RedactUrl(std::string_view url) {
  std::string u(url);
  if (size_t q = u.find_first_of("?#"); q != std::string::npos) u.resize(q);
  const size_t scheme = u.find("://");
  const size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t path = u.find('/', host_start);
  const size_t at = u.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at >= host_start) u.erase(host_start, at + 1 - host_start);
  return u;
}

Result<Target> ParseTarget(std::string_view url) {
  const std::string safe = RedactUrl(url);
  if (url.find_first_of("?#") != std::string_view::npos) {
    return Status::InvalidArgument("--target \"" + safe + "\": the URL must not carry a query or fragment "
                                   "(pass credentials with --api-key-env / --api-key-file)");
  }
  if (safe.size() != url.size()) {
    return Status::InvalidArgument("--target \"" + safe + "\": the URL must not carry user info "
                                   "(pass credentials with --api-key-env / --api-key-file)");
  }
  if (!(safe.starts_with("http://") || safe.starts_with("https://"))) {
    return Status::InvalidArgument("--target \"" + safe + "\": expected http://HOST[:PORT] or https://...");
  }
  std::string root = safe;
  while (!root.empty() && root.back() == '/') root.pop_back();
  // A full endpoint URL (what a curl example shows) names the server and the API.
  std::string endpoint;
  for (auto [suffix, name] : {std::pair{"/chat/completions", "chat"}, std::pair{"/completions", "completions"},
                              std::pair{"/embeddings", "embeddings"}, std::pair{"/rerank", "rerank"}}) {
    if (root.ends_with(suffix)) {
      root.resize(root.size() - std::string_view(suffix).size());
      endpoint = name;
      break;
    }
  }
  if (root.ends_with("/v1")) root.resize(root.size() - 3);
  // vLLM's /v2/rerank (Cohere v2) is the same API: bench posts to /v1/rerank, which it serves too.
  if (endpoint == "rerank" && root.ends_with("/v2")) root.resize(root.size() - 3);
  const size_t host_start = root.find("://") + 3;
  if (host_start >= root.size()) return Status::InvalidArgument("--target \"" + safe + "\": no host");
  return Target{root, root, endpoint};
}

Result<std::string> LoadApiKey(const ApiKeyOptions& opt) {
  if (!opt.file.empty()) {
    std::ifstream in(opt.file);
    if (!in) return Status::NotFound("--api-key-file " + opt.file + ": cannot be read");
    std::string line;
    std::getline(in, line);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) return Status::InvalidArgument("--api-key-file " + opt.file + ": is empty");
    return line.substr(b);
  }
  const std::string name = opt.env_name.empty() ? "OPENAI_API_KEY" : opt.env_name;
  const char* v = std::getenv(name.c_str());
  if (v == nullptr || *v == '\0') {
    if (!opt.env_name.empty()) {
      return Status::NotFound("--api-key-env " + name + ": the environment variable is not set");
    }
    return std::string();
  }
  return std::string(v);
}

std::string ScrubSecret(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos)) {
    text.replace(pos, secret.size(), "[redacted]");
    pos += 10;
  }
  return text;
}

}  // namespace infereng::bench
