// ValidateCard: ranges and cross-field consistency. Errors carry FILE:LINE when the card
// came from a file (the line of the offending field, from card.fields).
#include <cmath>
#include <set>

#include "card/card_parser.h"
#include "card/limits.h"
#include "card/slo.h"
#include "core/path_names.h"
#include "core/units.h"

namespace infereng::card {
namespace {

class Checker {
 public:
  explicit Checker(const WorkloadCard& card) : card_(card) {}

  // Records the first failure: "SOURCE:LINE: path: message".
  void Require(bool ok, const std::string& path, const std::string& message) {
    if (ok || !status_.ok()) return;
    status_ = Status::InvalidArgument(FieldLocation(card_, path) + ": " + path + ": " + message);
  }

  void Distribution(const card::Distribution& d, const std::string& path) {
    using K = Distribution::Kind;
    const double kMax = 1e8;
    switch (d.kind) {
      case K::kFixed:
        Require(d.value >= 1 && d.value <= kMax, path, "fixed length must be between 1 and 1e8, got " + Num(d.value));
        break;
      case K::kUniform:
        Require(d.min >= 1 && d.min <= d.max && d.max <= kMax, path,
                "uniform needs 1 <= min <= max <= 1e8, got [" + Num(d.min) + ", " + Num(d.max) + "]");
        break;
      case K::kNormal:
        Require(d.mean > 0 && d.mean <= kMax, path + ".normal.mean", "must be > 0, got " + Num(d.mean));
        Require(d.stddev >= 0 && d.stddev <= kMax, path + ".normal.stddev", "must be >= 0, got " + Num(d.stddev));
        break;
      case K::kLognormal:
        Require(d.p50 > 0 && d.p50 <= kMax, path + ".lognormal.p50", "must be > 0, got " + Num(d.p50));
        Require(d.p99 >= d.p50 && d.p99 <= kMax, path + ".lognormal.p99",
                "must be >= p50 (" + Num(d.p50) + "), got " + Num(d.p99));
        break;
      case K::kEmpirical:
        Require(!d.samples.empty(), path + ".empirical", "no samples loaded");
        break;
    }
    if (d.kind != K::kUniform) {
      Require(d.min >= 1, path + ".min", "must be >= 1, got " + Num(d.min));
      Require(d.max == 0 || d.max >= d.min, path + ".max", "must be >= min (" + Num(d.min) + "), got " + Num(d.max));
      Require(d.max <= kMax, path + ".max", "must be <= 1e8");
    }
  }

  static std::string Num(double v) { return units::FormatNumber(v); }
  const Status& status() const { return status_; }

 private:
  const WorkloadCard& card_;
  Status status_;
};

// The count distribution of a prefill-only card's items (batch_size, documents): at most
// `limit` per request.
void ItemCount(Checker& c, const Distribution& d, const std::string& field, int limit, const char* unit) {
  c.Distribution(d, field);
  c.Require(d.max == 0 || d.max <= limit, field + ".max",
            "must be at most " + std::to_string(limit) + " " + unit + " per request");
  c.Require(d.kind != Distribution::Kind::kFixed || d.value <= limit, field,
            "must be at most " + std::to_string(limit) + " " + unit + " per request");
}

// A card whose requests have no token stream (prefill only, or answered whole): its
// latency objectives and goodput thresholds can only be end to end. `why` starts the
// message ("a rerank request has no token stream").
void OnlyEndToEnd(const WorkloadCard& card, Checker& c, const std::string& why) {
  // The path as written ("slo.ttft" or "slo.ttft_ms"), so the error names its line.
  auto written = [&card](const std::string& parent, const std::string& metric) {
    const std::string short_path = parent + metric.substr(0, metric.size() - 3);
    return card.Has(short_path) ? short_path : parent + metric;
  };
  for (const SloTarget& t : card.slo.latency) {
    c.Require(t.metric == "e2e_ms", written("slo.", t.metric), why + ": only e2e objectives apply");
  }
  for (const RequestThreshold& t : card.slo.goodput) {
    c.Require(t.metric == "e2e_ms", written("slo.goodput.", t.metric), why + ": only an e2e threshold applies");
  }
}

// An embeddings card (product.modality: embeddings): the request is a batch of inputs
// answered by vectors; a rerank card (product.modality: rerank): a query and documents
// answered by one relevance score per document. Both are prefill only, so nothing about
// output tokens or a token stream applies, and batch_size (documents, document_tokens)
// only means something on the one modality. Each refusal names the field's line.
void ValidatePrefillOnly(const WorkloadCard& card, Checker& c) {
  const std::string& modality = card.product.modality;
  const char* article = modality == "rerank" ? "a" : "an";
  if (card.product.PrefillOnly()) {  // first: the endpoint the card's traffic is made for
    c.Require(card.bench.endpoint == modality, "bench.endpoint",
              "must be " + modality + " on " + article + " " + modality + " card (product.modality: " + modality +
                  "), got " + card.bench.endpoint);
  }
  if (modality != "embeddings") {
    c.Require(!card.traffic.batch_size, "traffic.batch_size",
              "only applies to an embeddings card (product.modality: embeddings)");
    c.Require(card.bench.endpoint != "embeddings", "bench.endpoint",
              "embeddings needs product.modality: embeddings (the card's traffic is then batches of inputs)");
  }
  if (modality != "rerank") {
    for (const char* field : {"traffic.documents", "traffic.document_tokens"}) {
      c.Require(!card.Has(field), field, "only applies to a rerank card (product.modality: rerank)");
    }
    c.Require(card.bench.endpoint != "rerank", "bench.endpoint",
              "rerank needs product.modality: rerank (the card's traffic is then a query and documents)");
  }
  if (!card.product.PrefillOnly()) return;
  if (card.traffic.batch_size) ItemCount(c, *card.traffic.batch_size, "traffic.batch_size", kMaxEmbeddingBatch, "inputs");
  if (modality == "rerank") {
    if (card.traffic.documents) ItemCount(c, *card.traffic.documents, "traffic.documents", kMaxRerankDocuments, "documents");
    if (card.traffic.document_tokens) c.Distribution(*card.traffic.document_tokens, "traffic.document_tokens");
    c.Require(card.traffic.arrival.kind != ArrivalSpec::Kind::kTrace, "traffic.arrival",
              "trace replay is not modelled for a rerank card yet (a trace row has no query and documents)");
  }
  const std::string what = modality == "rerank" ? "a rerank card (no output tokens, no stream, one call per request)"
                                                : "an embeddings card (no output tokens, no stream, one call per request)";
  for (const char* field : {"traffic.output_tokens", "product.max_output_tokens", "product.streaming",
                            "slo.min_output_tokens_per_s", "traffic.sessions", "traffic.agent_steps",
                            "traffic.agent_tool_time", "traffic.agent_parallel", "quality.eval_set"}) {
    c.Require(!card.Has(field), field, "does not apply to " + what + "; remove it");
  }
  c.Require(!card.Has("traffic.prefix"), "traffic.prefix",
            "shared prefixes are not modelled for " + modality + " inputs yet; remove it");
  OnlyEndToEnd(card, c, std::string(article) + " " + modality + " request has no token stream");
}

// A transcription card (product.modality: transcription): each request is one audio clip
// (traffic.audio) sent to /v1/audio/transcriptions, and its transcript's length follows from
// the clip (card/audio.h), so the text-traffic fields that would say otherwise are refused.
void ValidateTranscription(const WorkloadCard& card, Checker& c) {
  if (!card.product.Transcription()) {
    c.Require(!card.traffic.audio, "traffic.audio",
              "only applies to a transcription card (product.modality: transcription)");
    c.Require(card.bench.endpoint != "transcriptions", "bench.endpoint",
              "transcriptions needs product.modality: transcription (the card's traffic is then audio clips)");
    return;
  }
  c.Require(card.bench.endpoint == "transcriptions", "bench.endpoint",
            "must be transcriptions on a transcription card (product.modality: transcription), got " + card.bench.endpoint);
  c.Require(card.traffic.audio.has_value(), "traffic.audio",
            "is required on a transcription card: the clips requests carry, e.g. {seconds: {p50: 8, p99: 45}}");
  c.Require(card.model.audio.has_value(), "model.audio",
            "is required on a transcription card: how the model turns audio into tokens, e.g. {tokens_per_second: 50, window_s: 30} (Whisper)");
  if (card.traffic.audio) {
    const Distribution& d = card.traffic.audio->seconds;
    c.Distribution(d, "traffic.audio.seconds");
    const double max_s = static_cast<double>(kMaxAudioMs) / 1000.0;
    c.Require(d.max == 0 || d.max <= max_s, "traffic.audio.seconds.max",
              "must be at most " + std::to_string(kMaxAudioMs / 1000) + " s per clip");
    c.Require(d.kind != Distribution::Kind::kFixed || (d.value > 0 && d.value <= max_s), "traffic.audio.seconds",
              "must be above 0 and at most " + std::to_string(kMaxAudioMs / 1000) + " s per clip");
  }
  const std::string what = "a transcription card (the prompt is the audio clip, the transcript's length follows from it)";
  for (const char* field : {"traffic.input_tokens", "traffic.output_tokens", "traffic.prefix", "traffic.images",
                            "traffic.sessions", "traffic.agent_steps", "traffic.agent_tool_time",
                            "traffic.agent_parallel", "quality.eval_set"}) {
    c.Require(!card.Has(field), field, "does not apply to " + what + "; remove it");
  }
  c.Require(card.traffic.arrival.kind != ArrivalSpec::Kind::kTrace, "traffic.arrival",
            "trace replay is not modelled for a transcription card yet (a trace row has no audio)");
}

// Vision inputs (traffic.images with model.vision): chat requests with image parts. The
// image size must pass the model's rule (card/vision.h), as the processor would take it.
void ValidateVision(const WorkloadCard& card, Checker& c) {
  if (const std::optional<VisionSpec>& v = card.model.vision; v && v->tokens_per_image == 0) {
    c.Require(v->min_pixels <= v->max_pixels, "model.vision.min_pixels",
              "must be <= max_pixels (" + std::to_string(v->max_pixels) + ")");
    c.Require(v->Factor() * v->Factor() <= v->max_pixels, "model.vision.max_pixels",
              "must be at least (patch_size x merge_size)^2 = " + std::to_string(v->Factor() * v->Factor()));
  }
  if (!card.traffic.images) return;
  const ImagesSpec& im = *card.traffic.images;
  c.Require(card.model.vision.has_value(), "traffic.images",
            "needs model.vision (the model's image-token rule, e.g. {tokens_per_image: 576})");
  c.Require(!card.product.PrefillOnly(), "traffic.images",
            "does not apply to " + std::string(card.product.modality == "rerank" ? "a" : "an") + " " +
                card.product.modality + " card (images go on chat requests)");
  c.Require(card.bench.endpoint == "chat", "bench.endpoint",
            "must be chat when traffic.images is set (image parts exist only in chat messages), got " + card.bench.endpoint);
  c.Require(!card.traffic.sessions, "traffic.images",
            "with sessions or agent tasks is not modelled yet (each turn would re-send earlier images)");
  c.Distribution(im.count, "traffic.images.count");
  c.Require(im.count.max == 0 || im.count.max <= kMaxImagesPerRequest, "traffic.images.count.max",
            "must be at most " + std::to_string(kMaxImagesPerRequest) + " images per request");
  c.Require(im.count.kind != Distribution::Kind::kFixed || im.count.value <= kMaxImagesPerRequest,
            "traffic.images.count", "must be at most " + std::to_string(kMaxImagesPerRequest) + " images per request");
  if (card.model.vision && c.status().ok()) {
    const Result<ImageCost> cost = ImageCostFor(*card.model.vision, im.width, im.height);
    c.Require(cost.ok(), "traffic.images", cost.ok() ? "" : cost.status().message());
  }
}

}  // namespace

std::string FieldLocation(const WorkloadCard& card, const std::string& path) {
  std::string where = card.source_path.empty() ? "<card>" : card.source_path;
  // The line of the path, or of its closest recorded parent.
  for (std::string p = path; !p.empty();) {
    if (auto it = card.fields.find(p); it != card.fields.end()) {
      if (it->second.line > 0) where += ":" + std::to_string(it->second.line);
      break;
    }
    auto dot = p.rfind('.');
    p = dot == std::string::npos ? "" : p.substr(0, dot);
  }
  return where;
}

Status ValidateCard(const WorkloadCard& card) {
  Checker c(card);
  // The name becomes part of output folder names (runs/<name>-<time>, sweep-<name>-<time>).
  const Status name = CheckPathComponent(card.name);
  c.Require(name.ok(), "name", name.message());
  const TrafficSpec& t = card.traffic;
  const ArrivalSpec& a = t.arrival;
  using K = ArrivalSpec::Kind;
  if (a.kind != K::kTrace) {
    c.Require(a.rate_rps > 0 && a.rate_rps <= kMaxRateRps, "traffic.arrival.rate",
              "must be > 0 and <= 1e6 requests/s, got " + Checker::Num(a.rate_rps));
  }
  if (a.kind == K::kGamma) {
    c.Require(a.cv > 0 && a.cv <= 100, "traffic.arrival.cv", "must be > 0 and <= 100, got " + Checker::Num(a.cv));
  }
  if (a.kind == K::kOnOff) {
    c.Require(a.on_s > 0, "traffic.arrival.on", "must be > 0");
    c.Require(a.off_s >= 0, "traffic.arrival.off", "must be >= 0");
  }
  if (a.kind == K::kDiurnal) {
    c.Require(a.period_s > 0, "traffic.arrival.period", "must be > 0");
    c.Require(a.peak_to_trough >= 1 && a.peak_to_trough <= 1e6, "traffic.arrival.peak_to_trough",
              "must be >= 1, got " + Checker::Num(a.peak_to_trough));
  }
  if (a.kind == K::kTrace) {
    c.Require(!a.trace_file.empty(), "traffic.arrival.file", "a trace needs a file");
    c.Require(a.trace_speed > 0 && a.trace_speed <= 1e6, "traffic.arrival.speed",
              "must be > 0, got " + Checker::Num(a.trace_speed));
    c.Require(a.trace_sessions.empty() || a.trace_sessions == "sessions" || a.trace_sessions == "tasks",
              "traffic.arrival.sessions", "must be sessions or tasks, got \"" + a.trace_sessions + "\"");
    c.Require(a.trace_parallel_window_s >= 0 && a.trace_parallel_window_s <= 3600, "traffic.arrival.parallel_window",
              "must be between 0 and 1h, got " + Checker::Num(a.trace_parallel_window_s));
    c.Require(a.trace_sessions.empty() || card.product.modality != "embeddings", "traffic.arrival.sessions",
              "does not apply to an embeddings card (its requests are independent batches)");
    c.Require(a.trace_sessions.empty() || !card.traffic.images, "traffic.arrival.sessions",
              "with traffic.images is not modelled yet (each turn would re-send earlier images)");
  }
  if (t.peak_rate_rps) c.Require(*t.peak_rate_rps > 0, "traffic.peak_rate", "must be > 0");
  // An unset distribution (the default fixed 0) is allowed: not every command needs lengths
  // (the workload generator refuses it). A written one must be valid.
  auto is_set = [&](const card::Distribution& d, const std::string& path) {
    return card.Has(path) || d.kind != Distribution::Kind::kFixed || d.value != 0;
  };
  if (is_set(t.input_tokens, "traffic.input_tokens")) c.Distribution(t.input_tokens, "traffic.input_tokens");
  if (is_set(t.output_tokens, "traffic.output_tokens")) c.Distribution(t.output_tokens, "traffic.output_tokens");
  c.Require(t.prefix.share >= 0 && t.prefix.share <= 1, "traffic.prefix.share",
            "must be between 0 and 1, got " + Checker::Num(t.prefix.share));
  c.Require(t.prefix.tokens >= 0 && t.prefix.tokens <= 100'000'000, "traffic.prefix.tokens", "must be >= 0");
  c.Require(t.prefix.share == 0 || t.prefix.tokens > 0, "traffic.prefix.tokens", "must be > 0 when share > 0");
  c.Require(t.prefix.distinct >= 1 && t.prefix.tenants >= 1, "traffic.prefix", "distinct and tenants must be >= 1");
  if (card.product.max_input_tokens > 0) {
    c.Require(t.prefix.tokens < card.product.max_input_tokens, "traffic.prefix.tokens",
              "must be below product.max_input_tokens (" + std::to_string(card.product.max_input_tokens) + ")");
  }
  if (t.sessions) {
    const SessionSpec& ss = *t.sessions;
    if (!t.agent_steps) c.Distribution(ss.turns, "traffic.sessions.turns");
    c.Require(ss.turns.kind != Distribution::Kind::kFixed || ss.turns.value <= 10'000, "traffic.sessions.turns",
              "must be at most 10000 calls per session");
    if (ss.think_time_ms && card.Has("traffic.sessions.think_time")) {
      c.Distribution(*ss.think_time_ms, "traffic.sessions.think_time");
    }
    c.Distribution(ss.new_message_tokens, "traffic.sessions.new_message_tokens");
    const std::string parallel = t.agent_parallel ? "traffic.agent_parallel" : "traffic.sessions.parallel";
    c.Distribution(ss.parallel, parallel);
    c.Require(ss.parallel.kind != Distribution::Kind::kFixed || (ss.parallel.value >= 1 && ss.parallel.value <= 256),
              parallel, "must be between 1 and 256 calls per step");
    c.Require(t.arrival.kind != K::kTrace, "traffic.sessions",
              "does not apply to a trace replay (a trace's requests are replayed as they are)");
  }
  const ProductSpec& p = card.product;
  if (p.max_context_tokens > 0 && p.max_input_tokens > 0) {
    c.Require(p.max_input_tokens <= p.max_context_tokens, "product.max_input_tokens",
              "exceeds product.max_context_tokens (" + std::to_string(p.max_context_tokens) + ")");
  }
  c.Require(p.timeout_s >= 0, "product.timeout", "must be >= 0");

  ValidatePrefillOnly(card, c);
  ValidateVision(card, c);
  ValidateTranscription(card, c);
  if (!p.PrefillOnly() && !p.streaming) {
    OnlyEndToEnd(card, c, "product.streaming is false (each answer arrives whole: TTFT = E2E, no ITL or TPOT)");
  }

  const SloSpec& s = card.slo;
  std::set<std::pair<std::string, double>> seen;
  for (const SloTarget& target : s.latency) {
    const std::string path = "slo." + target.metric;
    c.Require(target.percentile > 0 && target.percentile < 100, path, "percentile must be in (0, 100)");
    c.Require(target.threshold_ms > 0, path, "threshold must be > 0");
    c.Require(seen.insert({target.metric, target.percentile}).second, path,
              "p" + Checker::Num(target.percentile) + " is given twice (" + MetricShortName(target.metric) + " and " +
                  target.metric + " are the same metric)");
  }
  c.Require(s.attainment > 0 && s.attainment <= 1, "slo.attainment",
            "must be in (0, 1], got " + Checker::Num(s.attainment));
  if (s.availability) {
    c.Require(*s.availability > 0 && *s.availability <= 1, "slo.availability",
              "must be in (0, 1], e.g. 0.999; got " + Checker::Num(*s.availability));
  }
  if (s.min_output_tokens_per_s) c.Require(*s.min_output_tokens_per_s > 0, "slo.min_output_tokens_per_s", "must be > 0");
  if (s.recovery_s) c.Require(*s.recovery_s > 0, "slo.recovery", "must be > 0");

  const DeploymentSpec& d = card.deployment;
  c.Require(d.count >= 1 && d.tp >= 1 && d.ep >= 1 && d.replicas >= 1, "deployment", "count, tp, ep, replicas must be >= 1");
  c.Require(d.tp <= d.count, "deployment.tp",
            "tensor parallel degree " + std::to_string(d.tp) + " exceeds deployment.count " + std::to_string(d.count));
  c.Require(d.ep <= d.count, "deployment.ep",
            "expert parallel degree " + std::to_string(d.ep) + " exceeds deployment.count " + std::to_string(d.count));
  c.Require(card.quality.pass_threshold >= 0 && card.quality.pass_threshold <= 1, "quality.pass_threshold",
            "must be between 0 and 1, got " + Checker::Num(card.quality.pass_threshold));
  c.Require(card.bench.duration_s > 0, "bench.duration", "must be > 0");
  c.Require(card.bench.trials >= 1, "bench.trials", "must be >= 1");
  return c.status();
}

}  // namespace infereng::card
