#include "core/path_names.h"

#include <algorithm>
#include <cstdio>

namespace infereng {
namespace {

bool Kept(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

}  // namespace

std::string SafePathComponent(std::string_view name, std::string_view fallback) {
  std::string out;
  out.reserve(std::min(name.size(), kMaxPathComponent));
  for (char c : name) {
    if (out.size() == kMaxPathComponent) break;
    // A dot at the start would make ".", ".." or a hidden name.
    out.push_back(Kept(c) && !(c == '.' && out.empty()) ? c : '-');
  }
  if (out.find_first_not_of("-.") == std::string::npos) return std::string(fallback);  // "..", "-.", ...
  return out;
}

Status CheckPathComponent(std::string_view name) {
  if (name == "." || name == "..") return Status::InvalidArgument("is \"" + std::string(name) + "\", a directory reference");
  for (char c : name) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\') {
      return Status::InvalidArgument(std::string("contains a path separator '") + c +
                                     "'; it names output folders (runs/<name>-<time>), so use letters, digits, '-', '_'");
    }
    if (b < 0x20 || b == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", b);
      return Status::InvalidArgument(std::string("contains a control character (byte ") + hex + ")");
    }
  }
  if (name.size() > kMaxPathComponent) {
    return Status::InvalidArgument("is " + std::to_string(name.size()) + " characters long; at most " +
                                   std::to_string(kMaxPathComponent));
  }
  return Status::Ok();
}

Status CheckRelativePathInside(std::string_view rel) {
  if (rel.empty()) return Status::InvalidArgument("is empty");
  if (rel.front() == '/') return Status::InvalidArgument("is an absolute path; expected one inside the folder");
  for (std::size_t start = 0; start <= rel.size();) {
    std::size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    const std::string_view part = rel.substr(start, end - start);
    if (Status s = CheckPathComponent(part); !s.ok()) {
      return Status::InvalidArgument("\"" + std::string(part) + "\" " + s.message());
    }
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace infereng
