// ImageInput: the image parts of a chat request, read far enough to count their tokens.
//
// An OpenAI chat message's content may mix parts: {"type":"text","text":...} and
// {"type":"image_url","image_url":{"url":URL, "detail":...}}. The embedded engine accepts
// images only as data URLs (data:image/png;base64,... or data:image/jpeg;base64,...): it
// serves offline, and a fetch would add network time the twin does not model, so a remote
// http(s) URL is a 400 naming the part (vLLM would fetch it). Of the image it reads only the
// size: PNG's IHDR (the first chunk; its CRC is checked) or JPEG's SOFn frame header
// (markers walked from SOI); every other format is a 400. The pixels are not decoded, so a
// corrupt body past the header goes unnoticed (vLLM's PIL decode would refuse it).
//
// The image's identity (`digest`, a hash of its base64 text) makes its token ids, so the
// prefix cache hits when the same image is sent again, as vLLM's hashes of the pixels do
// (vLLM would also match equal pixels in another encoding; we do not).
//
// Pure functions of their input; fuzz/image_part_fuzzer.cc drives ReadImageUrl.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace infereng::serve {

struct ImageHeader {
  int64_t width = 0;
  int64_t height = 0;
  std::string_view format;  // "png" | "jpeg"
  uint64_t digest = 0;      // identity of the image's bytes (see above)
};

struct ImageRead {
  ImageHeader header;
  std::string error;  // non-empty: why the URL was refused (the caller names the part)
  bool ok() const { return error.empty(); }
};

// Reads the image an image_url part's url points at.
ImageRead ReadImageUrl(std::string_view url);

}  // namespace infereng::serve
