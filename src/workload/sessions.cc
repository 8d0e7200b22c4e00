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

// The draws of one turn, from its own stream: the same whatever order turns end in.
Rng TurnRng(uint64_t seed, int64_t session, int32_t turn) {
  return Rng(StreamSeed(seed, kTurnStream ^ Mix64(static_cast<uint64_t>(session)) ^
                                  (static_cast<uint64_t>(turn) * 0x9e3779b97f4a7c15ULL)));
}

}  // namespace

SessionPlanner::SessionPlanner(Generator gen, const card::WorkloadCard& card, uint64_t seed)
    : gen_(std::move(gen)),
      enabled_(card.traffic.sessions.has_value()),
      tasks_(enabled_ && card.traffic.sessions->task),
      output_(card.traffic.output_tokens),
      max_input_(card.product.max_input_tokens),
      seed_(seed) {
  if (enabled_) spec_ = *card.traffic.sessions;
}

Result<SessionPlanner> SessionPlanner::FromCard(const card::WorkloadCard& card, const GeneratorOptions& options) {
  if (card.traffic.sessions && card.traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace) {
    return Status::InvalidArgument("traffic.sessions: does not apply to a trace replay");
  }
  INFERENG_ASSIGN_OR_RETURN(Generator gen, Generator::FromCard(card, options));
  return SessionPlanner(std::move(gen), card, options.seed);
}

void SessionPlanner::FillBlocks(RequestSpec* spec) const {
  const int64_t tokens = std::max<int32_t>(spec->input_tokens, 1);
  const auto blocks = static_cast<size_t>((tokens + kSessionBlockTokens - 1) / kSessionBlockTokens);
  // Reuse what the previous turn had: the stream only grows.
  size_t prefix_blocks = 0;
  if (spec->prefix_id >= 0 && spec->prefix_tokens > 0) {
    prefix_blocks = static_cast<size_t>((spec->prefix_tokens + kSessionBlockTokens - 1) / kSessionBlockTokens);
  }
  const uint64_t prefix_salt = Mix64(kPrefixBlocks ^ Mix64(static_cast<uint64_t>(spec->prefix_id) + 1));
  const uint64_t session_salt = StreamSeed(seed_, kBlockStream ^ Mix64(static_cast<uint64_t>(spec->session)));
  for (size_t j = spec->block_ids.size(); j < blocks; ++j) {
    spec->block_ids.push_back(j < prefix_blocks ? Mix64(prefix_salt + j) : Mix64(session_salt + j));
  }
  spec->block_ids.resize(blocks);
  spec->block_tokens = kSessionBlockTokens;
}

std::optional<RequestSpec> SessionPlanner::NextStart() {
  std::optional<RequestSpec> r = gen_.Next();
  if (!r || !enabled_) return r;
  r->session = static_cast<int64_t>(r->index);
  r->index = next_index_++;
  r->turn = 0;
  Rng rng = TurnRng(seed_, r->session, 0);
  r->turns = LengthSampler(spec_.turns, 10'000).Sample(rng);
  FillBlocks(&*r);
  return r;
}

std::optional<SessionPlanner::FollowUp> SessionPlanner::NextTurn(const RequestSpec& ended, bool ok,
                                                                  int64_t answer_tokens) {
  if (!enabled_ || ended.session < 0 || !ok || ended.turn + 1 >= ended.turns) return std::nullopt;
  FollowUp f;
  RequestSpec& r = f.spec;
  r = ended;
  r.turn = ended.turn + 1;
  Rng rng = TurnRng(seed_, r.session, r.turn);
  const int32_t message = LengthSampler(spec_.new_message_tokens, 0).Sample(rng);
  r.output_tokens = LengthSampler(output_, 0).Sample(rng);
  if (spec_.think_time_ms) f.delay = MillisToNanos(LengthSampler(*spec_.think_time_ms, 0).Sample(rng));
  const int64_t answer = answer_tokens >= 0 ? answer_tokens : ended.output_tokens;
  const int64_t next_len = static_cast<int64_t>(ended.input_tokens) + answer + message;
  // The conversation no longer fits the product's prompt limit: the session ends here.
  if ((max_input_ > 0 && next_len > max_input_) || next_len > INT32_MAX / 2) return std::nullopt;
  r.input_tokens = static_cast<int32_t>(next_len);
  r.t_arrival = 0;  // released by the caller at the previous end + delay
  r.index = next_index_++;
  r.seed = Mix64(ended.seed ^ static_cast<uint64_t>(r.turn));
  FillBlocks(&r);
  return f;
}

}  // namespace infereng::workload
