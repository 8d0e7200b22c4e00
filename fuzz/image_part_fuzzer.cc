// libFuzzer harness: the image_url part of a chat request (serve/image_input.h), outside input
// the embedded engine reads from every vision request: a data URL, its base64, and the PNG
// IHDR or JPEG frame header inside. The first byte picks how the rest is used, so the fuzzer
// reaches the binary parsers without having to discover base64: 'P' wraps the rest as
// data:image/png;base64,BASE64(rest), 'J' as data:image/jpeg;base64,..., anything else sends
// the rest as the URL itself. The reader must never crash or hang; it returns a size of at
// least 1x1 with a known format, or a non-empty reason.
// Build: cmake --preset fuzz && cmake --build --preset fuzz --target image_part_fuzzer
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base64.h"
#include "serve/image_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string url;
  if (data[0] == 'P') {
    url = "data:image/png;base64," + infereng::base64::Encode(rest);
  } else if (data[0] == 'J') {
    url = "data:image/jpeg;base64," + infereng::base64::Encode(rest);
  } else {
    url = std::string(rest);
  }
  const infereng::serve::ImageRead r = infereng::serve::ReadImageUrl(url);
  if (!r.ok()) return 0;
  if (r.header.width < 1 || r.header.height < 1) __builtin_trap();
  if (r.header.format != "png" && r.header.format != "jpeg") __builtin_trap();
  return 0;
}
