#include "job/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/clock.h"
#include "core/stats.h"
#include "core/units.h"
#include "metrics/derive.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

// Per-request parts from the twin's records, successful requests only.
struct Samples {
  std::vector<double> client_wait, queue, prefill, decode, itl, tpot;
};

// The summary's window on t_sched (virtual time starts at 0), so the parts come from the
// same requests as the objective's percentile.
Samples Collect(const std::vector<metrics::RequestRecord>& records, const metrics::Summary& summary) {
  Samples s;
  metrics::DeriveOptions opt;
  const Nanos from = SecondsToNanos(summary.window_start_s), to = SecondsToNanos(summary.window_end_s);
  for (const metrics::RequestRecord& r : records) {
    if (r.error != metrics::ErrorClass::kNone || r.t_sched < from || r.t_sched > to) continue;
    metrics::RequestMetrics m = metrics::DeriveRequest(r, opt);
    if (m.schedule_lag_ms) s.client_wait.push_back(*m.schedule_lag_ms);
    if (m.queue_ms) s.queue.push_back(*m.queue_ms);
    if (m.prefill_ms) s.prefill.push_back(*m.prefill_ms);
    if (m.e2e_ms && m.ttft_ms) s.decode.push_back(*m.e2e_ms - *m.ttft_ms);
    if (m.tpot_ms) s.tpot.push_back(*m.tpot_ms);
    s.itl.insert(s.itl.end(), m.itl_ms.begin(), m.itl_ms.end());
  }
  return s;
}

double Pct(std::vector<double>& v, double p) { return v.empty() ? 0 : stats::PercentileInPlace(v, p); }

std::string Source(double p, size_t n, const char* unit = "requests") {
  return "twin P" + units::FormatSignificant(p, 3) + " over " + std::to_string(n) + " " + unit;
}

struct Fixed {
  double network = 0, preprocess = 0, postprocess = 0;
};

// One objective's split. `expected_twin_ms` is the twin's own percentile of the metric as the
// summary judged it (open loop: from the intended send, client wait included).
BudgetLine Split(const card::SloTarget& slo, double expected_twin_ms, const Fixed& f, Samples& s) {
  BudgetLine line;
  line.metric = slo.metric;
  line.percentile = slo.percentile;
  line.target_ms = slo.threshold_ms;
  const double p = slo.percentile;
  double fixed = 0;
  auto card_part = [&](const char* name, double ms) {
    line.parts.push_back({name, ms, std::string("card product.") + name});
    fixed += ms;
  };
  auto twin_part = [&](const char* name, std::vector<double>& v) {
    line.parts.push_back({name, Pct(v, p), Source(p, v.size())});
  };
  if (slo.metric == "ttft_ms" || slo.metric == "e2e_ms") {
    card_part("network", f.network);
    card_part("preprocess", f.preprocess);
    if (Pct(s.client_wait, 100) > 0) twin_part("client_wait", s.client_wait);
    twin_part("queue", s.queue);
    twin_part("prefill", s.prefill);
    if (slo.metric == "e2e_ms") {
      twin_part("decode", s.decode);
      card_part("postprocess", f.postprocess);
    }
  } else if (slo.metric == "itl_ms") {  // the gap between tokens: decode steps, prefills in them
    line.parts.push_back({"decode", Pct(s.itl, p), Source(p, s.itl.size(), "token gaps")});
  } else {
    twin_part("decode", s.tpot);
  }
  for (const BudgetPart& part : line.parts) line.parts_sum_ms += part.ms;
  line.expected_ms = expected_twin_ms + fixed;
  line.headroom_ms = line.target_ms - line.expected_ms;
  line.pass = line.headroom_ms >= 0;
  const auto biggest = std::max_element(line.parts.begin(), line.parts.end(),
                                        [](const BudgetPart& a, const BudgetPart& b) { return a.ms < b.ms; });
  if (biggest != line.parts.end()) line.largest = biggest->name;
  return line;
}

twin::SimulationOptions SimOptions(const card::WorkloadCard& card, const BudgetOptions& o) {
  twin::SimulationOptions so;
  so.duration_s = std::min(card.bench.duration_s > 0 ? card.bench.duration_s : o.duration_s, o.duration_s);
  so.keep_records = true;
  so.summary_thread = false;
  return so;
}

// The longest prompt that meets `target_ms` when its prefill runs alone after `before_ms`.
std::optional<int64_t> LongestPrompt(const twin::TwinSetup& setup, double before_ms, double target_ms,
                                     int64_t max_len) {
  const twin::EngineConfig& e = setup.settings.engine;
  const int64_t chunk = e.enable_chunked_prefill ? std::max<int64_t>(1, e.max_num_batched_tokens) : max_len;
  auto prefill_ms = [&](int64_t len) {
    double s = 0;
    for (int64_t done = 0; done < len;) {
      const int64_t n = std::min(chunk, len - done);
      twin::StepShape shape;
      shape.prefill_seqs = 1;
      shape.prefill_tokens = n;
      shape.prefill_context = done;
      shape.prefill_attn_pairs = static_cast<double>(n) * (static_cast<double>(done) + 0.5 * static_cast<double>(n));
      s += setup.cost->StepSeconds(shape) + e.HostSeconds(1);
      done += n;
    }
    return s * 1e3;
  };
  if (before_ms + prefill_ms(1) > target_ms) return 0;
  if (before_ms + prefill_ms(max_len) <= target_ms) return max_len;
  int64_t lo = 1, hi = max_len;  // lo meets, hi misses
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (before_ms + prefill_ms(mid) <= target_ms ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

Result<BudgetResult> BuildBudget(const card::WorkloadCard& card, const twin::TwinSetup& setup,
                                 const BudgetOptions& options) {
  std::vector<card::SloTarget> objectives;
  for (const card::SloTarget& t : card.slo.latency) {
    if (t.metric == "ttft_ms" || t.metric == "e2e_ms" || t.metric == "tpot_ms" || t.metric == "itl_ms") {
      objectives.push_back(t);
    }
  }
  if (objectives.empty()) {
    return Status::FailedPrecondition("the card has no latency objective (slo.ttft, slo.tpot, slo.itl, slo.e2e) to split");
  }
  BudgetResult b;
  b.description = setup.description;
  Fixed f;
  auto fixed = [&](const std::optional<double>& v, const char* name, double* into) {
    if (v) *into = *v;
    else b.missing.push_back(std::string("product.") + name);
  };
  fixed(card.product.network_ms, "network", &f.network);
  fixed(card.product.preprocess_ms, "preprocess", &f.preprocess);
  fixed(card.product.postprocess_ms, "postprocess", &f.postprocess);

  twin::SimulationOptions so = SimOptions(card, options);
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult sim, twin::RunSimulation(card, setup, so));
  b.load_rps = sim.twin.load_rate_rps;
  b.requests = sim.summary.counts.succeeded;
  b.description += ", " + sim.twin.load_mode + (b.load_rps > 0 ? " at " + units::FormatSignificant(b.load_rps, 3) + " rps" : "");
  Samples s = Collect(sim.records, sim.summary);
  for (const card::SloTarget& t : objectives) {
    double twin_ms = 0;
    for (const metrics::SloResult& r : sim.summary.slo) {
      if (r.metric == t.metric && r.percentile == t.percentile) twin_ms = r.value_ms;
    }
    b.lines.push_back(Split(t, twin_ms, f, s));
  }

  // Derived limits.
  BudgetLimits& lim = b.limits;
  // Each limit follows the strictest objective of its metric (the highest percentile).
  const auto first = [&](const char* metric) -> const BudgetLine* {
    const BudgetLine* best = nullptr;
    for (const BudgetLine& l : b.lines) {
      if (l.metric == metric && (!best || l.percentile > best->percentile)) best = &l;
    }
    return best;
  };
  const int64_t max_len = setup.settings.engine.max_model_len > 0 ? setup.settings.engine.max_model_len : 131072;
  if (const BudgetLine* ttft = first("ttft_ms")) {
    const double queue = Pct(s.queue, ttft->percentile) + Pct(s.client_wait, ttft->percentile);
    lim.longest_prompt_tokens = LongestPrompt(setup, f.network + f.preprocess + queue, ttft->target_ms, max_len);
    lim.notes.push_back("longest prompt: its prefill alone (no other work in its steps) after the card's network and "
                        "preprocess and the twin's P" + units::FormatSignificant(ttft->percentile, 3) +
                        " queueing at the card's load; capped at the engine's max_model_len " + std::to_string(max_len));
  } else {
    lim.notes.push_back("longest prompt: n/a (no TTFT objective)");
  }
  if (const BudgetLine* e2e = first("e2e_ms")) {
    const double p = e2e->percentile;
    const double before = f.network + f.preprocess + f.postprocess + Pct(s.client_wait, p) + Pct(s.queue, p) + Pct(s.prefill, p);
    const double tpot = Pct(s.tpot, p);
    lim.tpot_ms = tpot;
    if (tpot > 0) {
      const double room = e2e->target_ms - before;
      lim.longest_output_tokens = room < 0 ? 0 : static_cast<int64_t>(std::min(std::floor(room / tpot), 1e15)) + 1;
      lim.notes.push_back("longest output: (E2E target - fixed parts - P" + units::FormatSignificant(p, 3) +
                          " queue and prefill) / P" + units::FormatSignificant(p, 3) + " TPOT " +
                          units::FormatSignificant(tpot, 3) + " ms, + the first token");
    }
  } else {
    lim.notes.push_back("longest output: n/a (no E2E objective)");
  }
  const BudgetLine* driver = first("ttft_ms") ? first("ttft_ms") : first("e2e_ms");
  if (!options.search_load) {
    lim.notes.push_back("queueing limit: not searched");
  } else if (!driver) {
    lim.notes.push_back("queueing limit: n/a (no TTFT or E2E objective)");
  } else if (!(b.load_rps > 0)) {
    lim.notes.push_back("queueing limit: n/a for a closed-loop card (its users wait for each other; "
                        "plan users with `capacity --concurrency`)");
  } else {
    // Bisection on the open-loop rate: the twin's percentile of the driving metric plus the
    // card's fixed parts against its target.
    const double fixed_ms = driver->expected_ms - [&] {
      for (const metrics::SloResult& r : sim.summary.slo) {
        if (r.metric == driver->metric && r.percentile == driver->percentile) return r.value_ms;
      }
      return 0.0;
    }();
    auto meets = [&](double rps) -> Result<bool> {
      twin::SimulationOptions o = SimOptions(card, options);
      o.keep_records = false;
      o.rate_rps = rps;
      INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult r, twin::RunSimulation(card, setup, o));
      for (const metrics::SloResult& x : r.summary.slo) {
        if (x.metric == driver->metric && x.percentile == driver->percentile) {
          return x.samples > 0 && x.value_ms + fixed_ms <= driver->target_ms && r.twin.incomplete == 0;
        }
      }
      return false;
    };
    double lo = 0, hi = b.load_rps;
    INFERENG_ASSIGN_OR_RETURN(bool ok, meets(hi));
    if (ok) {  // grow until it misses (at most 2^10 x the card's rate)
      for (int i = 0; i < 10 && ok; ++i) {
        lo = hi;
        hi *= 2;
        INFERENG_ASSIGN_OR_RETURN(ok, meets(hi));
      }
    }
    if (ok) {
      lim.notes.push_back("queueing limit: above " + units::FormatSignificant(hi, 3) + " rps (searched up to 1024x)");
    } else {
      for (int i = 0; i < 8; ++i) {
        const double mid = (lo + hi) / 2;
        INFERENG_ASSIGN_OR_RETURN(bool m, meets(mid));
        (m ? lo : hi) = mid;
      }
      lim.queueing_limit_rps = lo;
      lim.notes.push_back("queueing limit: the open-loop rate at which the twin's " + driver->metric + " P" +
                          units::FormatSignificant(driver->percentile, 3) + " (+ fixed parts) reaches " +
                          units::FormatSignificant(driver->target_ms, 4) + " ms; bisection to " +
                          units::FormatSignificant(100.0 / 256, 2) + "% of the bracket");
    }
  }
  return b;
}

nlohmann::json BudgetToJson(const BudgetResult& b) {
  nlohmann::json lines = nlohmann::json::array();
  for (const BudgetLine& l : b.lines) {
    nlohmann::json parts = nlohmann::json::array();
    for (const BudgetPart& p : l.parts) parts.push_back({{"name", p.name}, {"ms", p.ms}, {"source", p.source}});
    lines.push_back({{"metric", l.metric},
                     {"percentile", l.percentile},
                     {"target_ms", l.target_ms},
                     {"parts", parts},
                     {"parts_sum_ms", l.parts_sum_ms},
                     {"expected_ms", l.expected_ms},
                     {"headroom_ms", l.headroom_ms},
                     {"largest", l.largest},
                     {"pass", l.pass}});
  }
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"description", b.description},
          {"load_rps", b.load_rps},
          {"requests", b.requests},
          {"objectives", lines},
          {"limits",
           {{"longest_prompt_tokens", opt(b.limits.longest_prompt_tokens)},
            {"longest_output_tokens", opt(b.limits.longest_output_tokens)},
            {"queueing_limit_rps", opt(b.limits.queueing_limit_rps)},
            {"tpot_ms", b.limits.tpot_ms},
            {"notes", b.limits.notes}}},
          {"missing", b.missing}};
}

std::string BudgetText(const BudgetResult& b) {
  std::string s = "Latency budget: " + b.description + " (" + std::to_string(b.requests) + " simulated requests)\n";
  char buf[256];
  for (const BudgetLine& l : b.lines) {
    std::snprintf(buf, sizeof buf, "\n%s P%s <= %s ms: expected %s ms, headroom %s ms  %s (largest part: %s)\n",
                  l.metric.c_str(), units::FormatSignificant(l.percentile, 3).c_str(),
                  units::FormatSignificant(l.target_ms, 4).c_str(), units::FormatSignificant(l.expected_ms, 4).c_str(),
                  units::FormatSignificant(l.headroom_ms, 4).c_str(), l.pass ? "PASS" : "OVER BUDGET",
                  l.largest.c_str());
    s += buf;
    for (const BudgetPart& p : l.parts) {
      const double share = l.target_ms > 0 ? 100 * p.ms / l.target_ms : 0;
      std::snprintf(buf, sizeof buf, "  %-12s %10.1f ms  %5.1f%% of target  (%s)\n", p.name.c_str(), p.ms, share,
                    p.source.c_str());
      s += buf;
    }
    std::snprintf(buf, sizeof buf, "  %-12s %10.1f ms  (each part at its own percentile: an upper bound)\n", "sum",
                  l.parts_sum_ms);
    s += buf;
  }
  s += "\nLimits on this hardware at the card's load:\n";
  const BudgetLimits& m = b.limits;
  s += "  longest prompt meeting the TTFT target: " +
       (m.longest_prompt_tokens ? std::to_string(*m.longest_prompt_tokens) + " tokens" : std::string("n/a")) + "\n";
  s += "  longest output meeting the E2E target:  " +
       (m.longest_output_tokens ? std::to_string(*m.longest_output_tokens) + " tokens" : std::string("n/a")) + "\n";
  s += "  load where queueing uses up the budget:  " +
       (m.queueing_limit_rps ? units::FormatSignificant(*m.queueing_limit_rps, 3) + " rps" : std::string("n/a")) + "\n";
  for (const std::string& n : m.notes) s += "  - " + n + "\n";
  if (!b.missing.empty()) {
    s += "Not in the card (counted as 0 ms):";
    for (const std::string& x : b.missing) s += " " + x;
    s += "\n";
  }
  return s;
}

}  // namespace infereng::job
