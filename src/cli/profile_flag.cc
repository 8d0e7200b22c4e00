#include "cli/profile_flag.h"

#include "twin/profile_file.h"

namespace infereng::cli {

Result<std::optional<MeasuredProfile>> LoadProfileFlag(const std::string& path, std::vector<std::string>* sets) {
  if (path.empty()) return std::optional<MeasuredProfile>();
  auto p = twin::LoadProfile(path);
  if (!p.ok()) return p.status().WithContext("--profile");
  if (p->kv_capacity_tokens) sets->insert(sets->begin(), "engine.kv_cache_tokens=" + std::to_string(*p->kv_capacity_tokens));
  return std::optional<MeasuredProfile>(MeasuredProfile{twin::MakeMeasuredCost(*p), "measured profile " + path});
}

void ApplyProfile(const std::optional<MeasuredProfile>& p, twin::TwinSetup* setup) {
  if (!p) return;
  setup->cost = p->cost;
  setup->description += ", " + p->label;
}

}  // namespace infereng::cli
