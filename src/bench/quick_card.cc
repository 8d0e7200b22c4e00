#include "bench/quick_card.h"

#include "card/card_parser.h"

namespace infereng::bench {
namespace {

constexpr int64_t kMaxTokens = 100'000'000;  // the card schema's bound on a length

Status CheckCount(const char* flag, int64_t v, int64_t max) {
  if (v < 1 || v > max) {
    return Status::InvalidArgument(std::string(flag) + ": must be between 1 and " + std::to_string(max) + ", got " +
                                   std::to_string(v));
  }
  return Status::Ok();
}

}  // namespace

Result<card::WorkloadCard> QuickCard(const QuickCardFlags& f) {
  INFERENG_RETURN_IF_ERROR(CheckCount("--input-len", f.input_len, kMaxTokens));
  INFERENG_RETURN_IF_ERROR(CheckCount("--output-len", f.output_len, kMaxTokens));
  INFERENG_RETURN_IF_ERROR(CheckCount("--num-requests", f.num_requests, 100'000'000));
  card::WorkloadCard c;
  c.name = "quick-look";
  c.description = "synthesised from flags (bench without --card)";
  c.model.id = f.model;
  c.traffic.input_tokens = card::Distribution::Fixed(static_cast<double>(f.input_len));
  c.traffic.output_tokens = card::Distribution::Fixed(static_cast<double>(f.output_len));
  c.traffic.arrival.kind = card::ArrivalSpec::Kind::kPoisson;  // --rate R: Poisson at R, as vLLM
  c.bench.requests = f.num_requests;
  c.bench.warmup_s = 0;
  c.bench.cooldown_s = 0;
  c.bench.trials = 1;
  INFERENG_RETURN_IF_ERROR(card::ValidateCard(c));
  return c;
}

nlohmann::json QuickCardJson(const QuickCardFlags& f) {
  using nlohmann::json;
  return json{{"model", f.model.empty() ? json(nullptr) : json(f.model)},
              {"input_len", f.input_len},
              {"output_len", f.output_len},
              // A duration measures a window instead, unless the count was given too (it wins).
              {"num_requests", f.duration.empty() || f.num_requests_given ? json(f.num_requests) : json(nullptr)},
              {"request_rate", f.request_rate.empty() ? json(nullptr) : json(f.request_rate)},
              {"max_concurrency", f.max_concurrency ? json(*f.max_concurrency) : json(nullptr)},
              {"duration", f.duration.empty() ? json(nullptr) : json(f.duration)}};
}

}  // namespace infereng::bench
