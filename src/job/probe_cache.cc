// The cache-isolation probe: a timing side channel through a prefix cache shared across
// tenants. Each trial draws a fresh secret prefix and a decoy of the same length; tenant A
// sends the secret; tenant B then sends both (secret + its own question, decoy + the same
// question) in a random order, one request at a time. If the cache is shared, B's request
// on the true secret skips A's prefill and its time to first token is shorter. The two
// TTFT samples are compared with a one-sided Mann-Whitney U test (core/rank_stats.h):
// "leaks" when p < alpha; otherwise "no detectable leak at this sample size", with the
// power the test had to see a given effect.
#include <algorithm>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/rank_stats.h"
#include "core/stats.h"
#include "job/probe.h"

namespace infereng::job {

namespace {

constexpr double kPowerEffect = 0.75;  // the probability of superiority the power is stated for

// A request of tenant `tenant` ("a" or "b"): its API key, or its cache_salt.
CallSpec TenantCall(const ProbeContext& ctx, const std::string& tenant, const std::string& prompt) {
  CallSpec s{.body = ctx.ChatBody(prompt, 1, true), .timeout = 10 * kNanosPerSecond};
  if (ctx.settings.tenant_by == TenantBy::kApiKey) {
    s.headers.push_back({"Authorization", "Bearer infereng-probe-tenant-" + tenant});
  } else {
    nlohmann::json j = nlohmann::json::parse(s.body);
    j["cache_salt"] = "infereng-probe-tenant-" + tenant;
    s.body = j.dump();
  }
  return s;
}

}  // namespace

ProbeResult RunCacheIsolationProbe(ProbeContext& ctx) {
  ProbeResult res;
  const ProbeSettings& s = ctx.settings;
  const int32_t prefix = std::min<int32_t>(s.cache_prefix_tokens, static_cast<int32_t>(ctx.max_model_len / 2));
  std::mt19937_64 rng(s.seed ^ 0xcac4e);
  std::vector<double> ttft_true, ttft_decoy;
  int failed = 0;
  for (int32_t trial = 0; trial < s.cache_trials; ++trial) {
    if (ctx.client.used() + 3 > ctx.client.budget().max_requests || ctx.client.time_left() < 2 * kNanosPerSecond) break;
    const uint64_t salt = rng();
    const std::string secret = ProbeContext::Words(prefix, salt), decoy = ProbeContext::Words(prefix, salt ^ 0xdec0);
    auto a = ctx.client.Call(TenantCall(ctx, "a", secret + " tell me about it"));
    if (!a.ok()) break;
    if (!a->ok()) {
      if (a->status == 401 || a->status == 403) {
        res.verdict = Verdict::kNotApplicable;
        res.finding = fmt::format("the target refused the probe's tenant API keys (HTTP {}); try --tenant-by cache-salt",
                                  a->status);
        return res;
      }
      ++failed;
      continue;
    }
    const bool true_first = (rng() & 1) != 0;
    double t_true = -1, t_decoy = -1;
    for (int k = 0; k < 2; ++k) {
      const bool is_true = (k == 0) == true_first;
      auto b = ctx.client.Call(TenantCall(ctx, "b", (is_true ? secret : decoy) + " what does it say"));
      if (!b.ok()) break;
      if (!b->ok() || b->ttft() < 0) continue;
      (is_true ? t_true : t_decoy) = NanosToMillis(b->ttft());
    }
    if (t_true < 0 || t_decoy < 0) {
      ++failed;
      continue;
    }
    ttft_true.push_back(t_true);
    ttft_decoy.push_back(t_decoy);
  }
  const stats::RankTestResult t = stats::MannWhitneyLess(ttft_true, ttft_decoy);
  const double power = stats::MannWhitneyPower(t.n_x, t.n_y, kPowerEffect, s.alpha);
  std::vector<double> st = ttft_true, sd = ttft_decoy;
  std::sort(st.begin(), st.end());
  std::sort(sd.begin(), sd.end());
  res.Add("trials", static_cast<double>(ttft_true.size()), "trials");
  res.Add("failed_trials", failed, "trials");
  res.Add("prefix_tokens", prefix, "words");
  res.Add("ttft_true_p50_ms", stats::PercentileSorted(st, 50), "ms");
  res.Add("ttft_decoy_p50_ms", stats::PercentileSorted(sd, 50), "ms");
  res.Add("superiority", t.superiority, "P(true faster)");
  res.Add("p_value", t.p_value);
  res.Add("alpha", s.alpha);
  res.Add("power_at_superiority_0.75", power);
  res.timeline.push_back({ctx.MsSinceStart(ProbeClient::SteadyNowNs()),
                          fmt::format("{} trials: true-secret TTFT p50 {:.2f} ms vs decoy {:.2f} ms, U={:.0f}, p={:.3g}",
                                      ttft_true.size(), res.Get("ttft_true_p50_ms"), res.Get("ttft_decoy_p50_ms"), t.u,
                                      t.p_value)});
  if (ttft_true.size() < 8) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = fmt::format("only {} complete trials (need 8)", ttft_true.size());
  } else if (t.p_value < s.alpha) {
    res.verdict = Verdict::kFail;
    res.finding = fmt::format("leaks: tenant B's TTFT is shorter on tenant A's secret prefix ({:.2f} vs {:.2f} ms median, "
                              "P(faster) {:.2f}, p = {:.2g} < {})",
                              res.Get("ttft_true_p50_ms"), res.Get("ttft_decoy_p50_ms"), t.superiority, t.p_value, s.alpha);
  } else {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("no detectable leak at this sample size ({} trials, p = {:.2g}; power {:.2f} to detect "
                              "P(faster) >= {} at alpha {})",
                              ttft_true.size(), t.p_value, power, kPowerEffect, s.alpha);
  }
  return res;
}

}  // namespace infereng::job
