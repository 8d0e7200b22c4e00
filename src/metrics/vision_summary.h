// VisionSummary: what requests with images add to a summary (docs/metrics.md, "Vision
// inputs"). A request's images and image tokens are the client's plan (RequestRecord::images,
// ::image_tokens: the card's count and the model's rule, card/vision.h); the server folds
// the image tokens into usage.prompt_tokens without a split, so the plan is what we count.
//
// Populations, as for the rest of the summary (metrics/summary.h): counts over successful
// in-window requests; images/s counts the images of successful requests whose last byte
// (last chunk, else t_end) falls in the window, divided by the summary's rate basis, as
// requests/s does.
//
// JSON under the summary's "vision" key; absent when no record carried an image, so a
// text-only run's summary.json is unchanged.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace infereng::metrics {

struct VisionSummary {
  int64_t requests = 0;        // successful in-window requests that carried images
  int64_t images = 0;          // their images
  int64_t image_tokens = 0;    // their image tokens
  int64_t window_images = 0;   // images of successful requests that ended in the window
  double images_per_s = 0;     // window_images / rate basis

  friend bool operator==(const VisionSummary&, const VisionSummary&) = default;
};

nlohmann::json VisionToJson(const VisionSummary& v);
Result<VisionSummary> VisionFromJson(const nlohmann::json& j, const std::string& where);

}  // namespace infereng::metrics
