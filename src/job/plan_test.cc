#include "job/plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "job/compare_accept.h"
#include "job/plan_report.h"
#include "metrics/summary_json.h"
#include "testing/paths.h"
#include "testing/sim_run_dir.h"
#include "twin/setup.h"
#include "twin/simulation.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kWindowS = 20;  // short simulated windows keep the tests cheap

card::WorkloadCard Example(const std::string& name) {
  auto c = card::LoadCardFile(testing::SourceDir() + "/examples/" + name);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

Plan MakePlan(const card::WorkloadCard& card, const std::string& run_dir = "") {
  Result<Plan> p = BuildPlan(card, {.run_dir = run_dir, .max_duration_s = kWindowS});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Plan{};
}

const EvaluatedExperiment* Find(const Plan& p, const std::string& id) {
  for (const EvaluatedExperiment& e : p.experiments) {
    if (e.candidate.id == id) return &e;
  }
  return nullptr;
}

bool IsNumber(const json& j) { return j.is_number() && std::isfinite(j.get<double>()); }

// Every example card: the five sections are there, each with numbers (JSON, not prose).
TEST(Plan, EveryExampleCardHasFiveSectionsWithNumbers) {
  for (const char* name : {"chat.yaml", "batch.yaml", "agent.yaml"}) {
    SCOPED_TRACE(name);
    const json j = PlanToJson(MakePlan(Example(name)));
    EXPECT_EQ(j["schema"], "infereng.plan/1");
    // 1. assumptions: each example marks guesses as assumed.
    ASSERT_FALSE(j["assumptions"]["gaps"].empty());
    EXPECT_TRUE(j["assumptions"]["gaps"][0]["path"].is_string());
    // 2. goals with targets and the baseline (the twin's: no --run).
    ASSERT_FALSE(j["goals"]["objectives"].empty());
    bool some_baseline = false;
    for (const json& g : j["goals"]["objectives"]) {
      EXPECT_TRUE(IsNumber(g["target"]));
      some_baseline |= IsNumber(g["baseline"]);
    }
    EXPECT_TRUE(some_baseline);
    EXPECT_EQ(j["goals"]["baseline"]["source"], "twin");
    EXPECT_GT(j["goals"]["baseline"]["figures"]["e2e_ms.p99"].get<double>(), 0);
    // 3. hypotheses with evidence figures and a proof.
    ASSERT_FALSE(j["hypotheses"]["items"].empty());
    const json& h = j["hypotheses"]["items"][0];
    ASSERT_FALSE(h["evidence"].empty());
    EXPECT_TRUE(IsNumber(h["evidence"][0]["value"]));
    EXPECT_FALSE(h["experiment"]["variable"].get<std::string>().empty());
    // 4. ranked experiments with predictions, and the ones not run, with reasons.
    int ranked = 0;
    bool disaggregation_listed = false;
    for (const json& e : j["experiments"]["items"]) {
      if (e.contains("predicted")) {
        ++ranked;
        EXPECT_EQ(e["rank"], ranked);
        EXPECT_TRUE(IsNumber(e["predicted"]["goodput_rps"]));
        EXPECT_TRUE(IsNumber(e["predicted"]["ttft_ms.p99"]));
        EXPECT_TRUE(IsNumber(e["predicted"]["itl_ms.p50"]));
        EXPECT_TRUE(IsNumber(e["predicted"]["band"]["e2e_ms.p99"][1]));
        EXPECT_TRUE(IsNumber(e["score"]));
        EXPECT_FALSE(e["variable"].get<std::string>().empty());
      } else {
        EXPECT_FALSE(e["skip_reason"].get<std::string>().empty()) << e.dump();
      }
      if (e["id"] == "disaggregation") {
        disaggregation_listed = true;
        // batch.yaml has 2 replicas to split into pools; chat and agent have 1.
        if (std::string(name) == "batch.yaml") {
          EXPECT_TRUE(e.contains("predicted")) << e.dump();
        } else {
          EXPECT_EQ(e["status"], "skipped");
          EXPECT_NE(e["skip_reason"].get<std::string>().find("at least 2 replicas"), std::string::npos);
        }
      }
    }
    EXPECT_GE(ranked, 4);
    EXPECT_TRUE(disaggregation_listed);
    EXPECT_DOUBLE_EQ(j["experiments"]["uncertainty"]["relative"].get<double>(), 0.194);
    // 5. acceptance: compare --accept expressions that compare parses, with numbers.
    int expressions = 0;
    for (const json& c : j["acceptance"]["criteria"]) {
      const std::string a = c["accept"];
      if (a.empty()) continue;
      ++expressions;
      EXPECT_TRUE(ParseAcceptExpr(a).ok()) << a;
    }
    EXPECT_GE(expressions, 2);
    EXPECT_GE(j["acceptance"]["rollout"].size(), 5u);
  }
}

// An experiment's predicted figures are the twin's for that one change: a direct
// simulation of the card with the same override and window gives the same numbers.
TEST(Plan, ExperimentFiguresEqualADirectSimulationWithTheSameOverride) {
  const card::WorkloadCard card = Example("chat.yaml");
  const Plan plan = MakePlan(card);
  auto cat = catalog::Catalog::Load();
  ASSERT_TRUE(cat.ok());
  twin::SimulationOptions o;
  o.duration_s = kWindowS;
  struct Direct {
    const char* id;
    std::function<void(card::WorkloadCard&, twin::SetupOptions&)> apply;
    bool moves_e2e;  // the change moves E2E P99 (a doubled max_num_seqs the load never fills does not)
  };
  const Direct cases[] = {
      {"batching.max_num_seqs", [](card::WorkloadCard&, twin::SetupOptions& so) { so.sets = {"engine.max_num_seqs=512"}; }, false},
      {"quantisation.weights", [](card::WorkloadCard& c, twin::SetupOptions&) { c.model.precision = "fp8"; }, true},
      {"hardware.a100-80gb", [](card::WorkloadCard& c, twin::SetupOptions&) { c.deployment.accelerator = "a100-80gb"; }, true},
  };
  for (const Direct& d : cases) {
    SCOPED_TRACE(d.id);
    const EvaluatedExperiment* e = Find(plan, d.id);
    ASSERT_NE(e, nullptr);
    ASSERT_TRUE(e->predicted.has_value()) << e->candidate.skip_reason;
    if (std::string(d.id) == "batching.max_num_seqs") {
      ASSERT_EQ(e->candidate.overrides.at(0).value, "512") << "chat at 20 rps does not preempt: max_num_seqs doubles";
    }
    card::WorkloadCard c = card;
    twin::SetupOptions so;
    d.apply(c, so);
    auto setup = twin::ResolveTwin(c, so, *cat);
    ASSERT_TRUE(setup.ok()) << setup.status().ToString();
    auto r = twin::RunSimulation(c, *setup, o);
    ASSERT_TRUE(r.ok());
    const Prediction& p = *e->predicted;
    EXPECT_DOUBLE_EQ(p.goodput_rps, r->summary.goodput_rps);
    EXPECT_DOUBLE_EQ(p.ttft_p99_ms, r->summary.ttft_ms.p99);
    EXPECT_DOUBLE_EQ(p.itl_p50_ms, r->summary.itl_ms.p50);
    EXPECT_DOUBLE_EQ(p.e2e_p99_ms, r->summary.e2e_ms.p99);
    ASSERT_TRUE(p.cost_per_1m_output_tokens_usd.has_value());
    EXPECT_DOUBLE_EQ(*p.cost_per_1m_output_tokens_usd, r->twin.cost_per_1m_output_tokens_usd);
    EXPECT_DOUBLE_EQ(*p.cost_per_successful_request_usd, r->twin.cost_per_successful_request_usd);
    // ... and differs from the baseline: the change was simulated, not copied.
    if (d.moves_e2e) {
      EXPECT_NE(p.e2e_p99_ms, plan.twin_baseline.e2e_p99_ms);
    }
  }
}

// Disaggregation keeps the card's replicas (same cost) and splits them into pools; its
// figures are the twin's for `--set cluster.prefill_replicas=P`, transfers included.
TEST(Plan, DisaggregationSplitsTheReplicasAndItsFiguresAreTheTwins) {
  card::WorkloadCard card = Example("batch.yaml");
  card.deployment.replicas = 4;
  const Plan plan = MakePlan(card);
  const EvaluatedExperiment* e = Find(plan, "disaggregation");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->predicted.has_value()) << e->candidate.skip_reason;
  ASSERT_EQ(e->candidate.overrides.size(), 1u);
  EXPECT_EQ(e->candidate.overrides[0].key, "cluster.prefill_replicas");
  const int prefill = std::stoi(e->candidate.overrides[0].value);
  EXPECT_GE(prefill, 1);
  EXPECT_LE(prefill, 3);
  EXPECT_NE(e->candidate.title.find("4 replicas -> " + std::to_string(prefill) + " prefill + " +
                                    std::to_string(4 - prefill) + " decode"),
            std::string::npos)
      << e->candidate.title;
  EXPECT_NE(e->candidate.risk_reason.find("GB/s per accelerator"), std::string::npos);
  auto cat = catalog::Catalog::Load();
  ASSERT_TRUE(cat.ok());
  twin::SetupOptions so;
  so.sets = {"cluster.prefill_replicas=" + std::to_string(prefill)};
  auto setup = twin::ResolveTwin(card, so, *cat);
  ASSERT_TRUE(setup.ok()) << setup.status().ToString();
  twin::SimulationOptions o;
  o.duration_s = kWindowS;
  auto r = twin::RunSimulation(card, *setup, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->twin.disaggregation.has_value());
  EXPECT_GT(r->twin.disaggregation->transfers, 0);
  EXPECT_DOUBLE_EQ(e->predicted->ttft_p99_ms, r->summary.ttft_ms.p99);
  EXPECT_DOUBLE_EQ(e->predicted->e2e_p99_ms, r->summary.e2e_ms.p99);
  EXPECT_NE(e->predicted->ttft_p99_ms, plan.twin_baseline.ttft_p99_ms);
}

TEST(Plan, DisaggregationIsSkippedForEmbeddings) {
  auto card = card::ParseCard(R"(name: emb-plan
product: {modality: embeddings}
traffic:
  arrival: 20rps
  batch_size: 8
  input_tokens: 256
slo:
  e2e: {p99: 500ms}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
  replicas: 2
bench: {duration: 10s, warmup: 0s, seed: 5}
)",
                              "emb-plan.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  const Plan plan = MakePlan(*card);
  const EvaluatedExperiment* e = Find(plan, "disaggregation");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->candidate.state, CandidateState::kSkipped);
  EXPECT_NE(e->candidate.skip_reason.find("prefill only"), std::string::npos) << e->candidate.skip_reason;
}

TEST(Plan, DisaggregationIsSkippedForRerankAndTheBaselineIsSimulated) {
  auto card = card::ParseCard(R"(name: rerank-plan
product: {modality: rerank}
traffic:
  arrival: 5rps
  input_tokens: 16
  documents: 8
  document_tokens: 200
slo:
  e2e: {p99: 500ms}
model:
  architecture: llama-3.1-8b
deployment:
  accelerator: h100-sxm
  replicas: 2
bench: {duration: 10s, warmup: 0s, seed: 5}
)",
                              "rerank-plan.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  const Plan plan = MakePlan(*card);
  const EvaluatedExperiment* e = Find(plan, "disaggregation");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->candidate.state, CandidateState::kSkipped);
  EXPECT_NE(e->candidate.skip_reason.find("rerank requests are prefill only"), std::string::npos)
      << e->candidate.skip_reason;
  EXPECT_GT(plan.twin_baseline.e2e_p99_ms, 0);  // the twin ran the card's pairs
}

TEST(Plan, ExperimentsTheCardMakesInapplicableAreSkippedWithTheReason) {
  auto card = card::ParseCard(R"(name: no-prefix
traffic:
  arrival: {process: poisson, rate: 2rps}
  input_tokens: 256
  output_tokens: 64
slo:
  ttft: {p99: 500ms}
model:
  architecture: llama-3.1-8b
  precision: int4
  kv_precision: fp8
deployment:
  accelerator: h100-sxm
bench:
  duration: 10s
)",
                              "no-prefix.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  const Plan plan = MakePlan(*card);
  for (const char* id : {"prefix_caching", "routing.prefix_affinity", "quantisation.weights", "quantisation.kv_cache", "hardware"}) {
    const EvaluatedExperiment* e = Find(plan, id);
    ASSERT_NE(e, nullptr) << id;
    EXPECT_EQ(e->candidate.state, CandidateState::kSkipped) << id;
    EXPECT_FALSE(e->predicted.has_value());
  }
  EXPECT_NE(Find(plan, "prefix_caching")->candidate.skip_reason.find("share no prefixes"), std::string::npos);
  EXPECT_NE(Find(plan, "quantisation.weights")->candidate.skip_reason.find("int4"), std::string::npos);
}

// The twin's known limits on the card's deployment (twin/cost_caveats.h) head the plan: its
// experiments are ranked by the same roofline.
TEST(Plan, TheBaselineCarriesTheTwinsCostCaveats) {
  card::WorkloadCard card = Example("chat.yaml");
  EXPECT_TRUE(MakePlan(card).twin_cost_caveats.empty()) << card.deployment.accelerator;
  card.deployment.accelerator = "l40s";
  const Plan plan = MakePlan(card);
  ASSERT_EQ(plan.twin_cost_caveats.size(), 1u);
  EXPECT_NE(plan.twin_cost_caveats[0].find("on l40s they are unchecked"), std::string::npos);
  EXPECT_EQ(PlanToJson(plan)["goals"]["twin"]["cost_caveats"].size(), 1u);
  EXPECT_NE(PlanSummaryText(plan).find("CAUTION: the roofline's efficiencies"), std::string::npos);
  EXPECT_NE(PlanToHtml(plan).find("Caution: the roofline&#39;s efficiencies"), std::string::npos);
}

TEST(Plan, BadRunDirectoryIsNamed) {
  const card::WorkloadCard card = Example("chat.yaml");
  Result<Plan> p = BuildPlan(card, {.run_dir = "/nonexistent/run-dir-xyz"});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Status::Code::kNotFound);
  EXPECT_NE(p.status().message().find("/nonexistent/run-dir-xyz"), std::string::npos) << p.status().ToString();
  const std::string empty = (fs::temp_directory_path() / ("plan-empty-" + std::to_string(getpid()))).string();
  fs::create_directories(empty);
  p = BuildPlan(card, {.run_dir = empty});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(empty), std::string::npos);
  EXPECT_NE(p.status().message().find("summary.json"), std::string::npos);
  fs::remove_all(empty);
}

TEST(Plan, MeasuredBaselineComesFromTheRunDirectory) {
  const std::string dir = (fs::temp_directory_path() / ("plan-run-" + std::to_string(getpid()))).string();
  fs::remove_all(dir);
  ASSERT_TRUE(testing::SimulateRunDir(dir, {}, 5).ok());
  auto summary = metrics::ReadSummaryFile(dir + "/summary.json");
  ASSERT_TRUE(summary.ok());
  const Plan plan = MakePlan(Example("chat.yaml"), dir);
  EXPECT_EQ(plan.baseline_source, "measured");
  EXPECT_EQ(plan.run_dir, dir);
  EXPECT_DOUBLE_EQ(plan.baseline.goodput_rps, summary->goodput_rps);
  EXPECT_DOUBLE_EQ(plan.baseline.ttft_p99_ms, summary->ttft_ms.p99);
  EXPECT_FALSE(plan.hypotheses.empty());
  EXPECT_FALSE(plan.validity.empty()) << "diagnose's validity checks come with a measured run";
  EXPECT_NE(plan.compare_command.find("compare " + dir + " runs/B"), std::string::npos) << plan.compare_command;
  fs::remove_all(dir);
}

EvaluatedExperiment Synthetic(const std::string& id, double score, bool within, bool predicted = true) {
  EvaluatedExperiment e;
  e.candidate.id = id;
  if (predicted) e.predicted = Prediction{};
  else e.candidate.state = CandidateState::kSkipped;
  e.score = score;
  e.within_uncertainty = within;
  return e;
}

TEST(Plan, RankingPutsChangesBeyondTheUncertaintyFirstThenByScore) {
  std::vector<EvaluatedExperiment> v = {Synthetic("skipped", 9, false, false), Synthetic("small", 5, true),
                                        Synthetic("b", 0.2, false), Synthetic("a", 0.8, false), Synthetic("worse", -0.5, false)};
  RankExperiments(v);
  std::vector<std::string> ids;
  for (const EvaluatedExperiment& e : v) ids.push_back(e.candidate.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "b", "worse", "small", "skipped"}));
}

// The headline bound is the predicted change at the far edge of the band: TTFT P99
// predicted -40% with +/-19.4% -> accept at most 0.6 x 1.194 - 1 = -28%.
TEST(Plan, AcceptanceBoundIsThePredictionAtTheEdgeOfTheBand) {
  auto card = card::ParseCard("name: x\nslo:\n  ttft: {p99: 500ms}\n", "x.yaml");
  ASSERT_TRUE(card.ok()) << card.status().ToString();
  Plan plan;
  plan.twin_baseline.ttft_p99_ms = 1000;
  plan.twin_baseline.goodput_rps = 10;
  EvaluatedExperiment top = Synthetic("batching.max_num_seqs", 1, false);
  top.predicted->ttft_p99_ms = 600;
  top.predicted->goodput_rps = 10;
  top.headline_key = "ttft_ms.p99";
  top.candidate.overrides = {{"engine.max_num_seqs", "512"}};
  BuildAcceptance(*card, top, &plan);
  std::vector<std::string> accepts;
  for (const AcceptCriterion& c : plan.acceptance) {
    if (!c.accept.empty()) accepts.push_back(c.accept);
  }
  EXPECT_NE(std::find(accepts.begin(), accepts.end(), "ttft_ms.p99<=-28%"), accepts.end()) << ::testing::PrintToString(accepts);
  EXPECT_NE(std::find(accepts.begin(), accepts.end(), "goodput_rps>=-19%"), accepts.end()) << ::testing::PrintToString(accepts);
  EXPECT_NE(plan.compare_command.find("--accept 'ttft_ms.p99<=-28%'"), std::string::npos);
}

TEST(Plan, HtmlEscapesCardText) {
  Plan plan;
  plan.card_name = "<script>alert(1)</script>";
  plan.gaps.push_back({card::Gap::Kind::kAssumed, "traffic.arrival.rate", 3, "a <b>guess</b>"});
  const std::string html = PlanToHtml(plan);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>guess"), std::string::npos);
}

}  // namespace
}  // namespace infereng::job
