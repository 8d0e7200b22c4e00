// Prompt length calibration before a run and prompt preparation before each phase: see
// prompt_setup.h.
#include "bench/prompt_setup.h"

#include <cmath>
#include <cstdio>

#include "workload/sessions.h"

namespace infereng::bench {
namespace {

constexpr int kProbeWordsShort = 64;
constexpr int kProbeWordsLong = 512;
constexpr int kPreparedPerPhase = 64;  // prompts built and checked before each phase

}  // namespace

PromptSetup SetUpPrompts(const PromptSetupInputs& in) {
  PromptSetup out;
  const uint64_t seed = in.seed;
  const std::string short_text = PromptBuilder::Words(seed ^ 0x53, kProbeWordsShort);
  if (in.server->has_tokenize) {
    TokenCountFn counter = MakeTokenizeCounter(*in.client, *in.server, in.endpoint);
    // What the server adds on top of /tokenize's count (chat template, BOS): one request.
    Result<int64_t> text_tokens = counter(short_text);
    Result<int64_t> served = text_tokens.ok()
                                 ? ServerPromptTokens(*in.client, in.endpoint, in.model, short_text, in.timeout)
                                 : Result<int64_t>(text_tokens.status());
    std::string method = "tokenize";
    if (served.ok()) {
      out.server_overhead = *served - *text_tokens;
      method = "tokenize+usage";
      if (out.server_overhead != 0) {
        counter = [counter, d = out.server_overhead](const std::string& text) -> Result<int64_t> {
          INFERENG_ASSIGN_OR_RETURN(int64_t n, counter(text));
          return n + d;
        };
      }
    } else if (text_tokens.ok()) {
      out.notes.push_back("prompt lengths: /tokenize could not be checked against the server's usage.prompt_tokens (" +
                          served.status().message() + "): tokens the server adds (chat template, BOS) are not counted");
    }
    auto builder = std::make_unique<PromptBuilder>(seed, counter);
    Status st = text_tokens.ok() ? builder->Calibrate() : text_tokens.status();
    if (st.ok()) {
      out.builder = std::move(builder);
      out.method = method;
      return out;
    }
    out.notes.push_back("prompt lengths: /tokenize calibration failed (" + st.message() +
                        "): lengths fitted on usage.prompt_tokens instead");
  }
  // No /tokenize: fit tokens = a * words + b on two pre-run requests' usage.
  out.builder = std::make_unique<PromptBuilder>(seed);
  const std::string long_text = PromptBuilder::Words(seed ^ 0x54, kProbeWordsLong);
  Result<int64_t> u1 = ServerPromptTokens(*in.client, in.endpoint, in.model, short_text, in.timeout);
  Result<int64_t> u2 = u1.ok() ? ServerPromptTokens(*in.client, in.endpoint, in.model, long_text, in.timeout) : u1;
  if (!u2.ok()) {
    out.notes.push_back("prompt lengths: no usage.prompt_tokens before the run (" + u2.status().message() +
                        "): 1 token per word assumed until warm-up usage can be fitted");
    return out;
  }
  LengthModel m;
  m.tokens_per_word = static_cast<double>(*u2 - *u1) / (kProbeWordsLong - kProbeWordsShort);
  m.overhead_tokens = static_cast<double>(*u1) - m.tokens_per_word * kProbeWordsShort;
  if (!(m.tokens_per_word > 0.05 && m.tokens_per_word < 20)) {
    out.notes.push_back("prompt lengths: usage.prompt_tokens did not grow with the prompt (" + std::to_string(*u1) +
                        " then " + std::to_string(*u2) + " tokens): 1 token per word assumed");
    return out;
  }
  out.builder->SetModel(m);
  out.server_overhead = std::lround(m.overhead_tokens);
  out.method = "usage-probe";
  return out;
}

Result<int64_t> PreparePhasePrompts(PromptBuilder& builder, const card::WorkloadCard& card,
                                    const workload::GeneratorOptions& gen) {
  // Sessions: a turn's prompt is only known once the previous turn ended, and trimming it
  // to an exact length would cut the conversation it must start with; none are prepared
  // (the length model builds them; Prepare({}) still keeps /tokenize off the hot path).
  if (card.traffic.sessions || workload::TraceSessions(card)) return builder.Prepare({});
  INFERENG_ASSIGN_OR_RETURN(workload::Generator g, workload::Generator::FromCard(card, gen));
  std::vector<workload::RequestSpec> specs;
  while (static_cast<int>(specs.size()) < kPreparedPerPhase) {
    std::optional<workload::RequestSpec> spec = g.Next();
    if (!spec) break;
    if (spec->item_tokens.empty()) {
      specs.push_back(*spec);
      continue;
    }
    // Embeddings: each input is a prompt of its own (the phase builds them the same way);
    // rerank: the query and each document.
    if (spec->query_tokens > 0) specs.push_back(workload::RerankQuerySpec(*spec));
    for (size_t k = 0; k < spec->item_tokens.size() && static_cast<int>(specs.size()) < kPreparedPerPhase; ++k) {
      specs.push_back(workload::EmbeddingItemSpec(*spec, k));
    }
  }
  return builder.Prepare(specs);
}

std::string CalibrationLabel(const PromptSetup& setup) {
  const int64_t refit = setup.builder ? setup.builder->refit_samples() : 0;
  const std::string refitted =
      refit > 0 ? "; re-fitted on " + std::to_string(refit) + " warm-up requests' usage.prompt_tokens" : "";
  if (setup.method == "tokenize+usage") {
    return "tokenize+usage (prompts checked with /tokenize before each phase, plus " +
           std::to_string(setup.server_overhead) +
           " tokens the server adds (chat template, BOS) measured from usage.prompt_tokens)";
  }
  if (setup.method == "tokenize") {
    return "tokenize (prompts checked with /tokenize before each phase; tokens the server adds for the chat "
           "template or BOS are not counted)";
  }
  if (setup.method == "usage-probe") {
    return "usage-probe (approximate: fitted on 2 pre-run requests' usage.prompt_tokens" + refitted + ")";
  }
  return refit > 0 ? "usage-fit (approximate: fitted on " + std::to_string(refit) + " warm-up requests' usage.prompt_tokens)"
                   : "none (1 token per word assumed; nothing was fitted)";
}

std::string LengthExactnessNote(const PromptSetup& setup) {
  if (!setup.builder) return {};
  const LengthReport r = setup.builder->Report();
  if (r.samples == 0) return "prompt lengths: the server reported no usage.prompt_tokens: achieved lengths unknown";
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "prompt lengths: %lld of %lld exact per the server's usage.prompt_tokens (mean achieved/target %.3f, "
                "max error %lld tokens; calibration: %s)",
                static_cast<long long>(r.exact), static_cast<long long>(r.samples), r.mean_ratio,
                static_cast<long long>(r.max_abs_error), setup.method.c_str());
  return buf;
}

}  // namespace infereng::bench
