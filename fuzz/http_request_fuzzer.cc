// libFuzzer harness for serve's request handling: the body JSON -> request parameters
// parser (both endpoints; chat also with image parts for a vision model), the /v1/embeddings and /v1/rerank body parsers, the /tokenize parser and the
// --faults spec parser. Any input
// must yield parameters or an OpenAI-shaped error, never a crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "serve/faults.h"
#include "serve/request_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace infereng::serve;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const ParseLimits limits{.model_name = "m", .max_model_len = 4096, .default_max_tokens = 16};
  for (Endpoint ep : {Endpoint::kChat, Endpoint::kCompletions}) {
    ParseOutcome r = ParseCompletionRequest(in, ep, limits);
    if (r.error) {
      (void)r.error->ToJson();
    } else if (r.params.max_tokens < 1 || r.params.prompt_ids.empty() ||
               static_cast<int64_t>(r.params.prompt_ids.size()) + r.params.max_tokens > limits.max_model_len) {
      __builtin_trap();  // the parser accepted something it promised to refuse
    }
  }
  // Chat with image parts, as a vision-language model (Qwen2-VL's rule) reads them: accepted
  // means the images' tokens sit inside the prompt, first to last image token.
  static const infereng::card::VisionSpec kVision;
  ParseLimits vision_limits = limits;
  vision_limits.vision = &kVision;
  ParseOutcome v = ParseCompletionRequest(in, Endpoint::kChat, vision_limits);
  if (v.error) {
    (void)v.error->ToJson();
  } else if (v.params.images < 0 || v.params.image_tokens < v.params.images ||
             (v.params.images > 0 && (v.params.image_begin >= v.params.image_end ||
                                      v.params.image_end > static_cast<int64_t>(v.params.prompt_ids.size()) ||
                                      v.params.image_tokens > v.params.image_end - v.params.image_begin))) {
    __builtin_trap();
  }
  // /v1/embeddings: accepted means every input has tokens, fewer than the context, and the
  // batch together fits one prefill.
  EmbeddingsOutcome e = ParseEmbeddingsRequest(in, limits);
  if (e.error) {
    (void)e.error->ToJson();
  } else {
    int64_t total = 0;
    for (const auto& input : e.params.inputs) {
      if (input.empty() || static_cast<int64_t>(input.size()) >= limits.max_model_len) __builtin_trap();
      total += static_cast<int64_t>(input.size());
    }
    if (e.params.inputs.empty() || e.params.inputs.size() > kMaxEmbeddingInputs || total != e.params.prompt_tokens ||
        total >= limits.max_model_len || e.params.dimensions < 1 || e.params.dimensions > kEmbeddingDimension) {
      __builtin_trap();
    }
  }
  // /v1/rerank: accepted means a query and 1..1000 documents with tokens, every pair shorter
  // than the context, the pairs together fitting one prefill, and 1 <= top_n <= documents.
  RerankOutcome rr = ParseRerankRequest(in, limits);
  if (rr.error) {
    (void)rr.error->ToJson();
  } else {
    const auto q = static_cast<int64_t>(rr.params.query.size());
    int64_t total = 0;
    for (const auto& d : rr.params.documents) {
      if (d.empty() || q + static_cast<int64_t>(d.size()) >= limits.max_model_len) __builtin_trap();
      total += q + static_cast<int64_t>(d.size());
    }
    const auto n = static_cast<int64_t>(rr.params.documents.size());
    if (q == 0 || n == 0 || rr.params.documents.size() > kMaxRerankDocuments || total != rr.params.prompt_tokens ||
        total >= limits.max_model_len || rr.params.top_n < 1 || rr.params.top_n > n ||
        rr.params.texts.size() != rr.params.documents.size()) {
      __builtin_trap();
    }
  }
  std::vector<uint32_t> ids;
  (void)ParseTokenizeRequest(in, ids);
  (void)ParseFaultSpec(in);
  return 0;
}
