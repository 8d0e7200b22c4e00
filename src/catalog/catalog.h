// Catalog: the built-in models and accelerators, and HF config.json loading.
//
// The catalog files (data/models/*.yaml, data/accelerators/*.yaml) are embedded in the
// binary at build time (cmake/catalog_data.cmake), so an installed infereng works from any
// directory. If INFERENG_DATA_DIR is set, files from $INFERENG_DATA_DIR/models and
// $INFERENG_DATA_DIR/accelerators are read instead of (and may add to) the embedded ones.
//
// Model files hold an `hf_config:` mapping with the model's own config.json keys, so
// catalog entries and `--model path/config.json` go through one parser (hf_config.h).
// Accelerator files give each figure with a unit and a source:
//   memory: {value: 81559MiB, source: "nvidia-smi total on H100 SXM5 80GB"}
//
// Thread-safety: a Catalog is immutable after Load; Default() is built once (thread-safe
// static initialisation) and may be shared by every thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/accelerator_spec.h"
#include "catalog/model_spec.h"
#include "core/status.h"

namespace infereng::catalog {

class Catalog {
 public:
  // The embedded files, overridden by $INFERENG_DATA_DIR when set. A broken file is an
  // error naming it (the embedded data are tested, so this means a bad override).
  static Result<Catalog> Load();
  // Load(), done once per process and cached (INFERENG_DATA_DIR is read on first use).
  static const Result<Catalog>& Default();
  // Reads only `data_dir`/models/*.yaml and `data_dir`/accelerators/*.yaml.
  static Result<Catalog> LoadDir(const std::string& data_dir);
  // Parses the given (name, text) pairs; names are "models/x.yaml" / "accelerators/x.yaml".
  struct File {
    std::string name;
    std::string text;
  };
  static Result<Catalog> FromFiles(const std::vector<File>& files);

  // Case-insensitive lookup by catalog name (models also by HF id). NotFound lists the
  // known names.
  Result<ModelSpec> FindModel(std::string_view name) const;
  Result<AcceleratorSpec> FindAccelerator(std::string_view name) const;

  // A catalog name or HF id, a path to a HF config.json (anything ending in .json, or an
  // existing file whose path contains a '/'), or a directory holding a config.json.
  Result<ModelSpec> ResolveModel(std::string_view name_or_path) const;

  std::vector<std::string> ModelNames() const;        // sorted
  std::vector<std::string> AcceleratorNames() const;  // sorted
  const std::vector<ModelSpec>& models() const { return models_; }
  const std::vector<AcceleratorSpec>& accelerators() const { return accelerators_; }

 private:
  std::vector<ModelSpec> models_;
  std::vector<AcceleratorSpec> accelerators_;
};

// Parses one accelerator catalog file; `origin` prefixes errors ("h100-sxm.yaml:3: ...").
Result<AcceleratorSpec> ParseAcceleratorYaml(std::string_view yaml, std::string_view origin);
// Parses one model catalog file (metadata + hf_config mapping).
Result<ModelSpec> ParseModelYaml(std::string_view yaml, std::string_view origin);

}  // namespace infereng::catalog
