#include "twin/profile_file.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace infereng::twin {

namespace {

using nlohmann::json;

json CurveJson(const PiecewiseLinear& c) {
  json a = json::array();
  for (std::size_t i = 0; i < c.x.size(); ++i) a.push_back({c.x[i], c.y[i]});
  return a;
}

Result<PiecewiseLinear> CurveFromJson(const json& j, const std::string& field) {
  if (!j.is_array() || j.empty()) return Status::InvalidArgument(field + ": expected a non-empty array of [x, seconds]");
  PiecewiseLinear c;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& p = j[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) {
      return Status::InvalidArgument(field + "[" + std::to_string(i) + "]: expected [x, seconds] (two numbers)");
    }
    c.x.push_back(p[0].get<double>());
    c.y.push_back(p[1].get<double>());
  }
  INFERENG_RETURN_IF_ERROR(c.Validate(field));
  return c;
}

json OccupancyJson(const OccupancyTable& o) {
  return {{"batch_tokens", o.batch_tokens}, {"kv_occupied", o.kv_occupied}, {"seconds", o.seconds}};
}

Result<std::vector<double>> Numbers(const json& j, const std::string& field) {
  if (!j.is_array()) return Status::InvalidArgument(field + ": expected an array of numbers");
  std::vector<double> v;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_number()) return Status::InvalidArgument(field + "[" + std::to_string(i) + "]: expected a number");
    v.push_back(j[i].get<double>());
  }
  return v;
}

Result<OccupancyTable> OccupancyFromJson(const json& j, const std::string& field) {
  if (!j.is_object()) return Status::InvalidArgument(field + ": expected an object {batch_tokens, kv_occupied, seconds}");
  for (const char* key : {"batch_tokens", "kv_occupied", "seconds"}) {
    if (!j.contains(key)) return Status::InvalidArgument(field + "." + key + ": missing");
  }
  OccupancyTable o;
  INFERENG_ASSIGN_OR_RETURN(o.batch_tokens, Numbers(j["batch_tokens"], field + ".batch_tokens"));
  INFERENG_ASSIGN_OR_RETURN(o.kv_occupied, Numbers(j["kv_occupied"], field + ".kv_occupied"));
  const json& rows = j["seconds"];
  if (!rows.is_array()) return Status::InvalidArgument(field + ".seconds: expected an array of rows (one per kv_occupied value)");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    INFERENG_ASSIGN_OR_RETURN(std::vector<double> row, Numbers(rows[i], field + ".seconds[" + std::to_string(i) + "]"));
    o.seconds.push_back(std::move(row));
  }
  INFERENG_RETURN_IF_ERROR(o.Validate(field));
  return o;
}

// A string member, "" when absent; InvalidArgument when present and not a string.
Result<std::string> OptString(const json& j, const char* key, const std::string& field) {
  if (!j.contains(key) || j[key].is_null()) return std::string();
  if (!j[key].is_string()) return Status::InvalidArgument(field + "." + key + ": expected a string");
  return j[key].get<std::string>();
}

Result<double> Number(const json& j, const char* key, const std::string& field, bool required, double fallback = 0) {
  if (!j.contains(key) || j[key].is_null()) {
    if (required) return Status::InvalidArgument(field + "." + key + ": missing (a number)");
    return fallback;
  }
  if (!j[key].is_number()) return Status::InvalidArgument(field + "." + key + ": expected a number");
  const double v = j[key].get<double>();
  if (!std::isfinite(v)) return Status::InvalidArgument(field + "." + key + ": not a finite number");
  return v;
}

Result<ProfilePoint> PointFromJson(const json& j, const std::string& field) {
  if (!j.is_object()) return Status::InvalidArgument(field + ": expected an object");
  ProfilePoint p;
  INFERENG_ASSIGN_OR_RETURN(p.kind, OptString(j, "kind", field));
  if (p.kind != "front_end" && p.kind != "prefill" && p.kind != "decode_batch" && p.kind != "decode_context" &&
      p.kind != "occupancy") {
    return Status::InvalidArgument(field +
                                   ".kind: expected front_end, prefill, decode_batch, decode_context or occupancy, got \"" +
                                   p.kind + "\"");
  }
  double v = 0;
  INFERENG_ASSIGN_OR_RETURN(v, Number(j, "new_tokens", field, true));
  p.new_tokens = static_cast<int64_t>(v);
  INFERENG_ASSIGN_OR_RETURN(v, Number(j, "context_tokens", field, false));
  p.context_tokens = static_cast<int64_t>(v);
  INFERENG_ASSIGN_OR_RETURN(v, Number(j, "batch", field, false, 1));
  p.batch = static_cast<int32_t>(v);
  INFERENG_ASSIGN_OR_RETURN(p.seconds, Number(j, "seconds", field, true));
  INFERENG_ASSIGN_OR_RETURN(v, Number(j, "repeats", field, false));
  p.repeats = static_cast<int32_t>(v);
  INFERENG_ASSIGN_OR_RETURN(v, Number(j, "kv_occupied_tokens", field, false));
  p.kv_occupied_tokens = static_cast<int64_t>(v);
  if (p.new_tokens < 0 || p.context_tokens < 0 || p.kv_occupied_tokens < 0 || p.seconds < 0) {
    return Status::InvalidArgument(field + ": new_tokens, context_tokens, kv_occupied_tokens and seconds must be >= 0");
  }
  return p;
}

}  // namespace

nlohmann::json ProfileToJson(const ProfileFile& p) {
  json points = json::array();
  for (const ProfilePoint& q : p.points) {
    json point = {{"kind", q.kind}, {"new_tokens", q.new_tokens}, {"context_tokens", q.context_tokens},
                  {"batch", q.batch}, {"seconds", q.seconds}, {"repeats", q.repeats}};
    if (q.kv_occupied_tokens > 0) point["kv_occupied_tokens"] = q.kv_occupied_tokens;
    points.push_back(std::move(point));
  }
  json cal = json::array();
  for (const FittedParam& f : p.calibrated) {
    cal.push_back({{"key", f.key}, {"value", f.value}, {"stderr", f.stderr_}, {"identified", f.identified},
                   {"note", f.note}});
  }
  json sets = json::array();
  for (const FittedParam& f : p.calibrated) {
    if (f.identified) {
      std::ostringstream os;
      os << f.key << "=" << f.value;
      sets.push_back(os.str());
    }
  }
  json table = {{"tokens", CurveJson(p.table.tokens)},
                {"context", CurveJson(p.table.context)},
                {"front_end_s", p.table.front_end_s}};
  if (!p.table.occupancy.empty()) table["occupancy"] = OccupancyJson(p.table.occupancy);
  return {{"schema", kProfileSchema},
          {"provenance",
           {{"target", p.provenance.target},
            {"engine", p.provenance.engine},
            {"model", p.provenance.model},
            {"date", p.provenance.date},
            {"infereng_version", p.provenance.infereng_version}}},
          {"measurements", points},
          {"kv_capacity_tokens", p.kv_capacity_tokens ? json(*p.kv_capacity_tokens) : json(nullptr)},
          {"table", table},
          {"fit", {{"rms_rel_error", p.fit_rms_rel_error}, {"max_rel_error", p.fit_max_rel_error}, {"points", p.points.size()}}},
          {"calibrated", cal},
          {"sets", sets},
          {"notes", p.notes}};
}

Result<ProfileFile> ProfileFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("expected a JSON object (an infereng profile)");
  ProfileFile p;
  std::string schema;
  INFERENG_ASSIGN_OR_RETURN(schema, OptString(j, "schema", "profile"));
  if (schema != kProfileSchema) {
    return Status::InvalidArgument("schema: expected \"" + std::string(kProfileSchema) + "\", got \"" + schema + "\"");
  }
  if (j.contains("provenance")) {
    const json& v = j["provenance"];
    if (!v.is_object()) return Status::InvalidArgument("provenance: expected an object");
    INFERENG_ASSIGN_OR_RETURN(p.provenance.target, OptString(v, "target", "provenance"));
    INFERENG_ASSIGN_OR_RETURN(p.provenance.engine, OptString(v, "engine", "provenance"));
    INFERENG_ASSIGN_OR_RETURN(p.provenance.model, OptString(v, "model", "provenance"));
    INFERENG_ASSIGN_OR_RETURN(p.provenance.date, OptString(v, "date", "provenance"));
    INFERENG_ASSIGN_OR_RETURN(p.provenance.infereng_version, OptString(v, "infereng_version", "provenance"));
  }
  if (j.contains("measurements")) {
    if (!j["measurements"].is_array()) return Status::InvalidArgument("measurements: expected an array");
    for (std::size_t i = 0; i < j["measurements"].size(); ++i) {
      INFERENG_ASSIGN_OR_RETURN(ProfilePoint q, PointFromJson(j["measurements"][i], "measurements[" + std::to_string(i) + "]"));
      p.points.push_back(q);
    }
  }
  if (!j.contains("table") || !j["table"].is_object()) return Status::InvalidArgument("table: missing (an object)");
  const json& t = j["table"];
  if (t.contains("occupancy")) {
    INFERENG_ASSIGN_OR_RETURN(p.table.occupancy, OccupancyFromJson(t["occupancy"], "table.occupancy"));
  }
  if (t.contains("tokens")) {
    INFERENG_ASSIGN_OR_RETURN(p.table.tokens, CurveFromJson(t["tokens"], "table.tokens"));
  } else if (p.table.occupancy.empty()) {
    return Status::InvalidArgument("table.tokens: missing (needed unless table.occupancy prices the steps)");
  } else {
    p.table.tokens = {{0}, {0}};
  }
  if (t.contains("context")) {
    INFERENG_ASSIGN_OR_RETURN(p.table.context, CurveFromJson(t["context"], "table.context"));
  } else {
    p.table.context = {{0}, {0}};
  }
  INFERENG_ASSIGN_OR_RETURN(p.table.front_end_s, Number(t, "front_end_s", "table", false));
  if (p.table.front_end_s < 0) return Status::InvalidArgument("table.front_end_s: must be >= 0");
  if (j.contains("kv_capacity_tokens") && !j["kv_capacity_tokens"].is_null()) {
    double kv = 0;
    INFERENG_ASSIGN_OR_RETURN(kv, Number(j, "kv_capacity_tokens", "profile", true));
    if (kv < 1) return Status::InvalidArgument("kv_capacity_tokens: must be >= 1 (or null)");
    p.kv_capacity_tokens = static_cast<int64_t>(kv);
  }
  if (j.contains("fit") && j["fit"].is_object()) {
    INFERENG_ASSIGN_OR_RETURN(p.fit_rms_rel_error, Number(j["fit"], "rms_rel_error", "fit", false));
    INFERENG_ASSIGN_OR_RETURN(p.fit_max_rel_error, Number(j["fit"], "max_rel_error", "fit", false));
  }
  if (j.contains("calibrated") && j["calibrated"].is_array()) {
    for (std::size_t i = 0; i < j["calibrated"].size(); ++i) {
      const json& c = j["calibrated"][i];
      const std::string field = "calibrated[" + std::to_string(i) + "]";
      if (!c.is_object()) return Status::InvalidArgument(field + ": expected an object");
      FittedParam f;
      INFERENG_ASSIGN_OR_RETURN(f.key, OptString(c, "key", field));
      INFERENG_ASSIGN_OR_RETURN(f.value, Number(c, "value", field, true));
      INFERENG_ASSIGN_OR_RETURN(f.stderr_, Number(c, "stderr", field, false));
      f.identified = c.value("identified", false);
      INFERENG_ASSIGN_OR_RETURN(f.note, OptString(c, "note", field));
      p.calibrated.push_back(f);
    }
  }
  if (j.contains("notes") && j["notes"].is_array()) {
    for (const json& n : j["notes"]) {
      if (n.is_string()) p.notes.push_back(n.get<std::string>());
    }
  }
  return p;
}

Result<ProfileFile> LoadProfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(path + ": cannot open the profile file");
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON (expected an infereng profile)");
  auto p = ProfileFromJson(j);
  if (!p.ok()) return p.status().WithContext(path);
  return p;
}

Status SaveProfile(const ProfileFile& p, const std::string& path) {
  std::ofstream out(path);
  if (!out) return Status::IoError(path + ": cannot write the profile");
  out << ProfileToJson(p).dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError(path + ": write failed");
  return Status::Ok();
}

std::shared_ptr<const CostModel> MakeMeasuredCost(const ProfileFile& p) {
  return std::make_shared<MeasuredCostModel>(p.table);
}

std::vector<double> TableRelativeErrors(const MeasuredTable& t, const std::vector<ProfilePoint>& points) {
  std::vector<double> out;
  for (const ProfilePoint& q : points) {
    if (!(q.seconds > 0)) continue;
    double pred = TableStepSeconds(t, static_cast<double>(q.new_tokens), static_cast<double>(q.context_tokens),
                                   static_cast<double>(q.kv_occupied_tokens));
    if (q.kind == "front_end" || q.kind == "prefill") pred += t.front_end_s;
    out.push_back((pred - q.seconds) / q.seconds);
  }
  return out;
}

}  // namespace infereng::twin
