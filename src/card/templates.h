// Commented workload-card templates (chat, batch, agent) for `infereng card init`; the
// files examples/*.yaml hold the same text.
#pragma once

#include <span>
#include <string_view>

namespace infereng::card {

struct CardTemplate {
  std::string_view name;
  std::string_view summary;
  std::string_view yaml;
};

std::span<const CardTemplate> CardTemplates();
const CardTemplate* FindCardTemplate(std::string_view name);  // nullptr if unknown

}  // namespace infereng::card
