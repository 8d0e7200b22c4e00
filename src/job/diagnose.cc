#include "job/diagnose.h"

#include <fmt/format.h>

#include <algorithm>

#include "job/diagnose_facts.h"
#include "job/diagnose_rules.h"
#include "job/diagnose_validity.h"

namespace infereng::job {
namespace {

using nlohmann::json;

json EvidenceToJson(const std::vector<Evidence>& ev) {
  json a = json::array();
  for (const Evidence& e : ev) a.push_back({{"what", e.what}, {"value", e.value}, {"unit", e.unit}, {"source", e.source}});
  return a;
}

std::string Figure(const Evidence& e) {
  const std::string v = std::abs(e.value) >= 100 ? fmt::format("{:.0f}", e.value) : fmt::format("{:.3g}", e.value);
  if (e.unit.empty()) return v;
  if (e.unit == "%" || e.unit == "x") return v + e.unit;
  return v + " " + e.unit;
}

void EvidenceLines(const std::vector<Evidence>& ev, std::string& out) {
  for (const Evidence& e : ev) out += fmt::format("  - {}: **{}** ({})\n", e.what, Figure(e), e.source);
}

}  // namespace

Result<Diagnosis> Diagnose(const std::string& dir) {
  INFERENG_ASSIGN_OR_RETURN(RunFacts f, LoadRunFacts(dir));
  Diagnosis d;
  d.dir = dir;
  d.validity = CheckValidity(f);
  d.client_shaped = ClientShaped(d.validity);
  d.hypotheses = ApplySymptomRules(f);
  std::stable_sort(d.hypotheses.begin(), d.hypotheses.end(), [&](const Hypothesis& a, const Hypothesis& b) {
    if (d.client_shaped && (a.id == "client_bound") != (b.id == "client_bound")) return a.id == "client_bound";
    return a.score > b.score;
  });
  d.engine = f.engine;
  d.missing_signals = f.missing_signals;
  if (f.records_path.empty()) d.notes.push_back("no requests.jsonl: per-request relations (TTFT vs prompt, ITL spikes) not examined");
  if (f.engine_path.empty()) {
    d.notes.push_back("no engine_metrics.jsonl: the engine's own view (queue, KV, preemptions) is missing; run against a "
                      "target with /metrics, without --no-scrape");
  } else if (!f.missing_signals.empty()) {
    std::string m;
    for (const std::string& s : f.missing_signals) m += (m.empty() ? "" : ", ") + s;
    d.notes.push_back("engine \"" + f.engine + "\" does not export: " + m);
  }
  if (f.engine_scrape_errors > 0) {
    d.notes.push_back(fmt::format("{} periodic /metrics scrapes failed (gaps in the engine's series)", f.engine_scrape_errors));
  }
  if (d.hypotheses.empty()) d.notes.push_back("no symptom of the table is shown by this run");
  return d;
}

json DiagnosisToJson(const Diagnosis& d) {
  json j = {{"schema", "infereng.diagnose/1"}, {"dir", d.dir}, {"client_shaped", d.client_shaped}};
  json v = json::array();
  for (const ValidityCheck& c : d.validity) {
    v.push_back({{"id", c.id},
                 {"title", c.title},
                 {"status", CheckStatusName(c.status)},
                 {"detail", c.detail},
                 {"evidence", EvidenceToJson(c.evidence)}});
  }
  j["validity"] = v;
  json h = json::array();
  int rank = 0;
  for (const Hypothesis& x : d.hypotheses) {
    h.push_back({{"rank", ++rank},
                 {"id", x.id},
                 {"title", x.title},
                 {"seed_symptom", x.seed_symptom},
                 {"symptom", x.symptom},
                 {"score", x.score},
                 {"confidence", x.confidence},
                 {"evidence", EvidenceToJson(x.evidence)},
                 {"refuted_by", x.refute},
                 {"experiment",
                  {{"variable", x.experiment.variable},
                   {"change", x.experiment.change},
                   {"expect", x.experiment.expect},
                   {"twin_set", x.experiment.twin_set}}}});
  }
  j["hypotheses"] = h;
  j["engine"] = d.engine;
  j["missing_signals"] = d.missing_signals;
  j["notes"] = d.notes;
  return j;
}

std::string DiagnosisToMarkdown(const Diagnosis& d) {
  std::string out = "## Diagnosis\n\n### Validity of the measurement\n\n";
  if (d.client_shaped) out += "**The client shaped this result: read the numbers below as the client's, not the engine's.**\n\n";
  out += "| check | status | finding |\n|---|---|---|\n";
  for (const ValidityCheck& c : d.validity) {
    std::string figures;
    for (const Evidence& e : c.evidence) figures += fmt::format("; {} {}", e.what, Figure(e));
    out += fmt::format("| {} | {} | {}{} |\n", c.title, CheckStatusName(c.status), c.detail, figures);
  }
  out += "\n### Bottleneck hypotheses (ranked)\n\n";
  if (d.hypotheses.empty()) out += "None of the symptom table's patterns shows in this run.\n";
  int rank = 0;
  for (const Hypothesis& h : d.hypotheses) {
    out += fmt::format("{}. **{}** (confidence {}, score {:.2f})\n", ++rank, h.title, h.confidence, h.score);
    out += fmt::format("  - symptom: {} (seed: \"{}\")\n", h.symptom, h.seed_symptom);
    out += "  - evidence:\n";
    std::string ev;
    EvidenceLines(h.evidence, ev);
    for (size_t p = 0; p < ev.size();) {  // indent one more level
      const size_t e = ev.find('\n', p);
      out += "  " + ev.substr(p, e - p + 1);
      p = e + 1;
    }
    out += fmt::format("  - refuted if: {}\n", h.refute);
    out += fmt::format("  - experiment (one variable: {}): {}; confirmed if {}\n", h.experiment.variable,
                       h.experiment.change, h.experiment.expect);
    if (!h.experiment.twin_set.empty()) {
      out += fmt::format("  - twin: `infereng simulate CARD --set {}=...` predicts the effect before you run it\n",
                         h.experiment.twin_set);
    }
  }
  if (!d.notes.empty()) {
    out += "\n";
    for (const std::string& n : d.notes) out += "- note: " + n + "\n";
  }
  return out;
}

}  // namespace infereng::job
