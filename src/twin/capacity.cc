#include "twin/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "card/card_parser.h"
#include "core/units.h"
#include "twin/setup.h"
#include "twin/simulation.h"
#include "workload/client_load.h"

namespace infereng::twin {
namespace {

// ceil(x) as an int, at most cap + 1 (one past any replica count the search may try) and 0
// for NaN or negatives: the ratios it rounds (target over estimated capacity) can be huge
// or NaN, where a plain cast to int is undefined behaviour.
int ClampedCeil(double x, int cap) {
  if (!(x > 0)) return 0;
  return static_cast<int>(std::min(std::ceil(x), static_cast<double>(cap) + 1));
}

std::string Fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// "1 replica", "3 replicas".
std::string Replicas(int n) { return std::to_string(n) + (n == 1 ? " replica" : " replicas"); }

// Largest request the card can send (prompt + output), 0 when unbounded/unknown.
int64_t LargestRequest(const card::WorkloadCard& c) {
  if (c.product.max_context_tokens > 0) return c.product.max_context_tokens;
  const double in = c.product.max_input_tokens > 0 ? static_cast<double>(c.product.max_input_tokens) : c.traffic.input_tokens.max;
  const double out = c.product.max_output_tokens > 0 ? static_cast<double>(c.product.max_output_tokens) : c.traffic.output_tokens.max;
  if (c.traffic.input_tokens.kind == card::Distribution::Kind::kFixed && in <= 0) {
    return static_cast<int64_t>(c.traffic.input_tokens.value + std::max(out, c.traffic.output_tokens.value));
  }
  return in > 0 && out > 0 ? static_cast<int64_t>(in + out) : 0;
}

struct Trial {
  bool pass = false;
  double badness = 0;  // worst SLO value / threshold (> 1 fails): progress between trials
  std::string why;  // first reason it failed
  SimulationResult result;
};

Trial Judge(SimulationResult r) {
  Trial t;
  const metrics::Summary& s = r.summary;
  if (r.twin.incomplete > 0) t.why = std::to_string(r.twin.incomplete) + " requests never finished";
  else if (r.twin.queue_growing) t.why = "the queue keeps growing (overloaded)";
  for (const metrics::SloResult& slo : s.slo) {
    if (slo.threshold_ms > 0) t.badness = std::max(t.badness, slo.value_ms / slo.threshold_ms);
    if (t.why.empty() && !slo.pass) {
      t.why = slo.metric + Fmt(" p%g = %.0f ms > %.0f ms", slo.percentile, slo.value_ms, slo.threshold_ms);
    }
  }
  if (s.slo_attainment > 0) t.badness = std::max(t.badness, s.slo_attainment_target / s.slo_attainment);
  if (t.why.empty() && !s.slo.empty() && !s.slo_attainment_pass) {
    t.why = Fmt("SLO attainment %.1f%% < %.1f%%", 100 * s.slo_attainment, 100 * s.slo_attainment_target);
  }
  if (t.why.empty() && s.min_output_tokens_per_s && s.output_tokens_per_s < *s.min_output_tokens_per_s) {
    t.why = Fmt("output %.0f tok/s below the floor %.0f tok/s", s.output_tokens_per_s, *s.min_output_tokens_per_s);
  }
  t.pass = t.why.empty();
  t.result = std::move(r);
  return t;
}

}  // namespace

Result<CapacityResult> SearchCapacity(const card::WorkloadCard& card, const catalog::Catalog& cat,
                                      const CapacityOptions& o) {
  if (!(o.burst_headroom >= 1)) return Status::InvalidArgument("--burst-headroom must be >= 1");
  if (o.max_replicas < 1) return Status::InvalidArgument("--max-replicas must be >= 1");
  CapacityResult out;
  out.budget_per_hour_usd = card.constraints.budget_per_hour_usd;
  INFERENG_ASSIGN_OR_RETURN(workload::ClientLoad load,
                            workload::ResolveClientLoad(card, {.rate_rps = o.rate_rps, .concurrency = o.concurrency}));
  out.closed_loop = load.closed_loop;
  out.concurrency = load.concurrency;
  if (!load.closed_loop) {
    // --rate, else the card's peak rate, else its mean rate.
    const double rate = load.rate_rps ? *load.rate_rps : card.traffic.peak_rate_rps.value_or(load.mean_rate_rps);
    if (!(rate > 0)) {
      return Status::InvalidArgument(card::FieldLocation(card, "traffic") +
                                     ": traffic: capacity needs an arrival rate or traffic.peak_rate");
    }
    out.target_rps = rate * o.burst_headroom;
  }

  std::vector<std::string> accels = o.accelerators;
  if (accels.empty()) accels = card.constraints.accelerators;
  if (accels.empty()) accels = cat.AcceleratorNames();
  for (const std::string& a : accels) {
    auto spec = cat.FindAccelerator(a);
    if (!spec.ok()) return spec.status().WithContext("--accelerators");
  }

  // Candidates, resolved (fit) up front, cheapest replica first.
  struct Pending {
    CapacityCandidate c;
    std::optional<TwinSetup> setup;
  };
  std::vector<Pending> pend;
  const int64_t largest = LargestRequest(card);
  for (const std::string& a : accels) {
    for (int count : o.counts) {
      Pending p;
      p.c.accelerator = a;
      p.c.count = count;
      p.c.tp = count;
      SetupOptions so;
      so.sets = o.sets;
      so.accelerator = a;
      so.count = count;
      so.tp = count;
      so.replicas = 1;
      INFERENG_ASSIGN_OR_RETURN(CandidateSetup s, ResolveCandidate(card, so, cat));
      if (s.setup && o.measured_cost) {
        s.setup->UseMeasuredCost(o.measured_cost, o.measured_label);
      }
      if (s.setup) p.c.cost_caveats = s.setup->cost_caveats;
      if (!s.setup) {
        p.c.verdict = "does not fit: " + s.does_not_fit;
      } else if (largest > 0 && s.setup->settings.engine.kv_cache_tokens < largest) {
        p.c.verdict = "does not fit: the KV cache holds " + std::to_string(s.setup->settings.engine.kv_cache_tokens) +
                      " tokens, less than one request of up to " + std::to_string(largest);
        p.c.price_per_hour_usd = s.setup->PricePerReplicaHour();
      } else {
        p.c.fits = true;
        p.c.price_per_hour_usd = s.setup->PricePerReplicaHour();
        p.setup = std::move(s.setup);
      }
      pend.push_back(std::move(p));
    }
  }
  std::stable_sort(pend.begin(), pend.end(), [](const Pending& x, const Pending& y) {
    if (x.c.fits != y.c.fits) return x.c.fits;
    return x.c.price_per_hour_usd < y.c.price_per_hour_usd;
  });

  std::optional<double> best;
  for (Pending& p : pend) {
    CapacityCandidate& c = p.c;
    if (!c.fits) continue;
    const double per_replica = c.price_per_hour_usd;
    if (best && per_replica >= *best && per_replica > 0) {
      c.verdict = Fmt("pruned by cost: one replica costs $%.2f/h, not below the best $%.2f/h", per_replica, *best);
      continue;
    }
    int cap_replicas = o.max_replicas;
    if (best && per_replica > 0) {  // only counts strictly cheaper than the best so far
      // Bounded before the cast: a tiny price makes the ratio huge (int overflow is UB).
      const double cheaper = std::min(std::ceil(*best / per_replica - 1e-9), static_cast<double>(cap_replicas) + 1);
      cap_replicas = std::min(cap_replicas, static_cast<int>(cheaper) - 1);
    }
    auto run = [&](int replicas) -> Result<Trial> {
      TwinSetup s = *p.setup;
      s.settings.cluster.replicas = replicas;
      SimulationOptions so;
      if (out.closed_loop) {
        so.concurrency = out.concurrency;  // alone: the closed loop of C users
      } else {
        so.rate_rps = out.target_rps;
        if (out.concurrency > 0) so.concurrency = out.concurrency;  // with the rate: the cap
      }
      so.duration_s = o.duration_s;
      so.seed = o.seed;
      so.drain_s = std::max(30.0, o.duration_s / 2);
      ++c.simulations;
      ++out.simulations;
      INFERENG_ASSIGN_OR_RETURN(SimulationResult r, RunSimulation(card, s, so));
      return Judge(std::move(r));
    };
    // Find a passing replica count: 1, then the mean-field guess, then x1.5 steps.
    int lo = 0, hi = 0;
    std::optional<Trial> pass_trial;
    std::string last_why;
    double prev_badness = 0;
    int r = 1;
    while (r <= cap_replicas) {
      INFERENG_ASSIGN_OR_RETURN(Trial t, run(r));
      if (t.pass) {
        hi = r;
        pass_trial = std::move(t);
        break;
      }
      lo = r;
      last_why = t.why;
      const TwinReport& tw = t.result.twin;
      const bool stalled = prev_badness > 0 && t.badness > prev_badness * 0.99;
      prev_badness = t.badness;
      if (stalled && tw.utilisation_estimate < 0.3 && !tw.queue_growing && tw.incomplete == 0) {
        // Lightly loaded, still failing and no better than with fewer replicas:
        // per-request latency, not capacity, is the problem.
        last_why += Fmt(" already at utilisation %.2f: per-request latency bound, more replicas do not help",
                        tw.utilisation_estimate);
        break;
      }
      int next = ClampedCeil(r * 1.5, cap_replicas);
      const metrics::Summary& sum = t.result.summary;
      if (r == 1 && !out.closed_loop && t.result.twin.capacity_rps_estimate > 0) {
        next = std::max(2, ClampedCeil(out.target_rps / t.result.twin.capacity_rps_estimate * 1.1, cap_replicas));
      } else if (r == 1 && out.closed_loop && sum.min_output_tokens_per_s && sum.output_tokens_per_s > 0) {
        // C users' throughput grows at most linearly with replicas: aim for the floor.
        next = std::max(2, ClampedCeil(*sum.min_output_tokens_per_s / sum.output_tokens_per_s * 1.1, cap_replicas));
      }
      if (next <= r) next = r + 1;
      if (r < cap_replicas && next > cap_replicas) next = cap_replicas;
      r = next;
    }
    if (!pass_trial) {
      const std::string replicas = Replicas(std::max(lo, 1));
      c.verdict = best && lo >= cap_replicas
                      ? "cannot beat the best deployment: with " + replicas + " (the most that would still be cheaper) " +
                            last_why
                      : "fails with " + replicas + ": " + last_why;
      continue;
    }
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      INFERENG_ASSIGN_OR_RETURN(Trial t, run(mid));
      if (t.pass) {
        hi = mid;
        pass_trial = std::move(t);
      } else {
        lo = mid;
      }
    }
    c.passes = true;
    c.replicas = hi;
    c.price_per_hour_usd = per_replica * hi;
    const metrics::Summary& s = pass_trial->result.summary;
    c.ttft_p99_ms = s.ttft_incl_queue_ms.p99;
    c.tpot_p50_ms = s.tpot_ms.p50;
    c.e2e_p99_ms = s.e2e_incl_queue_ms.p99;
    c.slo_attainment = s.slo_attainment;
    c.kv_usage_mean = pass_trial->result.twin.kv_usage_mean;
    c.verdict = "meets every SLO with " + std::to_string(hi) + " replica" + (hi == 1 ? "" : "s");
    if (!best || c.price_per_hour_usd < *best) best = c.price_per_hour_usd;
  }
  // Winner and the losers' reasons relative to it.
  for (size_t i = 0; i < pend.size(); ++i) {
    if (pend[i].c.passes && best && pend[i].c.price_per_hour_usd == *best && !out.winner) out.winner = i;
  }
  for (size_t i = 0; i < pend.size(); ++i) {
    CapacityCandidate& c = pend[i].c;
    if (out.winner && i == *out.winner) {
      c.winner = true;
      c.verdict = "WINNER: " + c.verdict + Fmt(" at $%.2f/h", c.price_per_hour_usd);
    } else if (c.passes && best) {
      c.verdict += Fmt(", but costs $%.2f/h (+$%.2f/h)", c.price_per_hour_usd, c.price_per_hour_usd - *best);
    }
    out.candidates.push_back(std::move(c));
  }
  if (out.winner && out.budget_per_hour_usd) {
    out.within_budget = out.candidates[*out.winner].price_per_hour_usd <= *out.budget_per_hour_usd;
  }
  return out;
}

nlohmann::json CapacityResultToJson(const CapacityResult& r) {
  nlohmann::json cands = nlohmann::json::array();
  for (const CapacityCandidate& c : r.candidates) {
    cands.push_back({{"accelerator", c.accelerator}, {"count", c.count}, {"tp", c.tp},
                     {"replicas", c.replicas}, {"fits", c.fits}, {"passes", c.passes},
                     {"winner", c.winner}, {"price_per_hour_usd", c.price_per_hour_usd},
                     {"ttft_p99_ms", c.ttft_p99_ms}, {"tpot_p50_ms", c.tpot_p50_ms},
                     {"e2e_p99_ms", c.e2e_p99_ms}, {"slo_attainment", c.slo_attainment},
                     {"kv_usage_mean", c.kv_usage_mean}, {"simulations", c.simulations},
                     {"verdict", c.verdict}, {"cost_caveats", c.cost_caveats}});
  }
  nlohmann::json j = {{"target_rps", r.closed_loop ? nlohmann::json(nullptr) : nlohmann::json(r.target_rps)},
                      {"load", {{"mode", r.closed_loop ? "closed_loop" : r.concurrency > 0 ? "open_loop_capped" : "open_loop"},
                                {"concurrency", r.concurrency > 0 ? nlohmann::json(r.concurrency) : nlohmann::json(nullptr)}}},
                      {"candidates", cands}, {"simulations", r.simulations},
                      {"within_budget", r.within_budget}};
  j["winner"] = r.winner ? nlohmann::json(cands[*r.winner]) : nlohmann::json(nullptr);
  j["budget_per_hour_usd"] = r.budget_per_hour_usd ? nlohmann::json(*r.budget_per_hour_usd) : nlohmann::json(nullptr);
  return j;
}

std::string FormatCapacityResult(const CapacityResult& r) {
  std::string s;
  if (r.closed_loop) {
    s = Fmt("Target: %.0f concurrent users (closed loop: never more in flight, so no burst headroom); "
            "%.0f simulations\n\n",
            r.concurrency, static_cast<double>(r.simulations));
  } else if (r.concurrency > 0) {
    s = "Target: " + units::FormatSignificant(r.target_rps, 3) +
        Fmt(" rps (peak x burst headroom), at most %.0f in flight (the client's cap); %.0f simulations\n\n",
            r.concurrency, static_cast<double>(r.simulations));
  } else {
    s = "Target: " + units::FormatSignificant(r.target_rps, 3) +
        Fmt(" rps (peak x burst headroom); %.0f simulations\n\n", static_cast<double>(r.simulations));
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %5s %3s %8s %10s %9s %9s %9s  %s\n", "accelerator", "count", "tp",
                "replicas", "$/hour", "TTFT p99", "TPOT p50", "E2E p99", "verdict");
  s += line;
  for (const CapacityCandidate& c : r.candidates) {
    std::string reps = c.passes ? std::to_string(c.replicas) : "-";
    std::string price = c.price_per_hour_usd > 0 && c.passes ? Fmt("%.2f", c.price_per_hour_usd) : "-";
    std::string ttft = c.passes ? Fmt("%.0fms", c.ttft_p99_ms) : "-";
    std::string tpot = c.passes ? Fmt("%.1fms", c.tpot_p50_ms) : "-";
    std::string e2e = c.passes ? Fmt("%.0fms", c.e2e_p99_ms) : "-";
    std::snprintf(line, sizeof line, "%-12s %5d %3d %8s %10s %9s %9s %9s  ", c.accelerator.c_str(), c.count, c.tp,
                  reps.c_str(), price.c_str(), ttft.c_str(), tpot.c_str(), e2e.c_str());
    s += line + c.verdict + "\n";
  }
  s += "\n";
  if (r.winner) {
    const CapacityCandidate& w = r.candidates[*r.winner];
    s += Fmt("Winner: %.0f x ", w.replicas) + w.accelerator + Fmt(" x%.0f (tp %.0f)", w.count, w.tp) +
         Fmt(" = $%.2f/hour", w.price_per_hour_usd) + "\n";
    if (r.budget_per_hour_usd && !r.within_budget) {
      s += Fmt("Over budget: the card allows $%.2f/hour\n", *r.budget_per_hour_usd);
    }
    for (const std::string& c : w.cost_caveats) s += "CAUTION: " + c + "\n";
  } else {
    s += r.closed_loop ? "No candidate meets every SLO with the target users.\n"
                       : "No candidate meets every SLO at the target rate.\n";
  }
  return s;
}

}  // namespace infereng::twin
