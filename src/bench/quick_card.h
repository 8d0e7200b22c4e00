// QuickCard: the workload card `infereng bench` builds from flags when it is given no
// --card, for a quick look at an endpoint the way people use vLLM's `bench serve`:
//
//   infereng bench --target URL --model M --input-len 512 --output-len 128 --num-requests 50
//
// Like vLLM's random dataset with range 0: every prompt has exactly input_len tokens and
// asks for exactly output_len; no SLOs, no warm-up, one trial, N measured requests. The
// load comes from the usual flags (--rate / --concurrency, or vLLM's --request-rate /
// --max-concurrency); with neither, every request is sent at once (vLLM's default
// --request-rate inf). manifest.json records card.synthesised_from_flags with the values,
// so a run directory says it had no card file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "card/card.h"
#include "core/status.h"

namespace infereng::bench {

struct QuickCardFlags {
  // Defaults: vLLM's random dataset lengths; 100 requests rather than vLLM's 1000 prompts
  // (a quick look, seconds against a real engine).
  static constexpr int64_t kDefaultInputLen = 1024;
  static constexpr int64_t kDefaultOutputLen = 128;
  static constexpr int64_t kDefaultRequests = 100;

  std::string model;                       // "" = the server's first model
  int64_t input_len = kDefaultInputLen;    // prompt tokens per request
  int64_t output_len = kDefaultOutputLen;  // output tokens per request
  int64_t num_requests = kDefaultRequests; // measured requests
  std::string request_rate;                // as given, "" = none (recorded; the load flags apply it)
  std::optional<int> max_concurrency;      // as given (recorded)
  std::string duration;                    // as given, "" = none (recorded; with it and no
                                           // explicit request count, num_requests is unused)
  bool num_requests_given = false;         // --num-requests / --requests was on the command line
};

// The card; InvalidArgument naming the flag ("--input-len: must be >= 1, got 0").
Result<card::WorkloadCard> QuickCard(const QuickCardFlags& flags);

// {"model", "input_len", "output_len", "num_requests", "request_rate", "max_concurrency",
// "duration"}: manifest.json's card.synthesised_from_flags (null: not given / not used).
nlohmann::json QuickCardJson(const QuickCardFlags& flags);

}  // namespace infereng::bench
