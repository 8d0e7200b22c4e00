// ProfileFile: the on-disk form of a measured cost model (docs/profile.md has the schema):
// provenance (target, engine, model, date, infereng version), the raw measurements
// `infereng profile` took, the fitted step-time table the twin runs (measured_cost.h), the
// fit's quality, and — when `infereng calibrate` wrote it — fitted roofline parameters with
// their uncertainty and the `--set` lines that reproduce them.
//
// Loading checks every field the twin reads and names the file and the field on error
// ("p.json: table.tokens[2]: x must be greater than ..."), so a bad file is exit 2, never a
// crash or a silently wrong twin.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "twin/measured_cost.h"

namespace infereng::twin {

inline constexpr const char* kProfileSchema = "infereng.profile/1";

struct ProfileProvenance {
  std::string target{};          // URL profiled ("" for a calibration from runs)
  std::string engine{};          // what the target says it is (server header, /version)
  std::string model{};
  std::string date{};            // UTC, ISO 8601
  std::string infereng_version{};
};

// One measured point: a step shape the profile produced and the time it took.
struct ProfilePoint {
  // "front_end", "prefill", "decode_batch", "decode_context", "occupancy" (a step at a
  // held KV occupancy: the table.occupancy grid's points)
  std::string kind{};
  int64_t new_tokens = 0;        // tokens the measured step computed
  int64_t context_tokens = 0;    // context its attention read
  int32_t batch = 1;             // concurrent sequences
  double seconds = 0;            // measured (median over repeats)
  int32_t repeats = 0;
  int64_t kv_occupied_tokens = 0;  // KV cells held during the step (0: not recorded)
};

// A roofline parameter fitted by `calibrate`: value, one standard error, and whether the
// data identify it (a parameter the data do not move is reported, never invented).
struct FittedParam {
  std::string key{};             // the --set key, "cost.eff_bandwidth"
  double value = 0;
  double stderr_ = 0;
  bool identified = false;
  std::string note{};            // why not identified, or what identified it
};

struct ProfileFile {
  ProfileProvenance provenance;
  std::vector<ProfilePoint> points;
  MeasuredTable table;
  std::optional<int64_t> kv_capacity_tokens;  // from the engine's metrics/props when exposed
  double fit_rms_rel_error = 0;  // of the table against the points it was fitted to
  double fit_max_rel_error = 0;
  std::vector<FittedParam> calibrated;  // empty unless `calibrate` wrote it
  std::vector<std::string> notes;       // what was skipped or cut short, and why
};

nlohmann::json ProfileToJson(const ProfileFile& p);
// Parses and checks; errors name the field ("table.tokens[2]: ...").
Result<ProfileFile> ProfileFromJson(const nlohmann::json& j);
// Reads `path`; errors start with the path.
Result<ProfileFile> LoadProfile(const std::string& path);
Status SaveProfile(const ProfileFile& p, const std::string& path);

// The cost model the twin runs from a loaded profile.
std::shared_ptr<const CostModel> MakeMeasuredCost(const ProfileFile& p);

// The table's relative error on each point (predicted - measured) / measured, for the
// fit-quality figures (front-end points are priced with the front-end cost added).
std::vector<double> TableRelativeErrors(const MeasuredTable& t, const std::vector<ProfilePoint>& points);

}  // namespace infereng::twin
