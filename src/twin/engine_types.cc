// Small pieces of engine.h that are not the scheduler: reject reasons and the synthetic
// prefix block hashes simulate uses (synthetic prefixes and trace replay's hash blocks).
#include <algorithm>
#include <string>

#include "core/mix64.h"
#include "twin/engine.h"

namespace infereng::twin {

std::string_view RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kNone: return "none";
    case RejectReason::kWaitingRequestsFull: return "waiting_requests_full";
    case RejectReason::kWaitingTokensFull: return "waiting_tokens_full";
    case RejectReason::kTooLong: return "too_long";
    case RejectReason::kPromptOverBudget: return "prompt_over_budget";
    case RejectReason::kInvalid: return "invalid";
  }
  return "unknown";
}

Status Admission::ToStatus() const {
  switch (reason) {
    case RejectReason::kNone: return Status::Ok();
    case RejectReason::kWaitingRequestsFull:
      return Status::ResourceExhausted("engine overloaded: waiting queue full (engine.max_waiting_requests)");
    case RejectReason::kWaitingTokensFull:
      return Status::ResourceExhausted("engine overloaded: too many waiting prompt tokens (engine.max_waiting_tokens)");
    case RejectReason::kTooLong:
      return Status::InvalidArgument("prompt + output tokens exceed the context length or the KV cache");
    case RejectReason::kPromptOverBudget:
      return Status::InvalidArgument("prompt longer than engine.max_num_batched_tokens with chunked prefill off");
    case RejectReason::kInvalid:
      return Status::InvalidArgument("invalid request (token counts must be >= 1, ids unique)");
  }
  return Status::Internal("unknown reject reason");
}

void TraceBlockHashes(int32_t tenant, std::span<const uint64_t> trace_ids, int32_t trace_block_tokens,
                      int32_t prompt_tokens, int32_t block_size, bool shared_across_tenants,
                      std::vector<uint64_t>& out) {
  out.clear();
  if (trace_ids.empty() || trace_block_tokens < 1 || block_size < 1) return;
  const int64_t covered = std::min<int64_t>(prompt_tokens, static_cast<int64_t>(trace_ids.size()) * trace_block_tokens);
  const uint64_t salt = shared_across_tenants ? 0x7ace5eedULL : Mix64(0x7e4a17ULL + static_cast<uint64_t>(tenant));
  uint64_t chain = Mix64(salt);
  int64_t chained = 0;  // trace blocks folded into `chain`
  for (int64_t end = block_size; end <= covered; end += block_size) {
    const int64_t last = (end - 1) / trace_block_tokens;  // the trace block holding token end-1
    while (chained <= last) chain = Mix64(chain ^ Mix64(trace_ids[static_cast<std::size_t>(chained++)]));
    out.push_back(Mix64(chain ^ static_cast<uint64_t>(end)));
  }
}

void PrefixBlockHashes(int32_t tenant, int32_t prefix_id, int32_t prefix_tokens,
                       int32_t block_size, bool shared_across_tenants,
                       std::vector<uint64_t>& out) {
  out.clear();
  if (prefix_id < 0 || prefix_tokens < block_size) return;
  // splitmix64 chain seeded by (tenant salt, prefix id): deterministic on every platform.
  const uint64_t salt = shared_across_tenants ? 0x5eedULL : Mix64(0x7e4a17ULL + static_cast<uint64_t>(tenant));
  uint64_t h = Mix64(salt ^ Mix64(static_cast<uint64_t>(prefix_id) + 1));
  const int32_t blocks = prefix_tokens / block_size;
  for (int32_t i = 0; i < blocks; ++i) {
    h = Mix64(h + static_cast<uint64_t>(i));
    out.push_back(h);
  }
}

}  // namespace infereng::twin
