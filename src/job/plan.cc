#include "job/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include "catalog/catalog.h"
#include "job/diagnose.h"
#include "job/plan_hypotheses.h"
#include "metrics/summary_json.h"
#include "twin/setup.h"

namespace infereng::job {
namespace {

std::string Label(const std::string& metric, double percentile) {
  std::string m = metric.ends_with("_ms") ? metric.substr(0, metric.size() - 3) : metric;
  for (char& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format("{} P{:g}", m, percentile);
}

std::string Pct(double fraction) { return fmt::format("{:+.0f}%", fraction * 100); }

void Goals(const card::WorkloadCard& card, const metrics::Summary& base, const Plan& plan, std::vector<PlanGoal>* out) {
  const std::string from = plan.baseline_source == "measured" ? "measured, " + plan.run_dir + "/summary.json" : "twin prediction";
  for (const card::SloTarget& t : card.slo.latency) {
    PlanGoal g{"tail latency", Label(t.metric, t.percentile), t.threshold_ms, "ms"};
    for (const metrics::SloResult& r : base.slo) {
      if (r.metric == t.metric && r.percentile == t.percentile && r.samples > 0) {
        g.baseline = r.value_ms;
        g.note = from + " (" + r.measured_as + ")";
      }
    }
    if (!g.baseline) g.note = "the baseline has no " + g.what + " (no samples, or the run was judged without this objective)";
    else g.pass = *g.baseline <= g.target;
    out->push_back(g);
  }
  PlanGoal a{"goodput", "requests meeting every per-request threshold", card.slo.attainment * 100, "%", false};
  a.baseline = base.slo_attainment * 100;
  a.pass = base.slo_attainment >= card.slo.attainment;
  a.note = from + " (slo_attainment)";
  out->push_back(a);
  if (card.slo.min_output_tokens_per_s) {
    PlanGoal g{"throughput", "output tokens/s (system)", *card.slo.min_output_tokens_per_s, "tok/s", false};
    g.baseline = base.output_tokens_per_s;
    g.pass = base.output_tokens_per_s >= g.target;
    g.note = from;
    out->push_back(g);
  }
  if (card.slo.availability) {
    out->push_back({"reliability", "availability", *card.slo.availability * 100, "%", false, std::nullopt, std::nullopt,
                    "a benchmark does not measure availability: `infereng probe` and production monitoring do"});
  }
  if (card.quality.pass_threshold > 0) {
    PlanGoal q{"quality", "eval pass rate", card.quality.pass_threshold * 100, "%", false};
    if (base.counts.quality_checked > 0) {
      q.baseline = 100.0 * static_cast<double>(base.counts.quality_passed) / static_cast<double>(base.counts.quality_checked);
      q.pass = *q.baseline >= q.target;
      q.note = from;
    } else {
      q.note = "not measured: the twin does not answer the eval set; `infereng run` with quality.eval_set does";
    }
    out->push_back(q);
  }
  const Prediction& tw = plan.twin_baseline;
  auto cost_goal = [&](const char* what, double target, const std::optional<double>& v) {
    PlanGoal g{"cost", what, target, "$"};
    if (v) {
      g.baseline = *v;
      g.pass = *v <= target;
      g.note = "twin: the deployment's price x replicas";
    } else {
      g.note = "no price known: set deployment.price_per_hour_usd";
    }
    out->push_back(g);
  };
  if (card.constraints.budget_per_hour_usd) cost_goal("cost per hour", *card.constraints.budget_per_hour_usd, tw.cost_per_hour_usd);
  if (card.constraints.budget_per_1m_tokens_usd) {
    cost_goal("cost per 1M output tokens", *card.constraints.budget_per_1m_tokens_usd, tw.cost_per_1m_output_tokens_usd);
  }
}

Result<metrics::Summary> MeasuredBaseline(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Status::NotFound("--run " + dir + ": no such directory");
  const std::string path = dir + "/summary.json";
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound("--run " + dir + ": not a run directory (no summary.json)");
  }
  Result<metrics::Summary> s = metrics::ReadSummaryFile(path);
  if (!s.ok()) return s.status().WithContext("--run " + path);
  return s;
}

}  // namespace

void BuildAcceptance(const card::WorkloadCard& card, const EvaluatedExperiment& top, Plan* plan) {
  const double u = plan->uncertainty.relative;
  const Prediction& base = plan->twin_baseline;
  const Prediction& p = *top.predicted;
  std::vector<AcceptCriterion>& out = plan->acceptance;
  plan->accepted_experiment = top.candidate.id;
  // The headline: the predicted change at the far edge of the band, never accepting a regression.
  for (const PredictedMetric& m : PredictedMetrics()) {
    const double b = base.*m.value, e = p.*m.value;
    if (b == 0) continue;
    const double d = e / b - 1;
    const bool headline = m.accept_key == top.headline_key;
    const bool objective = std::any_of(card.slo.latency.begin(), card.slo.latency.end(), [&](const card::SloTarget& t) {
      return m.accept_key.starts_with(t.metric) && m.accept_key.ends_with(".p99");
    });
    if (!headline && !objective && m.accept_key != "goodput_rps") continue;
    std::string expr, text;
    if (m.lower_better) {
      double bound = (1 + d) * (1 + u) - 1;
      if (headline) bound = std::min(bound, 0.0);
      else bound = std::max(bound, 0.0);
      expr = m.accept_key + "<=" + Pct(bound);
      text = fmt::format("{} changes by at most {} (twin: {}, band +/-{:.0f}%)", m.label, Pct(bound), Pct(d), u * 100);
    } else {
      double bound = (1 + d) * (1 - u) - 1;
      if (headline) bound = std::max(bound, 0.0);
      else bound = std::min(bound, 0.0);
      expr = m.accept_key + ">=" + Pct(bound);
      text = fmt::format("{} changes by at least {} (twin: {}, band +/-{:.0f}%)", m.label, Pct(bound), Pct(d), u * 100);
    }
    if (headline) text = "headline: " + text;
    out.push_back({m.lower_better ? "tail latency" : "throughput", text, expr});
  }
  out.push_back({"reliability", "error rate up by at most 0.5 percentage points", "error_rate<=+0.5pp"});
  for (const card::SloTarget& t : card.slo.latency) {
    out.push_back({"tail latency",
                   fmt::format("{} <= {:g} ms on B (the card's objective; `compare --card` judges it)",
                               Label(t.metric, t.percentile), t.threshold_ms),
                   ""});
  }
  if (!top.candidate.quality_eval.empty()) {
    out.push_back({"quality", top.candidate.quality_eval, ""});
    if (top.candidate.family == "quantisation") {
      out.push_back({"quality", "eval pass rate down by at most 1 percentage point (both runs with the eval set)",
                     "quality_pass_rate>=-1pp"});
    }
  }
  if (card.constraints.budget_per_hour_usd) {
    out.push_back({"cost",
                   fmt::format("cost per hour <= ${:g} (card constraints.budget; twin predicts {})",
                               *card.constraints.budget_per_hour_usd,
                               p.cost_per_hour_usd ? fmt::format("${:.2f}", *p.cost_per_hour_usd) : "n/a"),
                   ""});
  }
  if (card.constraints.budget_per_1m_tokens_usd) {
    out.push_back({"cost",
                   fmt::format("cost per 1M output tokens <= ${:g} (card; twin predicts {})", *card.constraints.budget_per_1m_tokens_usd,
                               p.cost_per_1m_output_tokens_usd ? fmt::format("${:.3f}", *p.cost_per_1m_output_tokens_usd) : "n/a"),
                   ""});
  }
  if (card.slo.availability) {
    out.push_back({"reliability", fmt::format("availability >= {:g}% through the canary (health checks, no failed rollbacks)",
                                              *card.slo.availability * 100),
                   ""});
  }
  if (!card.constraints.privacy.empty() || top.candidate.family == "prefix_caching" || top.candidate.family == "routing") {
    out.push_back({"security",
                   (card.constraints.privacy.empty() ? std::string("tenant isolation")
                                                     : "privacy (" + card.constraints.privacy + ")") +
                       ": prefix-cache keys stay per tenant (engine.prefix_cache_shared false); no prompt or output in "
                       "logs or benchmark artefacts",
                   ""});
  }
  std::string accepts;
  for (const AcceptCriterion& c : out) {
    if (!c.accept.empty()) accepts += " --accept '" + c.accept + "'";
  }
  const std::string card_path = card.source_path.empty() ? "CARD" : card.source_path;
  const std::string a = plan->run_dir.empty() ? "runs/A" : plan->run_dir;
  plan->compare_command = "infereng compare " + a + " runs/B --card " + card_path + accepts;
  plan->rollout = {
      "predict: " + top.simulate_command + " (this plan ran it)",
      plan->run_dir.empty() ? "baseline A: infereng run " + card_path + " --out runs/A (or bench --card " + card_path +
                                  " --target URL --out runs/A against the real engine)"
                            : "baseline A: the measured run " + plan->run_dir,
      "B: change only " + top.candidate.variable + " (" + OverrideText(top.candidate.overrides) +
          ") and rerun the same card, seed and load into runs/B",
      "accept: " + plan->compare_command + " must exit 0",
      "canary: send ~5% of production traffic to B beside A; watch TTFT P99, ITL P99 and the error rate on the client, "
      "and the engine signals " + [&] {
        std::string w;
        for (const std::string& s : top.candidate.watch) w += (w.empty() ? "" : ", ") + s;
        return w;
      }() + " on both; roll back at the first criterion that fails",
      "promote in steps (25%, 50%, 100%), keeping A deployable until B has served a full peak period; then diagnose "
      "B's run: its top hypothesis is the next plan's",
  };
}

Result<Plan> BuildPlan(const card::WorkloadCard& card, const PlanOptions& options) {
  Plan plan;
  plan.card_name = card.name;
  plan.card_path = card.source_path;
  plan.gaps = card::FindGaps(card);

  std::optional<metrics::Summary> measured;
  if (!options.run_dir.empty()) {
    INFERENG_ASSIGN_OR_RETURN(metrics::Summary s, MeasuredBaseline(options.run_dir));
    measured = std::move(s);
    plan.run_dir = options.run_dir;
  }
  INFERENG_ASSIGN_OR_RETURN(catalog::Catalog cat, catalog::Catalog::Load());
  INFERENG_ASSIGN_OR_RETURN(twin::TwinSetup setup, twin::ResolveTwin(card, {}, cat));
  const twin::SimulationOptions sim = PlanSimulationOptions(card, options.max_duration_s);
  INFERENG_ASSIGN_OR_RETURN(twin::SimulationResult base, twin::RunSimulation(card, setup, sim));
  plan.twin_baseline = PredictionFrom(base);
  plan.twin_description = setup.description;
  plan.twin_cost_caveats = setup.cost_caveats;
  plan.load_description = twin::DescribeLoad(base.twin);
  plan.simulated_s = sim.duration_s.value_or(0);

  plan.baseline_source = measured ? "measured" : "twin";
  plan.baseline = measured ? FiguresFromSummary(*measured) : plan.twin_baseline;
  Goals(card, measured ? *measured : base.summary, plan, &plan.goals);

  if (measured) {
    Result<Diagnosis> d = Diagnose(options.run_dir);
    if (!d.ok()) return d.status().WithContext("--run " + options.run_dir);
    plan.hypotheses_source = "diagnose";
    plan.validity = d->validity;
    plan.client_shaped = d->client_shaped;
    plan.hypotheses = d->hypotheses;
    for (const std::string& n : d->notes) plan.notes.push_back("diagnose: " + n);
    if (plan.hypotheses.empty()) {
      plan.hypotheses = TwinHypotheses(card, base);
      plan.hypotheses_source = "twin";
      plan.notes.push_back("the measured run shows no symptom of diagnose's table: the hypotheses are the twin's");
    }
  } else {
    plan.hypotheses_source = "twin";
    plan.hypotheses = TwinHypotheses(card, base);
  }

  for (const Candidate& c : PlaybookCandidates(card, setup, base)) {
    INFERENG_ASSIGN_OR_RETURN(EvaluatedExperiment e,
                              EvaluateExperiment(card, c, sim, cat, plan.twin_baseline, plan.uncertainty));
    plan.experiments.push_back(std::move(e));
  }
  RankExperiments(plan.experiments);
  if (!plan.experiments.empty() && plan.experiments.front().predicted) {
    BuildAcceptance(card, plan.experiments.front(), &plan);
  } else {
    plan.notes.push_back("no experiment could be evaluated on the twin: no acceptance criteria");
  }
  return plan;
}

}  // namespace infereng::job
