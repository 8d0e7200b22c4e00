// The symptom table of the seed (../shared/docs/seed.ko.txt, "Metrics and diagnostics":
// 증상 → 측정해야 할 가능한 영역, and issue 12's reading of it) as data: one row per
// bottleneck hypothesis, with the seed's wording it comes from, the test over a run's facts
// that scores it (0: not shown), what would refute it and the one-variable experiment that
// proves it. Adding a hypothesis is one row in kSymptomRules (diagnose_rules.cc).
#pragma once

#include <string_view>
#include <vector>

#include "job/diagnose_evidence.h"
#include "job/diagnose_facts.h"

namespace infereng::job {

struct SymptomRule {
  std::string_view id;
  std::string_view title;
  std::string_view seed_symptom;  // seed.ko.txt's wording
  std::string_view symptom;       // English
  std::string_view refute;
  std::string_view variable, change, expect, twin_set;
  // 0..1, appending the figures it used to `ev`; 0 when the run does not show the symptom.
  double (*score)(const RunFacts& f, std::vector<Evidence>* ev);
};

const std::vector<SymptomRule>& SymptomRules();

// Every rule applied to `f`: the hypotheses scoring above 0, unranked.
std::vector<Hypothesis> ApplySymptomRules(const RunFacts& f);

}  // namespace infereng::job
