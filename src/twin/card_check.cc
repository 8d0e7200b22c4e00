// CheckCard: catalog names and engine knobs of a card, located at their lines.
#include "twin/card_check.h"

#include "card/card_parser.h"
#include "twin/engine_config.h"

namespace infereng::twin {
namespace {

// "FILE:LINE: NAME: message", located at `path` (NAME defaults to the path).
Status At(const card::WorkloadCard& card, const std::string& path, const Status& s, std::string name = "") {
  return Status::InvalidArgument(card::FieldLocation(card, path) + ": " + (name.empty() ? path : name) + ": " +
                                 s.message());
}

}  // namespace

Status CheckCard(const card::WorkloadCard& card, const catalog::Catalog& catalog) {
  if (!card.model.architecture.empty()) {
    auto m = catalog.ResolveModel(card.model.architecture);
    if (!m.ok()) return At(card, "model.architecture", m.status());
  }
  if (!card.deployment.accelerator.empty()) {
    auto a = catalog.FindAccelerator(card.deployment.accelerator);
    if (!a.ok()) return At(card, "deployment.accelerator", a.status());
  }
  for (std::size_t i = 0; i < card.constraints.accelerators.size(); ++i) {
    auto a = catalog.FindAccelerator(card.constraints.accelerators[i]);
    if (!a.ok()) {
      return At(card, "constraints.accelerators", a.status(), "constraints.accelerators[" + std::to_string(i) + "]");
    }
  }
  TwinSettings scratch;
  INFERENG_RETURN_IF_ERROR(ApplyEngineMap(scratch, card.engine, [&card](const std::string& path) {
    return card::FieldLocation(card, path);
  }));
  if (Status s = ValidateClusterConfig(scratch.cluster); !s.ok()) return At(card, "engine", s);
  return Status::Ok();
}

}  // namespace infereng::twin
