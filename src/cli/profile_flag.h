// `--profile FILE` for the commands that run the twin (simulate, capacity, sweep, and run's
// prediction): the twin then prices steps with the profile's measured table
// (twin/measured_cost.h) instead of the roofline, says so in its description, and takes the
// profile's KV capacity when the target exposed one and its measured front end
// (cost.preprocess; a --set still wins).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "twin/cost_model.h"
#include "twin/profile_file.h"
#include "twin/setup.h"

namespace infereng::cli {

struct MeasuredProfile {
  std::shared_ptr<const twin::CostModel> cost;
  std::string label;  // "measured profile PATH", for the twin's description
};

// nullopt for an empty path. InvalidArgument "--profile: PATH: table.tokens[2]: ..." on a
// bad file. The profile's KV capacity goes first into `sets`, so the user's own --set wins.
Result<std::optional<MeasuredProfile>> LoadProfileFlag(const std::string& path, std::vector<std::string>* sets);

// The same for a profile already in memory (calibrate's, before it is written), labelled
// "measured profile LABEL".
MeasuredProfile ProfileForTwin(const twin::ProfileFile& p, const std::string& label, std::vector<std::string>* sets);

// The resolved twin prices steps with the profile (no-op for nullopt).
void ApplyProfile(const std::optional<MeasuredProfile>& p, twin::TwinSetup* setup);

}  // namespace infereng::cli
