// SlotEngine implementation: llama-server's slots, its unified batch and its cached
// prompts (slot_engine.h has the model and the server.cpp functions each rule follows).
//
// Hot path: StartStep/FinishStep touch every slot once; the batch and the waiting queue
// reuse their storage, so a long simulation does not allocate per step (a request's
// block hashes are copied once, into its queue entry, then moved into its slot).
#include "twin/slot_engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "twin/llamacpp_kv.h"

namespace infereng::twin {

int32_t LlamaCppTruncatedPrompt(int32_t prompt, int32_t slot_ctx) {
  if (prompt < slot_ctx) return prompt;
  // server.cpp (b4748), n_keep = 0: n_left = n_ctx, n_block_size = n_left / 2,
  // erased_blocks = (n_prompt - n_keep - n_block_size) / n_block_size.
  const int32_t block = slot_ctx / 2;
  const int32_t erased = (prompt - block) / block;
  return prompt - erased * block;
}

namespace {

struct Pending {
  uint64_t id = 0, tag = 0;
  uint64_t serial = 0;  // unique per submission (an id may come back once its request ended)
  int32_t prompt = 0, output = 0;
  Nanos t_arrival = 0;
  std::vector<uint64_t> hashes{};  // empty: never matched (no hashes, or a truncated prompt)
};

enum class SlotState : uint8_t { kIdle, kStarted, kPrompt, kGenerating };

struct Slot {
  SlotState state = SlotState::kIdle;
  int32_t cells = 0;        // KV cells held (n_past), kept while idle
  uint32_t gen = 0;         // bumped when the slot's request ends (stale batch entries die)
  Nanos t_last_used = -1;   // release time; -1: never used
  // Cache identity: hashes of the leading full blocks of the prompt whose cells it holds.
  std::vector<uint64_t> hashes;
  // The request it runs (busy only).
  uint64_t id = 0, tag = 0;
  int32_t prompt = 0, output = 0, generated = 0;
  int32_t reuse = 0;        // cells of the old cache the new prompt keeps (set at assignment)
  bool scheduled = false;
  std::vector<uint64_t> next_hashes;  // the request's hashes, adopted when its prompt starts

  bool Busy() const { return state != SlotState::kIdle; }
};

// Where a live request is: its slot (-1 while waiting) and its submission's serial.
struct Live {
  int32_t slot = -1;
  uint64_t serial = 0;
};

struct Deadline {
  uint64_t id = 0, serial = 0;
  Nanos at = 0;
};

struct BatchEntry {
  int32_t slot;
  uint32_t gen;
  int32_t tokens;
  bool decode;
};

class SlotEngine final : public EngineCore {
 public:
  SlotEngine(const EngineConfig& c, std::shared_ptr<const CostModel> m)
      : cfg_(c), cost_(std::move(m)), slots_(static_cast<size_t>(c.max_num_seqs)),
        slot_ctx_(static_cast<int32_t>(c.kv_cache_tokens / c.max_num_seqs)),
        kv_(static_cast<int32_t>(c.kv_cache_tokens), c.flash_attention ? 256 : 32, c.defrag_threshold) {
    batch_.reserve(slots_.size());
    st_.kv_blocks_total = cfg_.kv_cache_tokens / cfg_.block_size;
    st_.max_model_len = slot_ctx_;
  }

  RejectReason Precheck(const EngineRequest& req) const override {
    if (req.prompt_tokens < 1 || req.output_tokens < 1) return RejectReason::kInvalid;
    if (!cfg_.context_shift &&
        (req.prompt_tokens >= slot_ctx_ || int64_t{req.prompt_tokens} + req.output_tokens > slot_ctx_)) {
      return RejectReason::kTooLong;
    }
    return RejectReason::kNone;
  }

  Admission Submit(const EngineRequest& req, Nanos now) override {
    Touch(now);
    ++st_.requests_submitted;
    auto reject = [&](RejectReason r) {
      ++st_.requests_rejected;
      return Admission{r};
    };
    if (alive_.count(req.id)) return reject(RejectReason::kInvalid);
    if (const RejectReason r = Precheck(req); r != RejectReason::kNone) return reject(r);
    if (cfg_.max_waiting_requests > 0 && static_cast<int64_t>(waiting_.size()) >= cfg_.max_waiting_requests) {
      return reject(RejectReason::kWaitingRequestsFull);
    }
    if (cfg_.max_waiting_tokens > 0 && waiting_tokens_ + req.prompt_tokens > cfg_.max_waiting_tokens) {
      return reject(RejectReason::kWaitingTokensFull);
    }
    Pending p{.id = req.id,
              .tag = req.tag,
              .serial = ++serial_,
              .prompt = LlamaCppTruncatedPrompt(req.prompt_tokens, slot_ctx_),
              .output = req.output_tokens,
              .t_arrival = now};
    if (p.prompt == req.prompt_tokens) p.hashes.assign(req.block_hashes.begin(), req.block_hashes.end());
    waiting_tokens_ += p.prompt;
    if (cfg_.request_timeout_s > 0) {
      deadlines_.push_back(Deadline{req.id, p.serial, now + SecondsToNanos(cfg_.request_timeout_s)});
    }
    alive_.emplace(req.id, Live{-1, p.serial});
    waiting_.push_back(std::move(p));
    return Admission{};
  }

  bool Cancel(uint64_t id, Nanos now) override {
    auto it = alive_.find(id);
    if (it == alive_.end()) return false;
    Touch(now);
    Drop(it, now);
    ++st_.requests_cancelled;
    return true;
  }

  std::optional<Nanos> NextEventTime() const override {
    if (in_flight_) return step_end_;
    if (busy_ > 0) return idle_since_;
    if (!waiting_.empty()) return cfg_.BatchAt(idle_since_, waiting_.front().t_arrival);
    return std::nullopt;
  }

  void AdvanceTo(Nanos t, EngineSink& sink) override {
    for (;;) {
      if (in_flight_) {
        if (step_end_ > t) break;
        FinishStep(sink);
        continue;
      }
      const std::optional<Nanos> next = NextEventTime();
      if (!next || *next > t) break;
      if (!StartStep(*next, sink)) {
        // Only when every live request timed out at this step's start: look again.
        if (NextEventTime() && *NextEventTime() > *next) continue;
        break;
      }
    }
    Touch(t);
  }

  EngineStats Stats() const override {
    EngineStats s = st_;
    s.running = busy_;
    s.waiting = static_cast<int64_t>(waiting_.size());
    s.kv_usage = KvUsage();
    int64_t busy_cells = 0, idle_cells = 0;
    for (const Slot& sl : slots_) (sl.Busy() ? busy_cells : idle_cells) += sl.cells;
    s.kv_blocks_used = (busy_cells + cfg_.block_size - 1) / cfg_.block_size;
    s.kv_blocks_cached = (idle_cells + cfg_.block_size - 1) / cfg_.block_size;
    return s;
  }
  int64_t Outstanding() const override { return busy_ + static_cast<int64_t>(waiting_.size()); }
  int64_t WaitingCount() const override { return static_cast<int64_t>(waiting_.size()); }
  double KvUsage() const override {
    return static_cast<double>(occupied_) / static_cast<double>(cfg_.kv_cache_tokens);
  }
  const EngineConfig& config() const override { return cfg_; }

 private:
  void Touch(Nanos t) {
    if (t > usage_t_) {
      st_.kv_usage_integral_s += KvUsage() * NanosToSeconds(t - usage_t_);
      usage_t_ = t;
    }
  }

  void SetCells(Slot& s, int32_t cells) {
    occupied_ += cells - s.cells;
    s.cells = cells;
  }

  // Leading tokens shared by a slot's cached prompt and a new one, in whole blocks and
  // within the cells the slot still holds.
  int32_t CommonPrefix(const Slot& s, const std::vector<uint64_t>& hashes) const {
    const size_t n = std::min(s.hashes.size(), hashes.size());
    size_t i = 0;
    while (i < n && s.hashes[i] == hashes[i]) ++i;
    return std::min(static_cast<int32_t>(i) * cfg_.block_size, s.cells);
  }

  // get_available_slot: prompt similarity first, then least recently used. -1: none idle.
  int32_t ChooseSlot(const Pending& p) const {
    int32_t best = -1, best_lcp = 0;
    if (cfg_.slot_prompt_similarity > 0 && !p.hashes.empty()) {
      for (size_t i = 0; i < slots_.size(); ++i) {
        const Slot& s = slots_[i];
        if (s.Busy() || s.cells == 0) continue;
        const int32_t lcp = CommonPrefix(s, p.hashes);
        if (lcp > best_lcp && static_cast<double>(lcp) / s.cells > cfg_.slot_prompt_similarity) {
          best_lcp = lcp;
          best = static_cast<int32_t>(i);
        }
      }
      if (best >= 0) return best;
    }
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (s.Busy()) continue;
      if (best < 0 || s.t_last_used < slots_[static_cast<size_t>(best)].t_last_used) best = static_cast<int32_t>(i);
    }
    return best;
  }

  // Gives arrived requests idle slots, in arrival order.
  void AssignWaiting(Nanos t) {
    while (!waiting_.empty() && waiting_.front().t_arrival <= t && busy_ < static_cast<int64_t>(slots_.size())) {
      Pending& p = waiting_.front();
      const int32_t i = ChooseSlot(p);
      Slot& s = slots_[static_cast<size_t>(i)];
      s.state = SlotState::kStarted;
      s.id = p.id;
      s.tag = p.tag;
      s.prompt = p.prompt;
      s.output = p.output;
      s.generated = 0;
      s.scheduled = false;
      // At least one prompt token is computed (server.cpp: "need to evaluate at least 1 token").
      s.reuse = p.hashes.empty() ? 0 : std::min(CommonPrefix(s, p.hashes), p.prompt - 1);
      s.next_hashes.swap(p.hashes);
      alive_[p.id].slot = i;
      waiting_tokens_ -= p.prompt;
      waiting_.pop_front();
      ++busy_;
    }
  }

  // Ends a live request early (cancelled, timed out): out of the queue, or its slot
  // released (llama.cpp keeps a cancelled slot's cells, as a finished one's).
  void Drop(std::unordered_map<uint64_t, Live>::iterator it, Nanos t) {
    if (it->second.slot < 0) {
      const uint64_t id = it->first;
      auto w = std::find_if(waiting_.begin(), waiting_.end(), [id](const Pending& p) { return p.id == id; });
      waiting_tokens_ -= w->prompt;
      waiting_.erase(w);
    } else {
      Release(it->second.slot, t);
    }
    alive_.erase(it);
  }

  // engine.request_timeout: the client gave up; llama.cpp frees the slot when the connection
  // closes. Deadlines come in submission order (one timeout for all).
  void ExpireTimeouts(Nanos t, EngineSink& sink) {
    while (!deadlines_.empty() && deadlines_.front().at <= t) {
      const Deadline d = deadlines_.front();
      deadlines_.pop_front();
      auto it = alive_.find(d.id);
      if (it == alive_.end() || it->second.serial != d.serial) continue;  // already ended
      const int32_t slot = it->second.slot;
      const uint64_t tag = slot < 0 ? WaitingTag(d.id) : slots_[static_cast<size_t>(slot)].tag;
      Drop(it, t);
      ++st_.requests_timed_out;
      sink.OnFinished(d.id, tag, t, FinishReason::kTimeout);
    }
  }

  uint64_t WaitingTag(uint64_t id) const {
    for (const Pending& p : waiting_) {
      if (p.id == id) return p.tag;
    }
    return 0;
  }

  void Release(int32_t i, Nanos t) {
    Slot& s = slots_[static_cast<size_t>(i)];
    s.state = SlotState::kIdle;
    s.t_last_used = t;
    ++s.gen;
    --busy_;
  }

  // Context shift for a generating slot about to fill its context (update_slots: n_keep is
  // the BOS token, n_discard = half of the rest). Its cells no longer match any prompt.
  void ShiftIfFull(Slot& s) {
    if (s.cells + 1 < slot_ctx_) return;
    const int32_t keep = 1, discard = (s.cells - keep) / 2;
    const int32_t seq = static_cast<int32_t>(&s - slots_.data());
    kv_.SeqRm(seq, keep, keep + discard);
    kv_.SeqAdd(seq, keep + discard, -1, -discard);
    SetCells(s, s.cells - discard);
    s.hashes.clear();
  }

  bool StartStep(Nanos t, EngineSink& sink) {
    Touch(t);
    ExpireTimeouts(t, sink);
    AssignWaiting(t);
    batch_.clear();
    int64_t batch_tokens = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.state != SlotState::kGenerating) continue;
      ShiftIfFull(s);
      batch_.push_back(BatchEntry{static_cast<int32_t>(i), s.gen, 1, true});
      ++batch_tokens;
    }
    for (size_t i = 0; i < slots_.size() && batch_tokens < cfg_.max_num_batched_tokens; ++i) {
      Slot& s = slots_[i];
      if (s.state == SlotState::kStarted) {
        // The new prompt keeps the common prefix; the slot's other cells are dropped.
        kv_.SeqRm(static_cast<int32_t>(i), s.reuse, -1);
        SetCells(s, s.reuse);
        s.hashes.swap(s.next_hashes);
        s.next_hashes.clear();
        s.state = SlotState::kPrompt;
        st_.prompt_tokens += s.prompt;
        st_.prefix_queries_tokens += s.prompt;
        st_.prefix_hits_tokens += s.reuse;
        if (!s.scheduled) {
          s.scheduled = true;
          sink.OnScheduled(s.id, s.tag, t);
        }
      }
      if (s.state != SlotState::kPrompt) continue;
      const int64_t tokens = std::min<int64_t>(s.prompt - s.cells, cfg_.max_num_batched_tokens - batch_tokens);
      batch_.push_back(BatchEntry{static_cast<int32_t>(i), s.gen, static_cast<int32_t>(tokens), false});
      batch_tokens += tokens;
    }
    if (batch_.empty()) return false;

    const double seconds = PlaceAndPrice() + cfg_.HostSeconds(static_cast<int64_t>(batch_.size()));
    const Nanos dur = StepNanos(seconds);
    step_end_ = t + dur;
    in_flight_ = true;
    ++st_.steps;
    st_.busy_s += NanosToSeconds(dur);
    return true;
  }

  void FinishStep(EngineSink& sink) {
    const Nanos t = step_end_;
    in_flight_ = false;
    idle_since_ = t;
    Touch(t);
    int64_t finished = 0;
    for (const BatchEntry& b : batch_) {
      Slot& s = slots_[static_cast<size_t>(b.slot)];
      // Cancelled during the step: no token for anyone, but its cells were written and stay
      // with the slot (llama.cpp frees them when the slot's next prompt starts).
      SetCells(s, s.cells + b.tokens);
      if (s.gen != b.gen) continue;
      if (!b.decode) {
        st_.prefill_tokens_computed += b.tokens;
        if (s.cells < s.prompt) continue;
        s.state = SlotState::kGenerating;
      }
      ++s.generated;
      ++st_.generation_tokens;
      sink.OnTokens(s.id, s.tag, t, 1, s.generated == 1 ? s.reuse : 0);
      if (s.generated >= s.output) {
        const uint64_t id = s.id, tag = s.tag;
        Release(b.slot, t);
        alive_.erase(id);
        ++st_.requests_finished;
        ++finished;
        sink.OnFinished(id, tag, t, FinishReason::kLength);
      }
    }
    // The host's work after a finish (engine_config.h): the next batch is formed later, with
    // whatever reached the engine meanwhile.
    idle_since_ = t + cfg_.AfterFinishes(finished);
  }

  // The step's cells, ubatch by ubatch in batch order (decode tokens first, then prompt
  // chunks; a chunk may straddle two ubatches), each placed in the unified cache and
  // priced over the cells its attention spans. A ubatch with no contiguous room is retried
  // in halves, as llama-server retries with half the batch. Returns the step's seconds.
  double PlaceAndPrice() {
    double seconds = 0;
    size_t e = 0;
    int32_t done = 0;  // tokens of batch_[e] already placed
    const int32_t ub = std::max(1, cfg_.ubatch_tokens);
    while (e < batch_.size()) {
      runs_.clear();
      parts_.clear();
      int32_t n = 0;
      while (e < batch_.size() && n < ub) {
        const BatchEntry& b = batch_[e];
        const int32_t take = std::min(b.tokens - done, ub - n);
        const int32_t held = slots_[static_cast<size_t>(b.slot)].cells + done;
        runs_.push_back(LlamaCppKvCells::Run{b.slot, held, take});
        parts_.push_back(Part{b.decode, take, held});
        n += take;
        done += take;
        if (done == b.tokens) {
          ++e;
          done = 0;
        }
      }
      seconds += PlaceUbatch(0, runs_.size());
    }
    kv_.EndBatch();
    return seconds;
  }

  // Places runs_[lo, hi) as one ubatch (halving it until it fits) and prices each piece.
  double PlaceUbatch(size_t lo, size_t hi) {
    const std::span<const LlamaCppKvCells::Run> runs(runs_.data() + lo, hi - lo);
    if (const int32_t span = kv_.Decode(runs); span > 0) {
      StepShape shape{.prefill_attn_pairs = 0};
      for (size_t i = lo; i < hi; ++i) AddToStep(shape, parts_[i].decode, parts_[i].tokens, parts_[i].held);
      shape.kv_occupied_tokens = span;
      return cost_->StepSeconds(shape);
    }
    if (hi - lo > 1) return PlaceUbatch(lo, lo + (hi - lo) / 2) + PlaceUbatch(lo + (hi - lo) / 2, hi);
    // One run that finds no room: split its tokens (a slot's context always fits the cache).
    LlamaCppKvCells::Run r = runs_[lo];
    if (r.n <= 1) return 0;  // unreachable while every slot's cells fit its context
    const int32_t half = r.n / 2;
    const Part p = parts_[lo];
    runs_.push_back(LlamaCppKvCells::Run{r.seq, r.pos0, half});
    runs_.push_back(LlamaCppKvCells::Run{r.seq, r.pos0 + half, r.n - half});
    parts_.push_back(Part{p.decode, half, p.held});
    parts_.push_back(Part{p.decode, r.n - half, p.held + half});
    const size_t at = runs_.size() - 2;
    return PlaceUbatch(at, at + 1) + PlaceUbatch(at + 1, at + 2);
  }

  struct Part {
    bool decode;
    int32_t tokens;
    int32_t held;  // the sequence's cells before this part
  };

  EngineConfig cfg_;
  std::shared_ptr<const CostModel> cost_;
  std::vector<Slot> slots_;
  int32_t slot_ctx_;
  LlamaCppKvCells kv_;
  std::vector<LlamaCppKvCells::Run> runs_;
  std::vector<Part> parts_;
  std::deque<Pending> waiting_;
  std::unordered_map<uint64_t, Live> alive_;
  std::deque<Deadline> deadlines_;
  uint64_t serial_ = 0;
  std::vector<BatchEntry> batch_;
  int64_t busy_ = 0;
  int64_t occupied_ = 0;  // cells held by all slots
  int64_t waiting_tokens_ = 0;
  bool in_flight_ = false;
  Nanos step_end_ = 0;
  Nanos idle_since_ = 0;
  Nanos usage_t_ = 0;
  EngineStats st_;
};

}  // namespace

std::unique_ptr<EngineCore> MakeSlotEngine(const EngineConfig& config, std::shared_ptr<const CostModel> cost) {
  return std::make_unique<SlotEngine>(config, std::move(cost));
}

}  // namespace infereng::twin
