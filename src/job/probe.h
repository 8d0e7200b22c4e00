// `infereng probe`: a suite of bounded experiments on a live endpoint, answering "is it
// ready for production?" — overload, cancellation, cold start, streaming integrity, limits
// and errors, health semantics, and tenant isolation of the prefix cache (docs/probe.md).
//
// Each probe is one function over a ProbeContext (job/probe_<name>.cc), listed once in
// ProbeTable() with its budget and the reason it matters; the suite runs the selected ones
// in table order. Safety: every request goes through ProbeClient, which refuses to pass a
// probe's request or time budget; before each probe the suite checks /health and backs off
// (doubling waits) while the target is unhealthy; if it stays unreachable or unhealthy the
// suite stops with Unavailable — and probe.json, rewritten after every probe, already holds
// every result so far.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/http_client.h"
#include "core/status.h"
#include "job/probe_client.h"
#include "job/probe_result.h"

namespace infereng::job {

enum class TenantBy { kApiKey, kCacheSalt };

struct ProbeSettings {
  std::string model{};              // "" = the first of /v1/models (none: the field is left out)
  int64_t max_model_len = 0;      // 0 = from /v1/models, else 131072
  int32_t output_tokens = 16;     // per ordinary probe request
  uint64_t seed = 42;             // prompts, trial order
  int32_t cache_trials = 20;      // cache-isolation trials (3 requests each)
  int32_t cache_prefix_tokens = 256;
  double alpha = 0.01;            // cache-isolation significance level
  TenantBy tenant_by = TenantBy::kApiKey;
  Nanos health_backoff = 5 * kNanosPerSecond;  // longest wait for an unhealthy target
  double budget_scale = 1.0;      // multiplies every probe's budget
  // Heartbeat probe: a silence before the first token this long is a warning (proxies'
  // idle timeouts: nginx proxy_read_timeout and AWS ALB default to 60 s), and its prompt.
  Nanos heartbeat_silence = 30 * kNanosPerSecond;
  int64_t heartbeat_prompt_tokens = 16000;
};

// Starts the target from cold and returns as soon as it is launched (not when ready):
// the cold-start probe times from the call. The embedded engine, or --start-cmd.
using Starter = std::function<Status()>;

// What the cold-start probe saw, for the health-semantics probe.
struct StartupObservation {
  bool observed = false;
  bool health_before_ready = false;  // /health said 200 while requests still failed
  double health_ready_ms = -1, first_token_ms = -1;
};

struct ProbeContext {
  ProbeClient& client;
  const ProbeSettings& settings;
  Starter start{};                      // empty: the target was not started by us
  StartupObservation startup{};
  std::string model{};                  // resolved model id ("" = leave the field out)
  int64_t max_model_len = 131072;

  // A chat request body: `prompt` as the user message.
  std::string ChatBody(const std::string& prompt, int64_t max_tokens, bool stream) const;
  // `n` distinct pseudo-words (seeded by `salt`): one token each on most tokenizers' scale.
  static std::string Words(int32_t n, uint64_t salt);
  Nanos Now() const { return ProbeClient::SteadyNowNs(); }
  double MsSinceStart(Nanos t) const { return NanosToMillis(t - client.start()); }
};

struct ProbeSpec {
  std::string_view name{};
  std::string_view why{};
  ProbeBudget budget{};
  ProbeResult (*run)(ProbeContext&);
};
// Every probe, in the order the suite runs them.
const std::vector<ProbeSpec>& ProbeTable();

// The probes.
ProbeResult RunOverloadProbe(ProbeContext& ctx);
ProbeResult RunCancellationProbe(ProbeContext& ctx);
ProbeResult RunColdStartProbe(ProbeContext& ctx);
ProbeResult RunStreamingProbe(ProbeContext& ctx);
ProbeResult RunHeartbeatProbe(ProbeContext& ctx);
ProbeResult RunLimitsProbe(ProbeContext& ctx);
ProbeResult RunHealthProbe(ProbeContext& ctx);
ProbeResult RunCacheIsolationProbe(ProbeContext& ctx);

struct ProbeSuiteOptions {
  std::string target{};                 // server root URL (display form: no secrets)
  client::ClientOptions client{};       // base_url = target; headers (API key), TLS
  std::vector<std::string> only{};      // probe names; empty = all
  std::string out_dir{};                // probe.json and probe.html go here ("" = not written)
  ProbeSettings settings{};
  Starter start{};
};

struct ProbeSuiteOutcome {
  std::vector<ProbeResult> results{};
  Status error{};                       // Unavailable: target unreachable/unhealthy (suite stopped)
  std::string json_path{};              // "" when not written
  std::string html_path{};              // probe.html beside it (job/probe_report.h)
  bool any_fail() const;
};

// InvalidArgument for an unknown --only name (before anything is sent); otherwise the
// outcome, with `error` set when the target went away part-way.
Result<ProbeSuiteOutcome> RunProbeSuite(const ProbeSuiteOptions& options);

// probe.json: {"target", "complete", "error", "probes": [...]}.
nlohmann::json SuiteJson(const std::string& target, const ProbeSuiteOutcome& outcome, bool complete);

}  // namespace infereng::job
