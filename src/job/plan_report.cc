// The plan's five sections are laid out once (Sections: paragraphs, tables, lists) and
// rendered twice, as Markdown and as HTML, so the two never disagree.
#include "job/plan_report.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "report/escape.h"
#include "report/html_page.h"

namespace infereng::job {
namespace {

using nlohmann::json;

struct Block {
  enum class Kind { kPara, kTable, kList, kCode } kind = Kind::kPara;
  std::string text{};
  std::vector<std::string> header{};
  std::vector<std::vector<std::string>> rows{};
  std::vector<std::string> items{};
};

struct Section {
  std::string id{}, heading{}, intro{};
  std::vector<Block> blocks{};
};

Block Para(std::string t) { return {Block::Kind::kPara, std::move(t)}; }
Block List(std::vector<std::string> items) { return {Block::Kind::kList, "", {}, {}, std::move(items)}; }
Block Table(std::vector<std::string> h, std::vector<std::vector<std::string>> rows) {
  return {Block::Kind::kTable, "", std::move(h), std::move(rows)};
}

std::string Num(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::abs(v) >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}
std::string Money(const std::optional<double>& v) {
  if (!v) return "n/a";
  return *v >= 0.01 ? fmt::format("${:.2f}", *v) : fmt::format("${:.2g}", *v);
}
std::string Signed(double fraction) { return fmt::format("{:+.1f}%", fraction * 100); }
double Rel(double b, double e) { return b != 0 ? e / b - 1 : 0; }

std::string Figure(const Evidence& e) {
  if (e.unit.empty()) return Num(e.value);
  if (e.unit == "%" || e.unit == "x") return Num(e.value) + e.unit;
  return Num(e.value) + " " + e.unit;
}

std::vector<std::string> PredictionRow(const std::string& name, const Prediction& p) {
  return {name,
          Num(p.goodput_rps),
          Num(p.ttft_p50_ms) + " / " + Num(p.ttft_p99_ms),
          Num(p.itl_p50_ms) + " / " + Num(p.itl_p99_ms),
          Num(p.e2e_p50_ms) + " / " + Num(p.e2e_p99_ms),
          Money(p.cost_per_1m_output_tokens_usd),
          Money(p.cost_per_successful_request_usd)};
}

Section Assumptions(const Plan& p) {
  Section s{"assumptions", "1. Workload assumptions and missing measurements",
            fmt::format("From `infereng card check`: {} assumed or missing field(s). Each is a number the plan below rests on.",
                        p.gaps.size())};
  std::vector<std::vector<std::string>> rows;
  for (const card::Gap& g : p.gaps) {
    rows.push_back({g.kind == card::Gap::Kind::kAssumed ? "assumed" : "missing", g.path,
                    g.line > 0 ? std::to_string(g.line) : "", g.why});
  }
  if (rows.empty()) s.blocks.push_back(Para("None: every workload fact the card should state is given and measured."));
  else s.blocks.push_back(Table({"kind", "field", "line", "why it matters"}, rows));
  return s;
}

Section Goals(const Plan& p) {
  const std::string which = p.baseline_source == "measured"
                                ? "Baseline: MEASURED (" + p.run_dir + "/summary.json)."
                                : "Baseline: the TWIN's prediction for the card (no --run given), not a measurement.";
  Section s{"goals", "2. Goals and baseline", which};
  std::vector<std::vector<std::string>> rows;
  for (const PlanGoal& g : p.goals) {
    const std::string target = (g.at_most ? "<= " : ">= ") + (g.unit == "$" ? "$" + Num(g.target) : Num(g.target) + " " + g.unit);
    const std::string base = g.baseline ? (g.unit == "$" ? Money(g.baseline) : Num(*g.baseline) + " " + g.unit) : "n/a";
    rows.push_back({g.category, g.what, target, base, g.pass ? (*g.pass ? "pass" : "MISS") : "-", g.note});
  }
  s.blocks.push_back(Table({"category", "goal", "target", "baseline", "", "source"}, rows));
  std::vector<std::vector<std::string>> figures = {PredictionRow("baseline (" + p.baseline_source + ")", p.baseline)};
  if (p.baseline_source == "measured") figures.push_back(PredictionRow("twin prediction", p.twin_baseline));
  s.blocks.push_back(Table({"", "goodput req/s", "TTFT P50 / P99 ms", "ITL P50 / P99 ms", "E2E P50 / P99 ms",
                            "$ / 1M out tok", "$ / ok request"},
                           figures));
  s.blocks.push_back(Para(fmt::format("Twin: {}, {}, {:g} s simulated; utilisation {}, KV peak {}%, {} preemptions.",
                                      p.twin_description, p.load_description, p.simulated_s,
                                      Num(p.twin_baseline.utilisation), Num(p.twin_baseline.kv_usage_peak * 100),
                                      p.twin_baseline.preemptions)));
  return s;
}

Section Hypotheses(const Plan& p) {
  Section s{"hypotheses", "3. Bottleneck hypotheses and how to prove them",
            p.hypotheses_source == "diagnose" ? "From `infereng diagnose " + p.run_dir + "` (the measured run), ranked."
                                              : "From the twin's prediction (no measured run): confirm each with a run."};
  if (p.client_shaped) s.blocks.push_back(Para("The client shaped the measured run: its numbers are the client's, not the engine's."));
  int rank = 0;
  for (const Hypothesis& h : p.hypotheses) {
    std::vector<std::string> items;
    for (const Evidence& e : h.evidence) items.push_back(e.what + ": " + Figure(e) + " (" + e.source + ")");
    items.push_back("refuted if: " + h.refute);
    items.push_back("proof (one variable: " + h.experiment.variable + "): " + h.experiment.change + "; confirmed if " +
                    h.experiment.expect);
    s.blocks.push_back(Para(fmt::format("{}. {} (confidence {}, score {:.2f}): {}", ++rank, h.title, h.confidence, h.score,
                                        h.symptom)));
    s.blocks.push_back(List(items));
  }
  return s;
}

Section Experiments(const Plan& p) {
  Section s{"experiments", "4. Ranked experiments (evaluated on the twin)",
            fmt::format("Each changes one variable and was simulated with the baseline's load, seed and window. "
                        "Uncertainty: +/-{:.0f}% on every predicted figure ({}). Ranked by score = (change in good "
                        "requests per dollar + half the change in the worst objective's headroom) x risk factor "
                        "(low 1, medium 0.75, high 0.5); changes within the uncertainty rank after the rest.",
                        p.uncertainty.relative * 100, p.uncertainty.source)};
  std::vector<std::vector<std::string>> rows;
  int rank = 0;
  for (const EvaluatedExperiment& e : p.experiments) {
    if (!e.predicted) continue;
    const Prediction& x = *e.predicted;
    rows.push_back({std::to_string(++rank), e.candidate.title, e.candidate.variable, Num(x.goodput_rps),
                    Num(x.ttft_p50_ms) + " / " + Num(x.ttft_p99_ms) + " (" + Signed(Rel(p.twin_baseline.ttft_p99_ms, x.ttft_p99_ms)) + ")",
                    Num(x.itl_p50_ms) + " / " + Num(x.itl_p99_ms) + " (" + Signed(Rel(p.twin_baseline.itl_p99_ms, x.itl_p99_ms)) + ")",
                    Num(x.e2e_p50_ms) + " / " + Num(x.e2e_p99_ms), Money(x.cost_per_1m_output_tokens_usd),
                    Money(x.cost_per_successful_request_usd), e.candidate.risk, fmt::format("{:.3f}", e.score),
                    e.within_uncertainty ? "within uncertainty" : e.headline + " " + Signed(e.headline_change)});
  }
  s.blocks.push_back(Table({"#", "experiment", "one variable", "goodput", "TTFT P50 / P99 ms (P99 vs base)",
                            "ITL P50 / P99 ms (P99 vs base)", "E2E P50 / P99 ms", "$ / 1M out tok", "$ / ok request",
                            "risk", "score", "headline"},
                           rows));
  std::vector<std::string> details, skipped;
  for (const EvaluatedExperiment& e : p.experiments) {
    if (e.predicted) {
      std::string d = e.candidate.title + ": reproduce with `" + e.simulate_command + "`; risk " + e.candidate.risk + " (" +
                      e.candidate.risk_reason + ")";
      if (!e.candidate.quality_eval.empty()) d += "; quality: " + e.candidate.quality_eval;
      details.push_back(d);
    } else {
      skipped.push_back(e.candidate.title + " [" + CandidateStateName(e.candidate.state) + "]: " + e.candidate.skip_reason);
    }
  }
  s.blocks.push_back(List(details));
  if (!skipped.empty()) {
    s.blocks.push_back(Para("Not run on the twin:"));
    s.blocks.push_back(List(skipped));
  }
  return s;
}

Section Acceptance(const Plan& p) {
  Section s{"acceptance", "5. Acceptance criteria and rollout",
            p.accepted_experiment.empty() ? "No experiment was evaluated." : "For the top experiment (" + p.accepted_experiment + ")."};
  std::vector<std::vector<std::string>> rows;
  for (const AcceptCriterion& c : p.acceptance) rows.push_back({c.category, c.text, c.accept.empty() ? "-" : c.accept});
  if (!rows.empty()) s.blocks.push_back(Table({"category", "criterion", "compare --accept"}, rows));
  if (!p.compare_command.empty()) s.blocks.push_back({Block::Kind::kCode, p.compare_command});
  std::vector<std::string> steps;
  for (std::size_t i = 0; i < p.rollout.size(); ++i) steps.push_back(std::to_string(i + 1) + ". " + p.rollout[i]);
  if (!steps.empty()) s.blocks.push_back(List(steps));
  for (const std::string& n : p.notes) s.blocks.push_back(Para("note: " + n));
  return s;
}

std::vector<Section> Sections(const Plan& p) { return {Assumptions(p), Goals(p), Hypotheses(p), Experiments(p), Acceptance(p)}; }

json EvidenceJson(const std::vector<Evidence>& ev) {
  json a = json::array();
  for (const Evidence& e : ev) a.push_back({{"what", e.what}, {"value", e.value}, {"unit", e.unit}, {"source", e.source}});
  return a;
}

json OptJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json PlanToJson(const Plan& p) {
  json gaps = json::array();
  for (const card::Gap& g : p.gaps) {
    gaps.push_back({{"kind", g.kind == card::Gap::Kind::kAssumed ? "assumed" : "missing"}, {"path", g.path}, {"line", g.line}, {"why", g.why}});
  }
  json goals = json::array();
  for (const PlanGoal& g : p.goals) {
    goals.push_back({{"category", g.category}, {"what", g.what}, {"target", g.target}, {"unit", g.unit}, {"at_most", g.at_most},
                     {"baseline", OptJson(g.baseline)}, {"pass", g.pass ? json(*g.pass) : json(nullptr)}, {"note", g.note}});
  }
  json hyps = json::array();
  int rank = 0;
  for (const Hypothesis& h : p.hypotheses) {
    hyps.push_back({{"rank", ++rank}, {"id", h.id}, {"title", h.title}, {"symptom", h.symptom}, {"score", h.score},
                    {"confidence", h.confidence}, {"evidence", EvidenceJson(h.evidence)}, {"refuted_by", h.refute},
                    {"experiment", {{"variable", h.experiment.variable}, {"change", h.experiment.change},
                                    {"expect", h.experiment.expect}, {"twin_set", h.experiment.twin_set}}}});
  }
  json validity = json::array();
  for (const ValidityCheck& c : p.validity) {
    validity.push_back({{"id", c.id}, {"status", CheckStatusName(c.status)}, {"detail", c.detail}, {"evidence", EvidenceJson(c.evidence)}});
  }
  json exps = json::array();
  rank = 0;
  for (const EvaluatedExperiment& e : p.experiments) {
    json j = ExperimentToJson(e, p.twin_baseline, p.uncertainty);
    j["rank"] = e.predicted ? json(++rank) : json(nullptr);
    exps.push_back(std::move(j));
  }
  json accept = json::array();
  for (const AcceptCriterion& c : p.acceptance) accept.push_back({{"category", c.category}, {"text", c.text}, {"accept", c.accept}});
  return {{"schema", "infereng.plan/1"},
          {"card", {{"name", p.card_name}, {"path", p.card_path}}},
          {"assumptions", {{"gaps", gaps}}},
          {"goals",
           {{"objectives", goals},
            {"baseline", {{"source", p.baseline_source}, {"run_dir", p.run_dir}, {"figures", PredictionToJson(p.baseline, p.uncertainty)}}},
            {"twin", {{"description", p.twin_description}, {"cost_caveats", p.twin_cost_caveats},
                      {"load", p.load_description}, {"simulated_s", p.simulated_s},
                      {"figures", PredictionToJson(p.twin_baseline, p.uncertainty)}}}}},
          {"hypotheses", {{"source", p.hypotheses_source}, {"client_shaped", p.client_shaped}, {"validity", validity}, {"items", hyps}}},
          {"experiments",
           {{"uncertainty", {{"relative", p.uncertainty.relative}, {"source", p.uncertainty.source}}},
            {"ranking", "score = (relative change in goodput per $/h, or goodput without a price) + 0.5 x (relative change "
                        "of the worst objective's headroom, value/target floored at 0.5), times risk factor low 1 / medium 0.75 / high 0.5; changes "
                        "within the uncertainty rank after the rest (docs/plan.md)"},
            {"items", exps}}},
          {"acceptance",
           {{"experiment", p.accepted_experiment}, {"criteria", accept}, {"compare_command", p.compare_command},
            {"rollout", p.rollout}}},
          {"notes", p.notes}};
}

std::string PlanToMarkdown(const Plan& p) {
  std::string md = "# Plan: " + report::MarkdownCell(p.card_name) + "\n\n";
  for (const Section& s : Sections(p)) {
    md += "## " + s.heading + "\n\n" + report::MarkdownCell(s.intro) + "\n\n";
    for (const Block& b : s.blocks) {
      switch (b.kind) {
        case Block::Kind::kPara: md += report::MarkdownCell(b.text) + "\n\n"; break;
        case Block::Kind::kCode: md += "```\n" + b.text + "\n```\n\n"; break;
        case Block::Kind::kList:
          for (const std::string& i : b.items) md += "- " + report::MarkdownCell(i) + "\n";
          md += "\n";
          break;
        case Block::Kind::kTable: {
          md += "|";
          for (const std::string& h : b.header) md += " " + report::MarkdownCell(h) + " |";
          md += "\n|";
          for (std::size_t i = 0; i < b.header.size(); ++i) md += "---|";
          md += "\n";
          for (const auto& row : b.rows) {
            md += "|";
            for (const std::string& c : row) md += " " + report::MarkdownCell(c) + " |";
            md += "\n";
          }
          md += "\n";
          break;
        }
      }
    }
  }
  return md;
}

std::string PlanToHtml(const Plan& p) {
  report::HtmlPage page("infereng plan: " + p.card_name);
  page.Header("Plan: " + p.card_name, {p.card_path, "baseline: " + p.baseline_source, p.twin_description});
  for (const std::string& c : p.twin_cost_caveats) page.Notice("Caution: " + c);
  if (p.client_shaped) page.Notice("The client shaped the measured run: its numbers are the client's, not the engine's.");
  for (const Section& s : Sections(p)) {
    page.BeginSection(s.id, s.heading, s.intro);
    for (const Block& b : s.blocks) {
      switch (b.kind) {
        case Block::Kind::kPara: page.Paragraph(b.text); break;
        case Block::Kind::kCode: page.Pre(b.text); break;
        case Block::Kind::kTable: page.Table(b.header, b.rows); break;
        case Block::Kind::kList: {
          std::string ul = "<ul>";
          for (const std::string& i : b.items) ul += "<li>" + report::EscapeXml(i) + "</li>";
          page.AddRaw(ul + "</ul>\n");
          break;
        }
      }
    }
    page.EndSection();
  }
  return page.Finish();
}

std::string PlanSummaryText(const Plan& p) {
  std::string out = fmt::format("plan for {} ({}; baseline: {})\n", p.card_name, p.twin_description,
                                p.baseline_source == "measured" ? "measured " + p.run_dir : "twin prediction");
  for (const std::string& c : p.twin_cost_caveats) out += "  CAUTION: " + c + "\n";
  const Prediction& b = p.baseline;
  out += fmt::format("  baseline: goodput {} req/s, TTFT P99 {} ms, ITL P99 {} ms, E2E P99 {} ms{}\n", Num(b.goodput_rps),
                     Num(b.ttft_p99_ms), Num(b.itl_p99_ms), Num(b.e2e_p99_ms),
                     b.worst_slo.empty() ? "" : fmt::format(", worst objective {} at {}x its target", b.worst_slo, Num(b.worst_slo_ratio)));
  if (!p.hypotheses.empty()) {
    out += fmt::format("  top hypothesis ({}): {}\n", p.hypotheses_source, p.hypotheses.front().title);
  }
  int shown = 0;
  for (const EvaluatedExperiment& e : p.experiments) {
    if (!e.predicted || shown == 3) continue;
    out += fmt::format("  {}. {}: {} {} (score {:.3f}{})\n", ++shown, e.candidate.title, e.headline, Signed(e.headline_change),
                       e.score, e.within_uncertainty ? ", within the twin's uncertainty" : "");
  }
  if (!p.compare_command.empty()) out += "  accept with: " + p.compare_command + "\n";
  return out;
}

Status WritePlanFiles(const Plan& p, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(dir + ": cannot create: " + ec.message());
  const std::pair<const char*, std::string> files[] = {
      {"plan.json", PlanToJson(p).dump(2) + "\n"}, {"plan.md", PlanToMarkdown(p)}, {"plan.html", PlanToHtml(p)}};
  for (const auto& [name, text] : files) {
    const std::string path = dir + "/" + name;
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f.good()) return Status::IoError(path + ": cannot write");
  }
  return Status::Ok();
}

}  // namespace infereng::job
