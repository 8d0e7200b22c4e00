// The transcription request: multipart framing, the audio header, the form fields (see
// transcription_request.h).
#include "serve/transcription_request.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "core/strings.h"
#include "serve/text_model.h"

namespace infereng::serve {
namespace {

constexpr std::size_t kMaxParts = 64;
constexpr std::size_t kMaxPartHeaderBytes = 8 << 10;

// ASCII case-insensitive equality (Beast's iequals takes Boost's string_view, not std's).
bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

// The value of `key` among `;`-separated parameters (`key=value` or `key="value"`, a
// quoted value may contain `;` and backslash escapes); nullopt when absent.
std::optional<std::string> Param(std::string_view params, std::string_view key) {
  std::size_t i = 0;
  while (i < params.size()) {
    std::size_t semi = params.find(';', i);
    // The parameter runs to the next `;` outside quotes.
    std::size_t eq = params.find('=', i);
    if (eq == std::string_view::npos || (semi != std::string_view::npos && eq > semi)) {
      if (semi == std::string_view::npos) return std::nullopt;
      i = semi + 1;
      continue;
    }
    const std::string_view name = TrimBlanks(params.substr(i, eq - i));
    std::size_t v = eq + 1;
    while (v < params.size() && (params[v] == ' ' || params[v] == '\t')) ++v;
    std::string value;
    std::size_t next;
    if (v < params.size() && params[v] == '"') {
      std::size_t k = v + 1;
      while (k < params.size() && params[k] != '"') {
        if (params[k] == '\\' && k + 1 < params.size()) ++k;
        value += params[k++];
      }
      next = params.find(';', k);
    } else {
      next = params.find(';', v);
      value = std::string(TrimBlanks(params.substr(v, next == std::string_view::npos ? std::string_view::npos : next - v)));
    }
    if (IEquals(name, key)) return value;
    if (next == std::string_view::npos) return std::nullopt;
    i = next + 1;
  }
  return std::nullopt;
}

uint32_t Le16(const unsigned char* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8; }
uint32_t Le32(const unsigned char* p) { return Le16(p) | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24; }

int64_t Millis(int64_t frames, int64_t rate) {
  return static_cast<int64_t>(std::llround(static_cast<double>(frames) * 1000.0 / static_cast<double>(rate)));
}

Result<AudioInfo> ReadWav(std::string_view bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  AudioInfo info{.format = "wav"};
  bool have_fmt = false;
  uint32_t block_align = 0;
  std::size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const std::string_view id = bytes.substr(at, 4);
    const uint64_t size = Le32(b + at + 4);
    const std::size_t body = at + 8;
    if (id == "fmt ") {
      if (size < 16 || body + 16 > bytes.size()) return Status::InvalidArgument("WAV: the fmt chunk is shorter than 16 bytes");
      const uint32_t tag = Le16(b + body);
      if (tag != 1 && tag != 3 && tag != 0xFFFE) {
        return Status::InvalidArgument(fmt::format("WAV: audio format {:#x} is not PCM (1), IEEE float (3) or extensible", tag));
      }
      info.channels = static_cast<int32_t>(Le16(b + body + 2));
      info.sample_rate = Le32(b + body + 4);
      block_align = Le16(b + body + 12);
      if (info.channels < 1) return Status::InvalidArgument("WAV: 0 channels");
      if (info.sample_rate < 1) return Status::InvalidArgument("WAV: a sample rate of 0 Hz");
      if (block_align < 1) return Status::InvalidArgument("WAV: a block align of 0 bytes");
      have_fmt = true;
    } else if (id == "data") {
      if (!have_fmt) return Status::InvalidArgument("WAV: the data chunk comes before the fmt chunk");
      const uint64_t present = bytes.size() - body;
      uint64_t data = size;
      // 0xFFFFFFFF (or 0) is what streaming writers put before they know the length: the
      // rest of the file is the data.
      if (size == 0xFFFFFFFFu || size == 0) {
        data = present;
      } else if (size > present) {
        return Status::InvalidArgument(
            fmt::format("WAV: truncated: the data chunk says {} bytes, {} are present", size, present));
      }
      info.frames = static_cast<int64_t>(data / block_align);
      info.duration_ms = Millis(info.frames, info.sample_rate);
      return info;
    }
    at = body + static_cast<std::size_t>(std::min<uint64_t>(size + (size & 1), bytes.size()));  // chunks are word-aligned
  }
  return Status::InvalidArgument(have_fmt ? "WAV: no data chunk" : "WAV: no fmt chunk");
}

Result<AudioInfo> ReadFlac(std::string_view bytes) {
  // fLaC, then the first metadata block, which must be STREAMINFO (type 0, 34 bytes).
  if (bytes.size() < 4 + 4 + 34) return Status::InvalidArgument("FLAC: shorter than its STREAMINFO block");
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data()) + 4;
  if ((b[0] & 0x7F) != 0) return Status::InvalidArgument("FLAC: the first metadata block is not STREAMINFO");
  const uint32_t len = uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
  if (len < 34) return Status::InvalidArgument("FLAC: STREAMINFO is shorter than 34 bytes");
  const unsigned char* s = b + 4;
  // Bytes 10..17: sample rate (20 bits), channels - 1 (3), bits per sample - 1 (5), total samples (36).
  AudioInfo info{.format = "flac"};
  info.sample_rate = int64_t{s[10]} << 12 | int64_t{s[11]} << 4 | s[12] >> 4;
  info.channels = ((s[12] >> 1) & 0x7) + 1;
  info.frames = int64_t{s[13] & 0x0F} << 32 | int64_t{s[14]} << 24 | int64_t{s[15]} << 16 | int64_t{s[16]} << 8 | s[17];
  if (info.sample_rate < 1) return Status::InvalidArgument("FLAC: a sample rate of 0 Hz");
  if (info.frames == 0) return Status::InvalidArgument("FLAC: STREAMINFO gives no total sample count (the length is unknown)");
  info.duration_ms = Millis(info.frames, info.sample_rate);
  return info;
}

ApiError FieldError(std::string message, std::string param) {
  return MakeApiError(400, std::move(message), "BadRequestError", std::move(param));
}

std::optional<bool> Bool(std::string_view v) {
  v = TrimBlanks(v);
  if (v == "true" || v == "True" || v == "1") return true;
  if (v == "false" || v == "False" || v == "0") return false;
  return std::nullopt;
}

}  // namespace

Result<std::string> MultipartBoundary(std::string_view content_type) {
  const std::size_t semi = content_type.find(';');
  const std::string_view type = TrimBlanks(content_type.substr(0, semi));
  if (!IEquals(type, "multipart/form-data")) {
    return Status::InvalidArgument(fmt::format("Content-Type must be multipart/form-data, got \"{}\"",
                                               type.substr(0, std::min<std::size_t>(type.size(), 80))));
  }
  if (semi == std::string_view::npos) return Status::InvalidArgument("multipart/form-data without a boundary parameter");
  std::optional<std::string> boundary = Param(content_type.substr(semi + 1), "boundary");
  if (!boundary || boundary->empty()) return Status::InvalidArgument("multipart/form-data without a boundary parameter");
  if (boundary->size() > 70) return Status::InvalidArgument("the multipart boundary is longer than 70 characters (RFC 2046)");
  return *boundary;
}

Result<std::vector<FormPart>> ParseMultipart(std::string_view body, std::string_view boundary) {
  const std::string delimiter = "--" + std::string(boundary);
  std::vector<FormPart> parts;
  // The first delimiter: at the start, or after a preamble ending in CRLF.
  std::size_t at = 0;
  if (!body.starts_with(delimiter)) {
    const std::size_t d = body.find("\r\n" + delimiter);
    if (d == std::string_view::npos) return Status::InvalidArgument("multipart body: no boundary delimiter");
    at = d + 2;
  }
  while (true) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // the close delimiter
    // Transport padding (spaces) then CRLF after the delimiter.
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.substr(at, 2) != "\r\n") {
      return Status::InvalidArgument(fmt::format("multipart body: byte {}: expected CRLF after the boundary", at));
    }
    at += 2;
    if (parts.size() == kMaxParts) return Status::InvalidArgument("multipart body: more than 64 parts");
    const std::size_t headers_end = body.find("\r\n\r\n", at);
    std::size_t content = 0;
    FormPart part;
    if (body.substr(at, 2) == "\r\n") {
      content = at + 2;  // a part without headers
    } else {
      if (headers_end == std::string_view::npos || headers_end - at > kMaxPartHeaderBytes) {
        return Status::InvalidArgument(fmt::format("multipart body: byte {}: a part's headers do not end (CRLF CRLF) within 8 KiB", at));
      }
      std::string_view headers = body.substr(at, headers_end - at);
      content = headers_end + 4;
      bool disposition = false;
      while (!headers.empty()) {
        const std::size_t eol = headers.find("\r\n");
        const std::string_view line = headers.substr(0, eol);
        headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view name = TrimBlanks(line.substr(0, colon)), value = TrimBlanks(line.substr(colon + 1));
        if (IEquals(name, "content-disposition")) {
          const std::size_t semi = value.find(';');
          if (!IEquals(TrimBlanks(value.substr(0, semi)), "form-data") || semi == std::string_view::npos) {
            return Status::InvalidArgument(fmt::format("multipart body: byte {}: Content-Disposition is not form-data with a name", at));
          }
          part.name = Param(value.substr(semi + 1), "name").value_or("");
          part.filename = Param(value.substr(semi + 1), "filename").value_or("");
          disposition = true;
        } else if (IEquals(name, "content-type")) {
          part.content_type = std::string(value);
        }
      }
      if (!disposition || part.name.empty()) {
        return Status::InvalidArgument(fmt::format("multipart body: byte {}: a part without Content-Disposition: form-data; name=...", at));
      }
    }
    const std::size_t end = body.find("\r\n" + delimiter, content);
    if (end == std::string_view::npos) {
      return Status::InvalidArgument(fmt::format("multipart body: the part \"{}\" does not end with the boundary (truncated?)",
                                                 part.name.substr(0, 64)));
    }
    part.data = body.substr(content, end - content);
    parts.push_back(std::move(part));
    at = end + 2;
  }
}

Result<AudioInfo> ReadAudioInfo(std::string_view bytes) {
  if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WAVE") return ReadWav(bytes);
  if (bytes.starts_with("fLaC")) return ReadFlac(bytes);
  const char* what = nullptr;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.starts_with("ID3") || (bytes.size() >= 2 && b[0] == 0xFF && (b[1] & 0xE0) == 0xE0)) what = "MP3";
  else if (bytes.starts_with("OggS")) what = "Ogg";
  else if (bytes.starts_with("\x1A\x45\xDF\xA3")) what = "WebM/Matroska";
  else if (bytes.size() >= 8 && bytes.substr(4, 4) == "ftyp") what = "MP4/M4A";
  else if (bytes.starts_with("RIFF")) what = "a RIFF file that is not WAVE";
  if (what) {
    return Status::InvalidArgument(fmt::format("the file is {}; the embedded engine reads the length of WAV and FLAC only "
                                               "(it does not decode audio)", what));
  }
  if (bytes.size() < 12) return Status::InvalidArgument(fmt::format("the file is {} bytes: too short to be audio", bytes.size()));
  return Status::InvalidArgument("the file is not WAV (RIFF/WAVE) or FLAC (fLaC)");
}

TranscriptionOutcome ParseTranscriptionRequest(std::string_view content_type, std::string_view body,
                                               const ParseLimits& limits, int64_t max_audio_ms) {
  TranscriptionOutcome out;
  TranscriptionParams& p = out.params;
  Result<std::string> boundary = MultipartBoundary(content_type);
  if (!boundary.ok()) {
    out.error = FieldError(boundary.status().message(), "");
    return out;
  }
  Result<std::vector<FormPart>> parts = ParseMultipart(body, *boundary);
  if (!parts.ok()) {
    out.error = FieldError(parts.status().message(), "");
    return out;
  }
  const FormPart* file = nullptr;
  for (const FormPart& part : *parts) {
    const std::string_view v = part.data;
    const std::string& name = part.name;
    if (name == "file") {
      if (file) {
        out.error = FieldError("more than one file part: send one audio file per request", "file");
        return out;
      }
      file = &part;
    } else if (name == "model") {
      if (!limits.model_name.empty() && v != limits.model_name) {
        out.error = MakeApiError(404, fmt::format("The model `{}` does not exist.", v.substr(0, std::min<std::size_t>(v.size(), 200))),
                                 "NotFoundError", "model");
        return out;
      }
    } else if (name == "language") {
      p.language = std::string(v.substr(0, 16));
    } else if (name == "prompt") {
      TokenizeAppend(v, p.prompt_ids);
    } else if (name == "response_format") {
      if (v == "json" || v == "text" || v == "verbose_json") {
        p.response_format = std::string(v);
      } else {
        out.error = FieldError(v == "srt" || v == "vtt"
                                   ? fmt::format("response_format {} is not served by the embedded engine (json, text or verbose_json)", v)
                                   : "response_format must be json, text or verbose_json",
                               "response_format");
        return out;
      }
    } else if (name == "temperature") {
      char* end = nullptr;
      const std::string s(TrimBlanks(v));
      const double t = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() || !(t >= 0 && t <= 2)) {
        out.error = FieldError("temperature must be a number between 0 and 2", "temperature");
        return out;
      }
    } else if (name == "stream" || name == "stream_include_usage" || name == "stream_continuous_usage_stats") {
      const std::optional<bool> b = Bool(v);
      if (!b) {
        out.error = FieldError(name + " must be true or false", name);
        return out;
      }
      (name == "stream" ? p.stream : name == "stream_include_usage" ? p.include_usage : p.continuous_usage) = *b;
    } else if (name == "max_completion_tokens") {
      const std::string s(TrimBlanks(v));
      char* end = nullptr;
      const long long n = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || end != s.c_str() + s.size() || n < 1 || n > INT32_MAX) {
        out.error = FieldError("max_completion_tokens must be an integer of at least 1", "max_completion_tokens");
        return out;
      }
      p.max_completion_tokens = static_cast<int32_t>(n);
    }
  }
  if (!file) {
    out.error = FieldError("the file part (the audio to transcribe) is missing", "file");
    return out;
  }
  if ((p.include_usage || p.continuous_usage) && !p.stream) {
    out.error = FieldError("Stream options can only be defined when `stream=True`.",
                           p.include_usage ? "stream_include_usage" : "stream_continuous_usage_stats");
    return out;
  }
  Result<AudioInfo> info = ReadAudioInfo(file->data);
  if (!info.ok()) {
    out.error = FieldError(info.status().message(), "file");
    return out;
  }
  p.audio = *info;
  if (p.audio.duration_ms < 1) {
    out.error = FieldError("the audio is empty (0 ms)", "file");
    return out;
  }
  if (p.audio.duration_ms > max_audio_ms) {
    out.error = FieldError(fmt::format("the audio is {:.1f} s; at most {} s are served", static_cast<double>(p.audio.duration_ms) / 1000.0,
                                       max_audio_ms / 1000),
                           "file");
    return out;
  }
  return out;
}

}  // namespace infereng::serve
