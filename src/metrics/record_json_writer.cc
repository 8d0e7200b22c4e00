// AppendRecordJson: see record_json_writer.h for why and for the byte-identity rules.
#include "metrics/record_json_writer.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

namespace infereng::metrics {
namespace {

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendUint(std::string& out, uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// As nlohmann's dump_float: non-finite → null, else its shortest round-trip form.
void AppendDouble(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[64];  // the size of nlohmann's own number buffer
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// A time in ms relative to t0 (as records_io's TimeMs): null when it did not happen.
void AppendTime(std::string& out, Nanos t, Nanos t0) {
  if (t < 0) {
    out += "null";
    return;
  }
  AppendDouble(out, static_cast<double>(t - t0) / 1e6);
}

void AppendOptional(std::string& out, int64_t v) {
  if (v < 0) {
    out += "null";
  } else {
    AppendInt(out, v);
  }
}

void AppendBool(std::string& out, bool v) { out += v ? "true" : "false"; }

// Printable ASCII other than '"' and '\\' is written verbatim by nlohmann's dump too.
bool IsPlain(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

void AppendString(std::string& out, std::string_view s) {
  if (IsPlain(s)) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
    return;
  }
  // Escapes, control characters, UTF-8 (valid or not): nlohmann's serializer itself.
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `"key":` — every key below is plain ASCII, in the order std::map sorts them.
void Key(std::string& out, std::string_view key, bool first = false) {
  if (!first) out.push_back(',');
  out.push_back('"');
  out.append(key);
  out += "\":";
}

}  // namespace

void AppendRecordJson(std::string& out, const RequestRecord& r, Nanos t0) {
  out.push_back('{');
  // A session with parallel calls (RecordToJson writes these only then).
  const bool parallel = r.session >= 0 && r.calls > r.turns;
  const bool audio = r.audio_ms > 0;  // transcription requests only (as RecordToJson)
  if (audio) {
    Key(out, "audio_ms", /*first=*/true);
    AppendInt(out, r.audio_ms);
    Key(out, "audio_tokens");
    AppendInt(out, r.audio_tokens);
  }
  if (parallel) {
    Key(out, "branch", /*first=*/!audio);
    AppendInt(out, r.branch);
    Key(out, "branches");
    AppendInt(out, r.branches);
  }
  Key(out, "cached_tokens", /*first=*/!parallel && !audio);
  AppendOptional(out, r.cached_tokens);
  if (parallel) {
    Key(out, "calls");
    AppendInt(out, r.calls);
  }
  Key(out, "chunks");
  out.push_back('[');
  for (std::size_t i = 0; i < r.chunks.size(); ++i) {
    const Chunk& c = r.chunks[i];
    if (i > 0) out.push_back(',');
    out.push_back('[');
    AppendDouble(out, static_cast<double>(c.t - t0) / 1e6);
    out.push_back(',');
    AppendInt(out, c.tokens);
    if (c.reasoning) out += ",1";
    out.push_back(']');
  }
  out.push_back(']');
  Key(out, "cold");
  AppendBool(out, r.cold);
  Key(out, "completion_tokens");
  AppendOptional(out, r.completion_tokens);
  Key(out, "error");
  AppendString(out, ErrorClassName(r.error));
  Key(out, "error_message");
  AppendString(out, r.error_message);
  Key(out, "finish_reason");
  AppendString(out, r.finish_reason);
  Key(out, "http_status");
  AppendInt(out, r.http_status);
  Key(out, "id");
  AppendUint(out, r.id);
  if (r.images > 0) {  // requests with images only (as RecordToJson)
    Key(out, "image_tokens");
    AppendInt(out, r.image_tokens);
    Key(out, "images");
    AppendInt(out, r.images);
  }
  Key(out, "input_tokens_target");
  AppendInt(out, r.input_tokens_target);
  if (r.items > 0) {  // embeddings requests only (as RecordToJson)
    Key(out, "items");
    AppendInt(out, r.items);
  }
  Key(out, "output_tokens_target");
  AppendInt(out, r.output_tokens_target);
  Key(out, "prompt_tokens");
  AppendOptional(out, r.prompt_tokens);
  Key(out, "quality_pass");
  if (r.quality_pass < 0) {
    out += "null";
  } else {
    AppendBool(out, r.quality_pass == 1);
  }
  if (r.query_tokens > 0) {  // rerank requests only (as RecordToJson)
    Key(out, "query_tokens");
    AppendInt(out, r.query_tokens);
  }
  if (r.reasoning_tokens >= 0) {  // only when reported (as RecordToJson)
    Key(out, "reasoning_tokens");
    AppendInt(out, r.reasoning_tokens);
  }
  Key(out, "replica");
  AppendInt(out, r.replica);
  Key(out, "retries");
  AppendInt(out, r.retries);
  Key(out, "retry_cause");
  AppendString(out, r.retry_cause);
  Key(out, "retry_lost_ms");
  AppendDouble(out, static_cast<double>(r.retry_lost) / 1e6);
  Key(out, "server_decode_ms");
  AppendTime(out, r.server_decode, 0);
  Key(out, "server_prefill_ms");
  AppendTime(out, r.server_prefill, 0);
  Key(out, "server_queue_ms");
  AppendTime(out, r.server_queue, 0);
  Key(out, "server_timings_malformed");
  AppendBool(out, r.server_timings_malformed);
  if (r.session >= 0) {  // only session/task calls carry these (as RecordToJson)
    Key(out, "session");
    AppendInt(out, r.session);
  }
  Key(out, "t_end_ms");
  AppendTime(out, r.t_end, t0);
  Key(out, "t_first_byte_ms");
  AppendTime(out, r.t_first_byte, t0);
  Key(out, "t_prefill_done_ms");
  AppendTime(out, r.t_prefill_done, t0);
  Key(out, "t_sched_ms");
  AppendTime(out, r.t_sched, t0);
  Key(out, "t_send_ms");
  AppendTime(out, r.t_send, t0);
  Key(out, "t_server_scheduled_ms");
  AppendTime(out, r.t_server_scheduled, t0);
  Key(out, "tenant");
  AppendInt(out, r.tenant);
  Key(out, "token_source");
  AppendString(out, TokenSourceName(r.token_source));
  if (r.session >= 0) {
    Key(out, "turn");
    AppendInt(out, r.turn);
    Key(out, "turns");
    AppendInt(out, r.turns);
  }
  out.push_back('}');
}

}  // namespace infereng::metrics
