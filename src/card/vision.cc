// The image-token rule (see vision.h for the sources).
#include "card/vision.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace infereng::card {
namespace {

// Python's round(x / f) * f: halves go to the even neighbour (round(2.5) == 2), which
// std::nearbyint does in the default rounding mode.
int64_t RoundByFactor(double x, int64_t f) { return static_cast<int64_t>(std::nearbyint(x / f)) * f; }
int64_t FloorByFactor(double x, int64_t f) { return static_cast<int64_t>(std::floor(x / f)) * f; }
int64_t CeilByFactor(double x, int64_t f) { return static_cast<int64_t>(std::ceil(x / f)) * f; }

}  // namespace

Result<ImageCost> ImageCostFor(const VisionSpec& v, int64_t width, int64_t height) {
  if (width < 1 || height < 1 || width > kMaxImageSide || height > kMaxImageSide) {
    return Status::InvalidArgument(
        fmt::format("image size {}x{}: each side must be between 1 and {} pixels", width, height, kMaxImageSide));
  }
  if (v.tokens_per_image > 0) {
    return ImageCost{.tokens = v.tokens_per_image, .patches = v.tokens_per_image,
                     .resized_width = width, .resized_height = height};
  }
  const int64_t factor = v.Factor();
  if (factor < 1 || v.min_pixels < 1 || v.max_pixels < v.min_pixels || v.max_pixels < factor * factor) {
    return Status::InvalidArgument("vision rule: needs patch_size, merge_size >= 1 and "
                                   "(patch_size x merge_size)^2 <= max_pixels >= min_pixels >= 1");
  }
  // smart_resize's own refusals, in its order.
  if (height < factor || width < factor) {
    return Status::InvalidArgument(fmt::format("image size {}x{}: each side must be at least {} pixels (patch_size x "
                                               "merge_size), as Qwen2-VL's processor requires",
                                               width, height, factor));
  }
  const double h = static_cast<double>(height), w = static_cast<double>(width);
  if (std::max(h, w) / std::min(h, w) > 200) {
    return Status::InvalidArgument(
        fmt::format("image size {}x{}: the aspect ratio must be at most 200, as Qwen2-VL's processor requires", width,
                    height));
  }
  int64_t h_bar = RoundByFactor(h, factor);
  int64_t w_bar = RoundByFactor(w, factor);
  if (h_bar * w_bar > v.max_pixels) {
    const double beta = std::sqrt(h * w / static_cast<double>(v.max_pixels));
    h_bar = FloorByFactor(h / beta, factor);
    w_bar = FloorByFactor(w / beta, factor);
  } else if (h_bar * w_bar < v.min_pixels) {
    const double beta = std::sqrt(static_cast<double>(v.min_pixels) / (h * w));
    h_bar = CeilByFactor(h * beta, factor);
    w_bar = CeilByFactor(w * beta, factor);
  }
  ImageCost c;
  c.resized_height = h_bar;
  c.resized_width = w_bar;
  c.patches = (h_bar / v.patch_size) * (w_bar / v.patch_size);
  c.tokens = (h_bar / factor) * (w_bar / factor);
  return c;
}

}  // namespace infereng::card
