// How a bench run gets prompts of the requested token lengths, decided once per run before
// any load (SetUpPrompts), and prepared before each phase (PreparePhasePrompts), so no
// control-plane call (/tokenize) ever sits between a request's scheduled time and its send.
//
// Calibration, best first:
//   - "tokenize+usage": /tokenize counts the text, and one pre-run request's
//     usage.prompt_tokens says what the server adds on top (chat template, BOS): prompts are
//     then checked to the exact length the server will report;
//   - "tokenize": /tokenize alone (the usage check failed: template/BOS may come on top);
//   - "usage-probe": no /tokenize; two pre-run requests' usage.prompt_tokens fit the model
//     (approximate; re-fitted on warm-up usage when there is a warm-up);
//   - "assumed": nothing answered: one token per word, re-fitted on warm-up usage if any.
// The label written to the manifest (CalibrationLabel) says which happened, and the
// achieved lengths (PromptBuilder::Report) are reported beside it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/engine_probe.h"
#include "bench/prompt.h"
#include "bench/request_body.h"
#include "card/card.h"
#include "client/http_client.h"
#include "workload/generator.h"

namespace infereng::bench {

struct PromptSetupInputs {
  const client::ClientOptions* client = nullptr;
  const ServerInfo* server = nullptr;
  ApiEndpoint endpoint = ApiEndpoint::kChat;
  std::string model;
  uint64_t seed = 0;
  Nanos timeout = 30 * kNanosPerSecond;  // per pre-run call
};

struct PromptSetup {
  std::unique_ptr<PromptBuilder> builder;
  std::string method = "assumed";  // tokenize+usage | tokenize | usage-probe | assumed
  int64_t server_overhead = 0;     // tokens the server adds to /tokenize's count
  std::vector<std::string> notes;  // what failed on the way, for the terminal and summary
};

// Never fails: what could not be measured is said in `notes` and in the method.
PromptSetup SetUpPrompts(const PromptSetupInputs& in);

// Builds (and, with /tokenize, checks) the first prompts of the phase whose generator
// `FromCard(card, gen)` makes, before the phase starts. Returns how many came out exact
// (0 without /tokenize).
Result<int64_t> PreparePhasePrompts(PromptBuilder& builder, const card::WorkloadCard& card,
                                    const workload::GeneratorOptions& gen);

// The manifest's prompts.length_calibration: what was actually done (after the run: with
// the warm-up re-fit, when there was one).
std::string CalibrationLabel(const PromptSetup& setup);

// One line for the terminal and summary notes: how exact the achieved lengths were.
std::string LengthExactnessNote(const PromptSetup& setup);

}  // namespace infereng::bench
