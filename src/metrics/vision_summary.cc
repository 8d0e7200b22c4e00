// VisionSummary's JSON (see vision_summary.h).
#include "metrics/vision_summary.h"

namespace infereng::metrics {

using nlohmann::json;

json VisionToJson(const VisionSummary& v) {
  return json{{"requests", v.requests},
              {"images", v.images},
              {"image_tokens", v.image_tokens},
              {"window_images", v.window_images},
              {"images_per_s", v.images_per_s}};
}

Result<VisionSummary> VisionFromJson(const json& j, const std::string& where) {
  if (!j.is_object()) return Status::InvalidArgument(where + ": expected an object");
  VisionSummary v;
  for (auto [key, field] : {std::pair{"requests", &v.requests}, {"images", &v.images},
                            {"image_tokens", &v.image_tokens}, {"window_images", &v.window_images}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
      return Status::InvalidArgument(where + "." + key + ": expected an integer >= 0");
    }
    *field = it->get<int64_t>();
  }
  auto it = j.find("images_per_s");
  if (it == j.end() || !it->is_number()) return Status::InvalidArgument(where + ".images_per_s: expected a number");
  v.images_per_s = it->get<double>();
  return v;
}

}  // namespace infereng::metrics
