#include "serve/paced_engine.h"

namespace infereng::serve {

namespace {
constexpr uint64_t kSchedBit = 1ULL << 63;
}  // namespace

Status PacedEngine::Submit(const EngineRequest& req, Nanos now) {
  if (req.output_tokens < 1) return Status::InvalidArgument("output_tokens must be >= 1");
  if (req.id == 0 || (req.id & kSchedBit)) return Status::InvalidArgument("request id must be in [1, 2^63)");
  if (slot_of_.count(req.id)) return Status::InvalidArgument("duplicate request id");
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Active& a = slots_[slot];
  a = Active{};
  a.id = req.id;
  a.prompt_tokens = req.prompt_tokens;
  a.remaining = req.output_tokens;
  a.blocks = req.block_hashes;
  a.block_tokens = req.block_tokens;
  slot_of_.emplace(req.id, slot);
  waiting_.push_back(req.id);
  StartWaiting(now, nullptr);
  return Status::Ok();
}

void PacedEngine::Free(uint32_t slot) {
  slot_of_.erase(slots_[slot].id);
  slots_[slot].id = 0;
  slots_[slot].blocks.clear();
  free_slots_.push_back(slot);
}

void PacedEngine::StartWaiting(Nanos now, EngineSink* sink) {
  while (running_ < opt_.max_running && !waiting_.empty()) {
    uint64_t id = waiting_.front();
    waiting_.pop_front();
    auto it = slot_of_.find(id);
    if (it == slot_of_.end()) continue;  // cancelled while waiting
    const uint32_t slot = it->second;
    Active& a = slots_[slot];
    a.running = true;
    ++running_;
    int32_t hit_blocks = 0;
    while (hit_blocks < static_cast<int32_t>(a.blocks.size()) && cache_.count(a.blocks[hit_blocks])) ++hit_blocks;
    a.cached = std::min(a.prompt_tokens - 1, hit_blocks * a.block_tokens);
    if (a.cached < 0) a.cached = 0;
    prefix_queries_ += a.prompt_tokens;
    prefix_hits_ += a.cached;
    for (uint64_t h : a.blocks) {
      if (cache_.size() >= opt_.prefix_cache_blocks) break;
      cache_.insert(h);
    }
    if (sink) sink->OnScheduled(id, now);
    else events_.push({now, id | kSchedBit, slot});  // report scheduling from AdvanceTo
    events_.push({now + opt_.ttft_base + (a.prompt_tokens - a.cached) * opt_.prefill_per_token, id, slot});
  }
}

void PacedEngine::Cancel(uint64_t id, Nanos now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return;
  const bool was_running = slots_[it->second].running;
  Free(it->second);  // its heap entries are skipped (the slot's id no longer matches)
  if (was_running) {
    --running_;
    StartWaiting(now, nullptr);
  }
}

std::optional<Nanos> PacedEngine::NextEventTime() const {
  if (events_.empty()) return std::nullopt;
  return events_.top().t;
}

void PacedEngine::AdvanceTo(Nanos t, EngineSink& sink) {
  while (!events_.empty() && events_.top().t <= t) {
    Event e = events_.top();
    events_.pop();
    const bool sched = (e.id & kSchedBit) != 0;
    const uint64_t id = e.id & ~kSchedBit;
    if (slots_[e.slot].id != id) continue;  // cancelled (the slot may serve another request now)
    if (sched) {
      sink.OnScheduled(id, e.t);
      continue;
    }
    Active& a = slots_[e.slot];  // the sink does not re-enter (no submit or cancel inside)
    sink.OnTokens(id, e.t, 1, a.cached);
    ++a.emitted;
    if (--a.remaining > 0) {
      events_.push({e.t + opt_.itl, id, e.slot});
      continue;
    }
    Free(e.slot);
    --running_;
    sink.OnFinished(id, e.t, EngineFinish::kLength);
    StartWaiting(e.t, &sink);
  }
}

EngineStats PacedEngine::Stats() const {
  EngineStats s;
  s.running = running_;
  s.waiting = static_cast<int64_t>(slot_of_.size()) - running_;
  s.kv_usage = opt_.max_running > 0 ? static_cast<double>(running_) / static_cast<double>(opt_.max_running) : 0;
  s.prefix_queries_tokens = prefix_queries_;
  s.prefix_hits_tokens = prefix_hits_;
  s.max_model_len = opt_.max_model_len;
  return s;
}

}  // namespace infereng::serve
