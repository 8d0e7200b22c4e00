#include "cli/profile_flag.h"

#include <algorithm>

#include "core/units.h"
#include "twin/profile_file.h"

namespace infereng::cli {

Result<std::optional<MeasuredProfile>> LoadProfileFlag(const std::string& path, std::vector<std::string>* sets) {
  if (path.empty()) return std::optional<MeasuredProfile>();
  auto p = twin::LoadProfile(path);
  if (!p.ok()) return p.status().WithContext("--profile");
  return std::optional<MeasuredProfile>(ProfileForTwin(*p, path, sets));
}

MeasuredProfile ProfileForTwin(const twin::ProfileFile& p, const std::string& label, std::vector<std::string>* sets) {
  if (p.kv_capacity_tokens) sets->insert(sets->begin(), "engine.kv_cache_tokens=" + std::to_string(*p.kv_capacity_tokens));
  // The measured front end (HTTP, tokenising, the first chunk back: all at once) replaces
  // the card's and the default's; the user's own --set still wins. A front end measured as
  // 0 (a tiny prompt's TTFT no longer than its step) is a measurement too: the engine
  // default (vLLM's 30 + 5 ms) is kept only where the profile has no front-end point.
  const bool measured_front_end =
      std::any_of(p.points.begin(), p.points.end(), [](const twin::ProfilePoint& q) { return q.kind == "front_end"; });
  if (p.table.front_end_s > 0 || measured_front_end) {
    sets->insert(sets->begin(), {"cost.preprocess=" + units::FormatSignificant(p.table.front_end_s, 6) + "s", "cost.network=0s",
                                 "cost.postprocess=0s"});
  }
  return MeasuredProfile{twin::MakeMeasuredCost(p), "measured profile " + label};
}

void ApplyProfile(const std::optional<MeasuredProfile>& p, twin::TwinSetup* setup) {
  if (!p) return;
  setup->UseMeasuredCost(p->cost, p->label);
}

}  // namespace infereng::cli
