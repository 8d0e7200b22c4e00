// Vision inputs in the run report (see vision_section.h).
#include "report/vision_section.h"

#include <fmt/format.h>

#include "metrics/caveats.h"

namespace infereng::report {

void AddVisionSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                      const std::string& heading_prefix) {
  if (!run.summary || !run.summary->vision) return;
  const metrics::Summary& s = *run.summary;
  const metrics::VisionSummary& v = *s.vision;
  page.BeginSection(id_prefix + "-vision", heading_prefix + "Vision inputs",
                    "Requests that carried images (chat image_url parts), over the successful requests of the "
                    "window; image tokens are the model's rule applied to each image (docs/metrics.md, \"Vision "
                    "inputs\"), and are part of the prompt tokens the engine prefills.");
  std::vector<Kpi> k;
  k.push_back({"images/s", metrics::RateOrNa(s, v.images_per_s, "images/s"),
               fmt::format("{} images in the window", v.window_images)});
  k.push_back({"requests with images", std::to_string(v.requests),
               fmt::format("{} images, {} image tokens", v.images, v.image_tokens)});
  k.push_back({"image tokens per request", v.requests > 0 ? fmt::format("{:.1f}", static_cast<double>(v.image_tokens) /
                                                                                      static_cast<double>(v.requests))
                                                          : "n/a",
               "mean over the requests with images"});
  page.Kpis(k);
  page.EndSection();
}

std::string VisionMarkdownRows(const metrics::Summary& s) {
  if (!s.vision) return {};
  const metrics::VisionSummary& v = *s.vision;
  return fmt::format("| vision: requests with images · images · image tokens | {} · {} · {} |\n"
                     "| images/s | {} |\n",
                     v.requests, v.images, v.image_tokens, metrics::RateOrNa(s, v.images_per_s, "images/s"));
}

}  // namespace infereng::report
