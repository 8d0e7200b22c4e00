// Vision inputs: how a vision-language model turns an image into prompt tokens, and what
// the card's traffic says about the images requests carry (issue 14 §4).
//
// The image-token rule lives here once: the card validates sizes with it, the workload
// generator counts each request's image tokens with it, `serve` counts the image parts it
// receives with it (usage.prompt_tokens includes them, as vLLM's does), and the twin prices
// the vision encoder from the patches it reports. Two rules, as real processors do:
//  - fixed: every image is `tokens_per_image` tokens whatever its size (LLaVA-1.5: the
//    image is resized to 336x336, CLIP ViT-L/14 makes 24x24 = 576 patches, one token each);
//  - patch (Qwen2-VL / Qwen2.5-VL): the image is resized by `smart_resize` so both sides are
//    multiples of factor = patch_size * merge_size and its area lies in [min_pixels,
//    max_pixels]; the encoder sees (h'/patch)·(w'/patch) patches and the LLM gets one token
//    per merge_size² patches: (h'/factor)·(w'/factor). Source: huggingface/transformers
//    src/transformers/models/qwen2_vl/image_processing_qwen2_vl.py (smart_resize and
//    Qwen2VLImageProcessor._preprocess; defaults min_pixels 56·56, max_pixels 28·28·1280,
//    patch_size 14, merge_size 2). Python's round() rounds halves to even; so do we.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace infereng::card {

// model.vision (docs/workload-card.md).
struct VisionSpec {
  int64_t tokens_per_image = 0;  // > 0: the fixed rule; 0: the patch rule below
  int64_t patch_size = 14;       // the encoder's patch side in pixels
  int64_t merge_size = 2;        // patches merged per side into one LLM token
  int64_t min_pixels = 56 * 56;
  int64_t max_pixels = 28 * 28 * 1280;
  // Parameters of the vision encoder (CLIP ViT-L/14: ~304M; Qwen2-VL's ViT: ~675M); 0 =
  // unknown: the twin then prices no encoder time, only the image tokens' prefill.
  double encoder_params = 0;

  int64_t Factor() const { return patch_size * merge_size; }
};

// What one image costs the model.
struct ImageCost {
  int64_t tokens = 0;          // prompt tokens the LLM prefills for it
  int64_t patches = 0;         // patches the vision encoder runs over
  int64_t resized_width = 0;   // the size the processor resizes it to (fixed rule: as given)
  int64_t resized_height = 0;
};

// The cost of a width x height image under `v`. InvalidArgument when the processor would
// refuse it (a side below the factor, an aspect ratio over 200, a non-positive size), with
// a message that says which.
Result<ImageCost> ImageCostFor(const VisionSpec& v, int64_t width, int64_t height);

// FLOPs of the vision encoder over `patches` patches: 2 x parameters x patches, the
// forward-pass rule of thumb for a transformer (Kaplan et al. 2020, "Scaling Laws for
// Neural Language Models", C_forward ≈ 2N per token), with a patch as the token. Attention's
// quadratic term is left out (a few percent at ViT sizes and ~1k patches).
inline double EncoderFlops(const VisionSpec& v, int64_t patches) {
  return 2.0 * v.encoder_params * static_cast<double>(patches);
}

inline constexpr int64_t kMaxImagesPerRequest = 64;
inline constexpr int64_t kMaxImageSide = 16384;

}  // namespace infereng::card
