// SessionPlanner: sessions and agent tasks over the generator (see sessions.h).
#include "workload/sessions.h"

#include <algorithm>

#include "workload/lengths.h"
#include "workload/rng.h"

namespace infereng::workload {
namespace {

// Stream ids for per-turn draws and block ids: fixed forever (reproducible schedules).
constexpr uint64_t kTurnStream = 0x5e55'1011;
constexpr uint64_t kBlockStream = 0xb10c'5e55;
constexpr uint64_t kPrefixBlocks = 0x9f1c'b10c;
constexpr uint64_t kParallelStream = 0x9a7a'11e1;
constexpr uint64_t kBranchStream = 0xb7a7'c4e5;
constexpr int32_t kMaxBranches = 256;

// The draws of one turn of a session from stream `stream` (its lengths: kTurnStream; its
// parallel calls: kParallelStream): the same whatever order turns end in.
Rng TurnRng(uint64_t seed, int64_t session, int32_t turn, uint64_t stream = kTurnStream) {
  return Rng(StreamSeed(seed, stream ^ Mix64(static_cast<uint64_t>(session)) ^
                                  (static_cast<uint64_t>(turn) * 0x9e3779b97f4a7c15ULL)));
}

// One key per (turn, branch): the salt of a branch's own blocks and its draws.
uint64_t BranchKey(int32_t turn, int32_t branch) {
  return Mix64((static_cast<uint64_t>(turn) << 20) + static_cast<uint64_t>(branch));
}

}  // namespace

bool TraceSessions(const card::WorkloadCard& card) {
  return card.traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace && !card.traffic.arrival.trace_sessions.empty();
}

SessionPlanner::SessionPlanner(Generator gen, const card::WorkloadCard& card, uint64_t seed)
    : gen_(std::move(gen)),
      enabled_(card.traffic.sessions.has_value() || TraceSessions(card)),
      tasks_(enabled_ && card.SessionsAreTasks()),
      output_(card.traffic.output_tokens),
      max_input_(card.product.max_input_tokens),
      seed_(seed) {
  if (card.traffic.sessions) spec_ = *card.traffic.sessions;  // a trace's sessions have none
}

Result<SessionPlanner> SessionPlanner::FromCard(const card::WorkloadCard& card, const GeneratorOptions& options) {
  if (card.traffic.sessions && card.traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace) {
    return Status::InvalidArgument(
        "traffic.sessions: does not apply to a trace replay (traffic.arrival.sessions replays the trace's own sessions)");
  }
  const bool trace_sessions = TraceSessions(card);
  if (trace_sessions && options.closed_loop) {
    return Status::InvalidArgument(
        "traffic.arrival.sessions: replays the trace's own arrival times (open loop); it does not apply to a closed "
        "loop (--concurrency)");
  }
  INFERENG_ASSIGN_OR_RETURN(Generator gen, Generator::FromCard(card, options));
  SessionPlanner planner(std::move(gen), card, options.seed);
  if (trace_sessions) {
    // The window is on the trace's clock; the calls' times are the replay's (divided by the speed).
    const double speed = card.traffic.arrival.trace_speed * options.rate_scale;
    INFERENG_RETURN_IF_ERROR(planner.LoadTraceSessions(card.traffic.arrival.trace_parallel_window_s / speed));
  }
  return planner;
}

int32_t SessionPlanner::Branches(int64_t session, int32_t turn) const {
  if (turn <= 0 || (spec_.parallel.kind == card::Distribution::Kind::kFixed && spec_.parallel.value <= 1)) return 1;
  Rng rng = TurnRng(seed_, session, turn, kParallelStream);
  return std::max(1, LengthSampler(spec_.parallel, kMaxBranches).Sample(rng));
}

int32_t SessionPlanner::PlannedCalls(int64_t session, int32_t turns) const {
  int64_t calls = 1;
  for (int32_t t = 1; t < turns; ++t) calls += Branches(session, t);
  return static_cast<int32_t>(std::min<int64_t>(calls, INT32_MAX));
}

void SessionPlanner::FillBlocks(RequestSpec* spec, int64_t shared) const {
  const int64_t tokens = std::max<int32_t>(spec->input_tokens, 1);
  const auto blocks = static_cast<size_t>((tokens + kSessionBlockTokens - 1) / kSessionBlockTokens);
  size_t prefix_blocks = 0;
  if (spec->prefix_id >= 0 && spec->prefix_tokens > 0) {
    prefix_blocks = static_cast<size_t>((spec->prefix_tokens + kSessionBlockTokens - 1) / kSessionBlockTokens);
  }
  // A branch b > 0 shares the session's whole blocks within S, then has its own.
  const size_t shared_blocks = spec->branch > 0 ? static_cast<size_t>(shared / kSessionBlockTokens) : blocks;
  const uint64_t prefix_salt = Mix64(kPrefixBlocks ^ Mix64(static_cast<uint64_t>(spec->prefix_id) + 1));
  const uint64_t session_salt = StreamSeed(seed_, kBlockStream ^ Mix64(static_cast<uint64_t>(spec->session)));
  const uint64_t branch_salt = Mix64(session_salt ^ BranchKey(spec->turn, spec->branch));
  // Each id is a function of its index (and branch): rebuilt whole, whichever call this
  // one follows.
  spec->block_ids.clear();
  spec->block_ids.reserve(blocks);
  for (size_t j = 0; j < blocks; ++j) {
    uint64_t id = 0;
    if (j < prefix_blocks) {
      id = Mix64(prefix_salt + j);
    } else if (j < shared_blocks) {
      id = Mix64(session_salt + j);
    } else {
      id = Mix64(branch_salt + j);
    }
    spec->block_ids.push_back(id);
  }
  spec->block_tokens = kSessionBlockTokens;
}

std::optional<RequestSpec> SessionPlanner::NextStart() {
  if (trace_mode_) return NextTraceStart();
  std::optional<RequestSpec> r = gen_.Next();
  if (!r || !enabled_) return r;
  r->session = static_cast<int64_t>(r->index);
  r->index = next_index_++;
  r->turn = 0;
  Rng rng = TurnRng(seed_, r->session, 0);
  r->turns = LengthSampler(spec_.turns, 10'000).Sample(rng);
  r->branch = 0;
  r->branches = 1;
  r->calls = PlannedCalls(r->session, r->turns);
  FillBlocks(&*r, 0);
  steps_[r->session] = OpenStep{0, 1, false, 0, 0};
  return r;
}

SessionPlanner::CallEnd SessionPlanner::NextTurn(const RequestSpec& ended, bool ok, int64_t answer_tokens) {
  CallEnd out;
  if (!enabled_ || ended.session < 0) {
    out.session_over = true;
    return out;
  }
  if (trace_mode_) return NextTraceStep(ended, ok);
  auto it = steps_.find(ended.session);
  if (it == steps_.end() || it->second.turn != ended.turn) {
    out.session_over = true;  // not a call of this planner's open step
    return out;
  }
  OpenStep& step = it->second;
  const int64_t answer = answer_tokens >= 0 ? answer_tokens : ended.output_tokens;
  step.appended += (static_cast<int64_t>(ended.input_tokens) - step.shared) + answer;
  if (!ok) step.failed = true;
  if (--step.open > 0) return out;  // siblings still running: the step has not ended
  const OpenStep done = step;
  steps_.erase(it);
  out.session_over = true;
  if (done.failed || ended.turn + 1 >= ended.turns) return out;

  const int32_t turn = ended.turn + 1;
  const int32_t branches = Branches(ended.session, turn);
  const int64_t shared = done.shared + done.appended;
  std::vector<FollowUp> next;
  next.reserve(static_cast<size_t>(branches));
  for (int32_t b = 0; b < branches; ++b) {
    FollowUp f;
    RequestSpec& r = f.spec;
    r = ended;
    r.turn = turn;
    r.branch = b;
    r.branches = branches;
    // Branch 0 draws exactly what a single-chain turn draws; later branches their own.
    Rng rng = b == 0 ? TurnRng(seed_, r.session, turn)
                     : Rng(StreamSeed(seed_, kBranchStream ^ Mix64(static_cast<uint64_t>(r.session)) ^ BranchKey(turn, b)));
    const int32_t message = LengthSampler(spec_.new_message_tokens, 0).Sample(rng);
    r.output_tokens = LengthSampler(output_, 0).Sample(rng);
    if (b == 0 && spec_.think_time_ms) f.delay = MillisToNanos(LengthSampler(*spec_.think_time_ms, 0).Sample(rng));
    if (b > 0) f.delay = next.front().delay;  // the step's calls are released together
    const int64_t len = shared + message;
    // The conversation no longer fits the product's prompt limit: the session ends here.
    if ((max_input_ > 0 && len > max_input_) || len > INT32_MAX / 2) return out;
    r.input_tokens = static_cast<int32_t>(len);
    r.t_arrival = 0;  // released by the caller at the step's end + delay
    r.seed = Mix64(ended.seed ^ static_cast<uint64_t>(turn) ^ (static_cast<uint64_t>(b) << 32));
    FillBlocks(&r, shared);
    next.push_back(std::move(f));
  }
  for (FollowUp& f : next) f.spec.index = next_index_++;
  steps_[ended.session] = OpenStep{turn, branches, false, shared, 0};
  out.next = std::move(next);
  out.session_over = false;
  return out;
}

}  // namespace infereng::workload
