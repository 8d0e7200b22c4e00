#include "catalog/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "catalog/embedded_data.h"
#include "catalog/hf_config.h"
#include "core/strings.h"
#include "core/units.h"

namespace infereng::catalog {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Where(std::string_view origin, const YAML::Node& n) {
  return std::string(origin) + ":" + std::to_string(n.Mark().line + 1);
}

// YAML -> JSON for the hf_config mapping: plain scalars become numbers, booleans or null
// when they read as such; quoted scalars stay strings.
nlohmann::json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& e : n) a.push_back(ToJson(e));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = ToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: break;
  }
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return s;
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  if (s == "null" || s == "~") return nullptr;
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && end == s.c_str() + s.size()) return static_cast<int64_t>(i);
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size()) return d;
  return s;
}

Result<YAML::Node> ParseYaml(std::string_view text, std::string_view origin) {
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return Status::InvalidArgument(std::string(origin) + ": expected a mapping at the top level");
    return root;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string(origin) + ":" + std::to_string(e.mark.line + 1) +
                                   ": invalid YAML: " + e.msg);
  }
}

// Whether a catalog key must be present.
enum class Key { kRequired, kOptional };

Result<std::string> Str(const YAML::Node& root, const char* key, std::string_view origin, Key need) {
  const bool required = need == Key::kRequired;
  const YAML::Node n = root[key];
  if (!n) {
    if (!required) return std::string();
    return Status::InvalidArgument(std::string(origin) + ": missing required key \"" + key + "\"");
  }
  if (!n.IsScalar()) return Status::InvalidArgument(Where(origin, n) + ": " + key + ": expected a string");
  return n.Scalar();
}

// A figure {value: <number with unit>, source: "..."}; `parse` converts the value.
template <typename Parse>
Status Figure(const YAML::Node& root, const std::string& key, std::string_view origin, Key need,
              Parse parse, double* out, std::map<std::string, std::string>* sources) {
  const bool required = need == Key::kRequired;
  // "a.b" -> root["a"]["b"], on const nodes only (non-const operator[] and Node::operator=
  // write through to the tree in yaml-cpp).
  const auto dot = key.find('.');
  const YAML::Node first = root[key.substr(0, dot)];
  const YAML::Node n = (dot == std::string::npos || !first || !first.IsMap()) ? first : first[key.substr(dot + 1)];
  if (dot != std::string::npos && first && !first.IsMap() && !first.IsNull()) {
    return Status::InvalidArgument(Where(origin, first) + ": " + key.substr(0, dot) + ": expected a mapping");
  }
  if (!n || n.IsNull()) {
    if (required) return Status::InvalidArgument(std::string(origin) + ": missing required figure \"" + key + "\"");
    return Status::Ok();
  }
  if (!n.IsMap() || !n["value"] || !n["value"].IsScalar()) {
    return Status::InvalidArgument(Where(origin, n) + ": " + key +
                                   ": expected {value: <number with unit>, source: \"...\"}");
  }
  auto v = parse(n["value"].Scalar());
  if (!v.ok()) return Status::InvalidArgument(Where(origin, n["value"]) + ": " + key + ": " + v.status().message());
  *out = static_cast<double>(*v);
  if (!n["source"] || !n["source"].IsScalar() || n["source"].Scalar().empty()) {
    return Status::InvalidArgument(Where(origin, n) + ": " + key + ": every figure needs a source");
  }
  (*sources)[key] = n["source"].Scalar();
  return Status::Ok();
}

// Integer TOPS are written "1979TOPS"; units::ParseFlops knows FLOPS only.
Result<double> ParseOps(std::string_view text) {
  std::string t(text);
  std::string lower = Lower(t);
  if (lower.ends_with("tops") && !lower.ends_with("flops")) t = t.substr(0, t.size() - 3) + "FLOPS";
  return units::ParseFlops(t);
}

Result<double> ParsePrice(std::string_view text) {
  INFERENG_ASSIGN_OR_RETURN(units::Money m, units::ParseMoney(text));
  if (m.per != units::Money::Per::kHour) {
    return Status::InvalidArgument("expected a price per hour like $2.99/h, got \"" + std::string(text) + "\"");
  }
  return m.usd;
}

std::string StemOf(std::string_view name) {
  std::filesystem::path p{std::string(name)};
  return p.stem().string();
}

Result<std::string> ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::NotFound(p.string() + ": cannot read");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

Result<AcceleratorSpec> ParseAcceleratorYaml(std::string_view yaml, std::string_view origin) {
  INFERENG_ASSIGN_OR_RETURN(const YAML::Node root, ParseYaml(yaml, origin));
  AcceleratorSpec a;
  try {
    INFERENG_ASSIGN_OR_RETURN(a.name, Str(root, "name", origin, Key::kRequired));
    INFERENG_ASSIGN_OR_RETURN(a.display_name, Str(root, "display_name", origin, Key::kOptional));
    INFERENG_ASSIGN_OR_RETURN(a.vendor, Str(root, "vendor", origin, Key::kOptional));
    auto& src = a.sources;
    auto bytes = [](std::string_view t) { return units::ParseBytes(t); };
    auto bw = [](std::string_view t) { return units::ParseBandwidth(t); };
    auto secs = [](std::string_view t) { return units::ParseDurationSeconds(t); };
    INFERENG_RETURN_IF_ERROR(Figure(root, "memory", origin, Key::kRequired, bytes, &a.memory_bytes, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "bandwidth", origin, Key::kRequired, bw, &a.bandwidth_bytes_per_s, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "flops.bf16", origin, Key::kRequired, ParseOps, &a.flops_bf16, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "flops.fp8", origin, Key::kOptional, ParseOps, &a.flops_fp8, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "flops.int8", origin, Key::kOptional, ParseOps, &a.flops_int8, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "flops.fp4", origin, Key::kOptional, ParseOps, &a.flops_fp4, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "interconnect", origin, Key::kRequired, bw, &a.interconnect_bytes_per_s, &src));
    const YAML::Node& croot = root;
    if (const YAML::Node link = croot["interconnect"]; link && link.IsMap() && link["name"]) {
      a.interconnect_name = link["name"].Scalar();
    }
    INFERENG_RETURN_IF_ERROR(
        Figure(root, "interconnect_latency", origin, Key::kRequired, secs, &a.interconnect_latency_s, &src));
    INFERENG_RETURN_IF_ERROR(Figure(root, "price_per_hour", origin, Key::kRequired, ParsePrice, &a.price_per_hour_usd, &src));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string(origin) + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (a.memory_bytes <= 0 || a.bandwidth_bytes_per_s <= 0 || a.flops_bf16 <= 0) {
    return Status::InvalidArgument(std::string(origin) + ": memory, bandwidth and flops.bf16 must be positive");
  }
  if (a.display_name.empty()) a.display_name = a.name;
  return a;
}

Result<ModelSpec> ParseModelYaml(std::string_view yaml, std::string_view origin) {
  INFERENG_ASSIGN_OR_RETURN(const YAML::Node root, ParseYaml(yaml, origin));
  try {
    const YAML::Node cfg = root["hf_config"];
    if (!cfg || !cfg.IsMap()) {
      return Status::InvalidArgument(std::string(origin) + ": missing \"hf_config\" (the model's config.json keys)");
    }
    INFERENG_ASSIGN_OR_RETURN(ModelSpec m, ParseHfConfigJson(ToJson(cfg), std::string(origin) + ": hf_config"));
    INFERENG_ASSIGN_OR_RETURN(m.name, Str(root, "name", origin, Key::kRequired));
    INFERENG_ASSIGN_OR_RETURN(m.display_name, Str(root, "display_name", origin, Key::kOptional));
    INFERENG_ASSIGN_OR_RETURN(m.hf_id, Str(root, "hf_id", origin, Key::kOptional));
    INFERENG_ASSIGN_OR_RETURN(m.source, Str(root, "source", origin, Key::kRequired));
    INFERENG_ASSIGN_OR_RETURN(std::string prec, Str(root, "default_precision", origin, Key::kOptional));
    if (!prec.empty()) {
      auto p = ParsePrecision(prec);
      if (!p.ok()) return Status::InvalidArgument(std::string(origin) + ": default_precision: " + p.status().message());
      m.default_precision = std::string(PrecisionName(*p));
    }
    if (m.display_name.empty()) m.display_name = m.name;
    return m;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string(origin) + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Result<Catalog> Catalog::FromFiles(const std::vector<File>& files) {
  Catalog c;
  for (const File& f : files) {
    const std::string stem = StemOf(f.name);
    if (f.name.starts_with("models/")) {
      INFERENG_ASSIGN_OR_RETURN(ModelSpec m, ParseModelYaml(f.text, f.name));
      if (Lower(m.name) != Lower(stem)) {
        return Status::InvalidArgument(f.name + ": name \"" + m.name + "\" differs from the file name");
      }
      std::erase_if(c.models_, [&](const ModelSpec& x) { return Lower(x.name) == Lower(m.name); });
      c.models_.push_back(std::move(m));
    } else if (f.name.starts_with("accelerators/")) {
      INFERENG_ASSIGN_OR_RETURN(AcceleratorSpec a, ParseAcceleratorYaml(f.text, f.name));
      if (Lower(a.name) != Lower(stem)) {
        return Status::InvalidArgument(f.name + ": name \"" + a.name + "\" differs from the file name");
      }
      std::erase_if(c.accelerators_, [&](const AcceleratorSpec& x) { return Lower(x.name) == Lower(a.name); });
      c.accelerators_.push_back(std::move(a));
    }
  }
  std::sort(c.models_.begin(), c.models_.end(), [](auto& a, auto& b) { return a.name < b.name; });
  std::sort(c.accelerators_.begin(), c.accelerators_.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return c;
}

namespace {

Status AppendDir(const std::string& data_dir, std::vector<Catalog::File>* files) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(data_dir, ec)) {
    return Status::NotFound(data_dir + ": catalog data directory does not exist");
  }
  for (const char* sub : {"models", "accelerators"}) {
    const fs::path dir = fs::path(data_dir) / sub;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") paths.push_back(e.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      INFERENG_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
      // Error messages name the real file; FromFiles routes on the "models/" prefix.
      files->push_back({std::string(sub) + "/" + p.filename().string(), std::move(text)});
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Catalog> Catalog::LoadDir(const std::string& data_dir) {
  std::vector<File> files;
  INFERENG_RETURN_IF_ERROR(AppendDir(data_dir, &files));
  auto c = FromFiles(files);
  if (!c.ok()) return c.status().WithContext(data_dir);
  return c;
}

Result<Catalog> Catalog::Load() {
  std::vector<File> files;
  for (const EmbeddedFile& f : EmbeddedCatalogFiles()) {
    if (!f.name.empty()) files.push_back({std::string(f.name), std::string(f.text)});
  }
  if (const char* dir = std::getenv("INFERENG_DATA_DIR"); dir != nullptr && *dir != '\0') {
    auto st = AppendDir(dir, &files);
    if (!st.ok()) return st.WithContext("INFERENG_DATA_DIR");
    auto c = FromFiles(files);
    if (!c.ok()) return c.status().WithContext(std::string("INFERENG_DATA_DIR=") + dir);
    return c;
  }
  return FromFiles(files);
}

const Result<Catalog>& Catalog::Default() {
  static const Result<Catalog> catalog = Load();
  return catalog;
}

Result<ModelSpec> Catalog::FindModel(std::string_view name) const {
  for (const auto& m : models_) {
    if (Lower(m.name) == Lower(name)) return m;
  }
  for (const auto& m : models_) {  // a Hugging Face id ("meta-llama/Llama-3.1-8B-Instruct")
    if (!m.hf_id.empty() && Lower(m.hf_id) == Lower(name)) return m;
  }
  return Status::NotFound("unknown model \"" + std::string(name) + "\"" + DidYouMean(name, ModelNames()) +
                          " (known: " + JoinNames(ModelNames()) +
                          "; or pass a path to a Hugging Face config.json)");
}

Result<AcceleratorSpec> Catalog::FindAccelerator(std::string_view name) const {
  for (const auto& a : accelerators_) {
    if (Lower(a.name) == Lower(name)) return a;
  }
  return Status::NotFound("unknown accelerator \"" + std::string(name) + "\"" +
                          DidYouMean(name, AcceleratorNames()) + " (known: " +
                          JoinNames(AcceleratorNames()) + ")");
}

Result<ModelSpec> Catalog::ResolveModel(std::string_view name_or_path) const {
  const std::string s(name_or_path);
  std::error_code ec;
  if (s.ends_with(".json") || (s.find('/') != std::string::npos && std::filesystem::is_regular_file(s, ec))) {
    return LoadHfConfigFile(s);
  }
  if (std::filesystem::is_regular_file(std::filesystem::path(s) / "config.json", ec)) {
    return LoadHfConfigFile((std::filesystem::path(s) / "config.json").string());  // a HF snapshot directory
  }
  return FindModel(s);
}

std::vector<std::string> Catalog::ModelNames() const {
  std::vector<std::string> v;
  for (const auto& m : models_) v.push_back(m.name);
  return v;
}

std::vector<std::string> Catalog::AcceleratorNames() const {
  std::vector<std::string> v;
  for (const auto& a : accelerators_) v.push_back(a.name);
  return v;
}

}  // namespace infereng::catalog
