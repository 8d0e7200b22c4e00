// Path names built from input: a card's `name`, a user's label. Every directory or file
// name that comes from a card or a flag goes through SafePathComponent, so no input can
// climb out of the folder it was meant for ("x/../../outside"), hide as a dot file or
// carry control characters into a file name. CheckPathComponent is the strict form for
// validation (`card check`): it says what is wrong instead of repairing it.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace infereng {

// The longest name SafePathComponent returns (a timestamp suffix still fits NAME_MAX).
inline constexpr std::size_t kMaxPathComponent = 100;

// `name` as one path component: letters, digits, '-', '_' and '.' kept, anything else
// (separators, spaces, control bytes, non-ASCII) becomes '-'; a leading dot becomes '-' (no
// "..", no hidden files); cut to kMaxPathComponent. `fallback` when only '-' and '.' are left.
std::string SafePathComponent(std::string_view name, std::string_view fallback);

// Ok when `name` can be used as one path component as it is; otherwise InvalidArgument
// saying why ("contains a path separator '/'", "is \"..\"", "contains a control
// character (byte 0x0a)"). The empty name is ok (callers fall back to a default).
Status CheckPathComponent(std::string_view name);

// Ok when `rel` is a relative path that stays inside the folder it is joined to (a file's
// own reference to a subfolder, e.g. a sweep point's "points/03-8"): not absolute, and
// every component passes CheckPathComponent ("..", control characters refused).
Status CheckRelativePathInside(std::string_view rel);

}  // namespace infereng
