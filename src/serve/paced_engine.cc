#include "serve/paced_engine.h"

namespace infereng::serve {

Status PacedEngine::Submit(const EngineRequest& req, Nanos now) {
  if (req.output_tokens < 1) return Status::InvalidArgument("output_tokens must be >= 1");
  if (reqs_.count(req.id)) return Status::InvalidArgument("duplicate request id");
  Active a;
  a.prompt_tokens = req.prompt_tokens;
  a.remaining = req.output_tokens;
  a.blocks = req.block_hashes;
  a.block_tokens = req.block_tokens;
  reqs_.emplace(req.id, std::move(a));
  waiting_.push_back(req.id);
  StartWaiting(now, nullptr);
  return Status::Ok();
}

void PacedEngine::StartWaiting(Nanos now, EngineSink* sink) {
  while (running_ < opt_.max_running && !waiting_.empty()) {
    uint64_t id = waiting_.front();
    waiting_.pop_front();
    auto it = reqs_.find(id);
    if (it == reqs_.end()) continue;  // cancelled while waiting
    Active& a = it->second;
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
    else events_.push({now, id | (1ULL << 63)});  // report scheduling from AdvanceTo
    events_.push({now + opt_.ttft_base + (a.prompt_tokens - a.cached) * opt_.prefill_per_token, id});
  }
}

void PacedEngine::Cancel(uint64_t id, Nanos now) {
  auto it = reqs_.find(id);
  if (it == reqs_.end()) return;
  bool was_running = it->second.running;
  reqs_.erase(it);  // stale heap entries are skipped
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
    bool sched = (e.id >> 63) != 0;
    uint64_t id = e.id & ~(1ULL << 63);
    auto it = reqs_.find(id);
    if (it == reqs_.end()) continue;
    if (sched) {
      sink.OnScheduled(id, e.t);
      continue;
    }
    Active& a = it->second;
    sink.OnTokens(id, e.t, 1, a.cached);
    ++a.emitted;
    if (--a.remaining > 0) {
      events_.push({e.t + opt_.itl, id});
      continue;
    }
    reqs_.erase(it);
    --running_;
    sink.OnFinished(id, e.t, EngineFinish::kLength);
    StartWaiting(e.t, &sink);
  }
}

EngineStats PacedEngine::Stats() const {
  EngineStats s;
  s.running = running_;
  s.waiting = static_cast<int64_t>(reqs_.size()) - running_;
  s.kv_usage = opt_.max_running > 0 ? static_cast<double>(running_) / static_cast<double>(opt_.max_running) : 0;
  s.prefix_queries_tokens = prefix_queries_;
  s.prefix_hits_tokens = prefix_hits_;
  s.max_model_len = opt_.max_model_len;
  return s;
}

}  // namespace infereng::serve
