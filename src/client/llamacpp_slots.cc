#include "client/llamacpp_slots.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace infereng::client {

using nlohmann::json;

namespace {

std::string SlotName(const json& slot, size_t index) {
  if (slot.is_object() && slot.contains("id") && slot["id"].is_number_integer()) {
    return "slot " + std::to_string(slot["id"].get<int64_t>());
  }
  return "slot [" + std::to_string(index) + "]";
}

// A per-slot count (>= 0; n_remain is -1 without a limit) added without overflowing: the
// body is outside input, and two slots claiming 9e18 tokens must not wrap the sum.
void AddCount(int64_t& sum, const json& nt, const char* key) {
  if (!nt.contains(key) || !nt[key].is_number_integer()) return;
  const int64_t v = nt[key].is_number_unsigned() && nt[key].get<uint64_t>() > uint64_t{INT64_MAX}
                        ? INT64_MAX
                        : std::max<int64_t>(0, nt[key].get<int64_t>());
  sum = v > INT64_MAX - sum ? INT64_MAX : sum + v;
}

}  // namespace

Result<SlotsSnapshot> ParseLlamaCppSlots(std::string_view body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("/slots: not JSON");
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    const std::string msg = e.is_object() && e.contains("message") && e["message"].is_string()
                                ? e["message"].get<std::string>()
                                : e.dump();
    return Status::InvalidArgument("/slots: the server answered an error: " + msg);
  }
  if (!j.is_array()) return Status::InvalidArgument("/slots: expected a JSON array of slots");
  SlotsSnapshot s;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& slot = j[i];
    const std::string where = "/slots: " + SlotName(slot, i);
    if (!slot.is_object()) return Status::InvalidArgument(where + ": expected an object");
    if (!slot.contains("is_processing") || !slot["is_processing"].is_boolean()) {
      return Status::InvalidArgument(where + ": is_processing: expected true or false");
    }
    if (!slot.contains("n_ctx") || !slot["n_ctx"].is_number_integer()) {
      return Status::InvalidArgument(where + ": n_ctx: expected an integer");
    }
    ++s.total;
    s.n_ctx = std::max(s.n_ctx, slot["n_ctx"].get<int64_t>());
    if (!slot["is_processing"].get<bool>()) {
      ++s.idle;
      continue;
    }
    ++s.busy;
    // An idle slot keeps its last request's counts: only busy slots describe work in flight.
    if (slot.contains("next_token") && slot["next_token"].is_object()) {
      const json& nt = slot["next_token"];
      AddCount(s.decoded_busy, nt, "n_decoded");
      AddCount(s.remaining_busy, nt, "n_remain");  // -1 when the request set no limit: 0
    }
  }
  return s;
}

void AddSlotSignals(const SlotsSnapshot& s, json& signals) {
  signals["slots_total"] = s.total;
  signals["slots_busy"] = s.busy;
  signals["slots_idle"] = s.idle;
  signals["slot_n_ctx"] = s.n_ctx;
  signals["slots_decoded_tokens"] = s.decoded_busy;
  signals["slots_remaining_tokens"] = s.remaining_busy;
}

}  // namespace infereng::client
