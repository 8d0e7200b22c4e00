// FindGaps: which workload facts a card lacks or only assumes.
#include "card/gaps.h"

#include <algorithm>
#include <functional>

namespace infereng::card {
namespace {

struct Requirement {
  const char* path;  // present if the card has this path or any path below it
  const char* why;
  std::function<bool(const WorkloadCard&)> applies = nullptr;  // null = always
};

// An embeddings or rerank card has no output tokens, stream or eval set (the card refuses them).
bool Generation(const WorkloadCard& c) { return !c.product.PrefillOnly(); }
bool Embeddings(const WorkloadCard& c) { return c.product.modality == "embeddings"; }
bool Rerank(const WorkloadCard& c) { return c.product.modality == "rerank"; }
bool Streaming(const WorkloadCard& c) { return Generation(c) && c.product.streaming; }
bool Agentic(const WorkloadCard& c) {
  return Generation(c) && (c.product.unit_of_work == "task" || c.product.task == "agent");
}
bool Vision(const WorkloadCard& c) { return c.traffic.images.has_value(); }
// A transcription card's token lengths follow from its clips (card/audio.h): the card
// refuses traffic.input_tokens/output_tokens/prefix and the eval set.
bool Transcription(const WorkloadCard& c) { return c.product.Transcription(); }
bool TextTraffic(const WorkloadCard& c) { return !Transcription(c); }
bool TextGeneration(const WorkloadCard& c) { return Generation(c) && !Transcription(c); }
bool Online(const WorkloadCard& c) { return c.traffic.cls == TrafficSpec::Class::kOnline; }

const std::vector<Requirement>& Requirements() {
  static const std::vector<Requirement> kReqs = {
      {"product.task", "the task decides which quality eval and which objectives apply"},
      {"product.max_context_tokens", "KV-cache demand and model choice depend on the longest context served"},
      {"product.max_output_tokens", "the output limit bounds decode time and KV growth per request", Generation},
      {"product.streaming", "streaming decides whether TTFT/ITL or only E2E latency is user-visible", Generation},
      {"product.timeout", "requests past the client timeout are wasted work; goodput needs the cut-off"},
      {"product.overload_response", "overload behaviour (429, queue, shed) must be explicit; unbounded queues turn saturation into tail-latency failures"},
      {"product.network", "the E2E budget must include client-endpoint network time, not just the model"},
      {"product.preprocess", "tokenisation/templating time is part of the E2E budget and can dominate short requests"},
      {"product.postprocess", "post-processing (detokenise, validate, filter) is part of the E2E budget"},
      {"traffic.arrival", "capacity, queueing delay and cost all scale with the request rate; measure it from production logs"},
      {"traffic.peak_rate", "capacity must serve the peak (burst headroom), not the mean rate", Online},
      {"traffic.concurrency", "record real concurrency: batch size, KV demand and per-user throughput depend on it"},
      {"traffic.input_tokens", "prefill cost and TTFT scale with input length; record the real distribution (p50 and p99)", TextTraffic},
      {"traffic.output_tokens", "decode time, E2E latency and KV growth scale with output length; record the real distribution", TextGeneration},
      {"traffic.audio.seconds", "transcription: clip lengths set the audio tokens each prefill computes and the transcript each decode streams", Transcription},
      {"traffic.audio.transcript_tokens_per_s", "transcription: transcript tokens per second of audio set decode time; measure it on your own transcripts (the default 3.25 assumes ~150 words/min)", Transcription},
      {"model.audio.encoder_params", "transcription: without the audio encoder's size the twin prices no encoder time, only the audio tokens' prefill", Transcription},
      {"traffic.batch_size", "embeddings: inputs per request set the prefill work of each request and items/s", Embeddings},
      {"traffic.documents", "rerank: documents per request set how many query-document pairs each request scores", Rerank},
      {"traffic.document_tokens", "rerank: each pair is the query plus one document; document lengths set most of the prefill work", Rerank},
      {"traffic.prefix", "the share of requests with a cacheable prefix sets the prefix-cache hit rate and prefill work saved", TextGeneration},
      {"traffic.agent_steps", "agent flows are measured as whole tasks: LLM calls per task multiply latency and cost", Agentic},
      {"traffic.agent_tool_time", "tool-call time sits between LLM calls and counts toward the task's E2E time", Agentic},
      {"traffic.images.count", "vision: images per request multiply the image tokens each prefill computes", Vision},
      {"traffic.images.share", "vision: the share of requests with images sets how many pay the image tokens and the encoder", Vision},
      {"model.vision.encoder_params", "vision: without the encoder's size the twin prices no encoder time per image, only the image tokens' prefill", Vision},
      {"slo.ttft", "time to first token is what a streaming user waits for; it needs a stated percentile target", Streaming},
      {"slo.itl", "inter-token latency (per-request distribution) is the streaming user's reading speed", Streaming},
      {"slo.e2e", "end-to-end latency at P50 and a tail percentile (P95/P99) is the user-visible objective"},
      {"slo.min_output_tokens_per_s", "a throughput objective (system-wide tokens/s) sizes batch and offline capacity", Generation},
      {"slo.availability", "an availability target decides replicas, health checks and failover"},
      {"slo.recovery", "a recovery-time objective decides warm capacity vs cold-start scaling"},
      {"constraints.budget", "cost per successful request is judged against a budget ($/h or $/1M tokens)"},
      {"constraints.region", "region limits which accelerators and providers are available"},
      {"constraints.data_residency", "data residency can rule out providers, regions and shared caches"},
      {"constraints.privacy", "privacy rules decide prompt/output logging and cross-tenant cache isolation"},
      {"constraints.licence", "the model's licence must allow this use before any benchmark matters"},
      {"constraints.accelerators", "hardware access bounds the fit and capacity search"},
      {"constraints.operations", "operations capacity decides how much complexity (disaggregation, multi-node) is affordable"},
      {"model.id", "the served model must be named to fit, benchmark and evaluate it"},
      {"model.revision", "pin the model revision: a reproducible baseline needs the exact weights"},
      {"model.architecture", "fit and the twin need the architecture (layers, heads, KV size)"},
      {"deployment.accelerator", "fit, the twin and cost need the accelerator the replica runs on"},
      {"quality.eval_set", "pair every benchmark with a task-quality eval: a faster config that fails quality is no win", TextGeneration},
      {"quality.pass_threshold", "the eval needs a pass threshold to accept or reject a configuration", TextGeneration},
      {"baseline.run", "no measured baseline: run `infereng bench` at realistic load (warm-up, enough samples, percentiles with throughput)"},
  };
  return kReqs;
}

bool HasPathOrBelow(const WorkloadCard& c, const std::string& path) {
  auto it = c.fields.lower_bound(path);
  if (it == c.fields.end()) return false;
  if (it->first == path) return true;
  // Latency objectives may be spelled ttft or ttft_ms.
  return it->first.rfind(path + ".", 0) == 0 || c.Has(path + "_ms");
}

std::string WhyFor(const std::string& path) {
  std::string best_why = "marked assumed: replace it with a measurement";
  std::size_t best_len = 0;
  for (const Requirement& r : Requirements()) {
    const std::string p = r.path;
    const bool match = path == p || path.rfind(p + ".", 0) == 0 || path.rfind(p + "_ms", 0) == 0;
    if (match && p.size() > best_len) {
      best_len = p.size();
      best_why = r.why;
    }
  }
  return best_why;
}

}  // namespace

std::vector<Gap> FindGaps(const WorkloadCard& card) {
  std::vector<Gap> gaps;
  // Assumed fields, outermost only (children of an assumed field inherit the mark).
  for (const auto& [path, meta] : card.fields) {
    if (!meta.assumed) continue;
    auto dot = path.rfind('.');
    if (dot != std::string::npos && card.Assumed(path.substr(0, dot))) continue;
    gaps.push_back(Gap{Gap::Kind::kAssumed, path, meta.line, WhyFor(path)});
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) { return a.line < b.line; });
  for (const Requirement& r : Requirements()) {
    if (r.applies && !r.applies(card)) continue;
    if (HasPathOrBelow(card, r.path)) continue;
    gaps.push_back(Gap{Gap::Kind::kMissing, r.path, 0, r.why});
  }
  return gaps;
}

}  // namespace infereng::card
