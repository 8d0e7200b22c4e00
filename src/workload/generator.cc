// Generator: arrivals x lengths x prefixes -> RequestSpec stream (see generator.h).
#include "workload/generator.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "card/limits.h"
#include "core/mix64.h"
#include "core/numeric.h"
#include "trace/conversation_linker.h"
#include "trace/replay.h"
#include "workload/arrivals.h"
#include "workload/lengths.h"

namespace infereng::workload {
namespace {

// Stream ids for StreamSeed: fixed forever so schedules stay reproducible across versions.
// Rerank draws its documents per request on kBatch (they are its items) and each
// document's tokens on kDocumentTokens; the query's on kInput.
enum Stream : uint64_t {
  kArrivals = 1, kInput = 2, kOutput = 3, kPrefix = 4, kRequest = 5, kBatch = 6, kImages = 7, kDocumentTokens = 8,
  kAudio = 9
};

Status CheckLengths(const card::Distribution& d, const char* path) {
  if (d.kind == card::Distribution::Kind::kFixed && d.value < 1) {
    return Status::InvalidArgument(std::string(path) + ": not set; the card needs a length distribution, e.g. {fixed: 512}");
  }
  return Status::Ok();
}

}  // namespace

struct Generator::Impl {
  Impl(const card::WorkloadCard& card, const GeneratorOptions& o)
      : opts(o),
        traffic(card.traffic),
        input(traffic.input_tokens, card.product.max_input_tokens),
        output(traffic.output_tokens, card.product.max_output_tokens),
        input_rng(StreamSeed(o.seed, kInput)),
        output_rng(StreamSeed(o.seed, kOutput)),
        prefix_rng(StreamSeed(o.seed, kPrefix)),
        offline(card.traffic.cls == card::TrafficSpec::Class::kOffline),
        embeddings(card.product.modality == "embeddings"),
        rerank(card.product.modality == "rerank"),
        batch_dist(rerank ? traffic.documents.value_or(card::Distribution::Fixed(1))
                          : traffic.batch_size.value_or(card::Distribution::Fixed(1))),
        batch(batch_dist, rerank ? card::kMaxRerankDocuments : card::kMaxEmbeddingBatch),
        batch_rng(StreamSeed(o.seed, kBatch)),
        document_dist(traffic.document_tokens.value_or(card::Distribution::Fixed(1))),
        document(document_dist, card.product.max_input_tokens),
        document_rng(StreamSeed(o.seed, kDocumentTokens)),
        images(traffic.images),
        image_dist(images ? images->count : card::Distribution::Fixed(1)),
        image_count(image_dist, card::kMaxImagesPerRequest),
        image_rng(StreamSeed(o.seed, kImages)),
        transcription(card.product.Transcription() && traffic.audio && card.model.audio),
        audio_ms_dist(transcription ? traffic.audio->seconds.Scaled(1000) : card::Distribution::Fixed(1)),
        audio_ms(audio_ms_dist, card::kMaxAudioMs),
        audio_rng(StreamSeed(o.seed, kAudio)),
        audio_model(card.model.audio.value_or(card::AudioModelSpec{})),
        transcript_tokens_per_s(traffic.audio ? traffic.audio->transcript_tokens_per_s : 0),
        max_output_tokens(card.product.max_output_tokens) {}

  GeneratorOptions opts;
  card::TrafficSpec traffic;  // owns the distributions the samplers point into
  LengthSampler input, output;
  Rng input_rng, output_rng, prefix_rng;
  bool offline;
  // Embeddings: a batch of inputs per request, each its own draw of input_tokens.
  bool embeddings;
  // Rerank: a query (a draw of input_tokens) and documents (a draw of documents, on the
  // batch stream), each its own draw of document_tokens.
  bool rerank;
  card::Distribution batch_dist;  // the sampler points into it (empirical samples)
  LengthSampler batch;
  Rng batch_rng;
  card::Distribution document_dist;
  LengthSampler document;
  Rng document_rng;
  // Vision: whether a request carries images (share) and how many, its own stream.
  std::optional<card::ImagesSpec> images;
  card::Distribution image_dist;  // the sampler points into it (empirical samples)
  LengthSampler image_count;
  Rng image_rng;
  int32_t tokens_per_image = 0;  // the model's rule at the card's image size
  // Transcription: one clip per request, its length in ms drawn on its own stream; the
  // prompt is the decoder's start tokens and the clip's audio tokens, the output its
  // transcript (card/audio.h).
  bool transcription;
  card::Distribution audio_ms_dist;  // traffic.audio.seconds in ms (the sampler points into it)
  LengthSampler audio_ms;
  Rng audio_rng;
  card::AudioModelSpec audio_model;
  double transcript_tokens_per_s;
  int64_t max_output_tokens;  // product.max_output_tokens (0: none)
  std::unique_ptr<ArrivalProcess> arrivals;  // synthetic open loop
  std::optional<trace::ReplaySource> trace;  // trace replay
  trace::TraceRecord record;                 // reused per request (its hash_ids)
  double trace_origin_s = 0, trace_speed = 1;
  int32_t trace_block_tokens = 512;
  // Trace sessions (traffic.arrival.sessions): each request's session as a dense id, in
  // order of first appearance; a request without one is a session of its own.
  bool trace_sessions = false;
  std::optional<trace::ConversationLinker> linker;  // no session ids: conversations from hash_ids
  std::unordered_map<std::string, int64_t> session_ids;
  int64_t next_session = 0;
  double mean_rate = 0;
  uint64_t next_index = 0;
  bool done = false;
  Status status;

  std::optional<RequestSpec> Next();
};

std::optional<RequestSpec> Generator::Impl::Next() {
  if (done) return std::nullopt;
  if (opts.max_requests && next_index >= *opts.max_requests) {
    done = true;
    return std::nullopt;
  }
  RequestSpec r;
  r.index = next_index;
  r.offline = offline;
  r.seed = StreamSeed(opts.seed, kRequest + (next_index << 8));
  if (trace) {
    auto more = trace->Next(&record);
    if (!more.ok() || !*more) {
      if (!more.ok()) status = more.status();
      done = true;
      return std::nullopt;
    }
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos((record.t_s - trace_origin_s) / trace_speed);
    r.input_tokens = input.Clamp(static_cast<double>(record.input_tokens));
    r.output_tokens = output.Clamp(static_cast<double>(record.output_tokens));
    if (embeddings) {
      // A row is one /v1/embeddings request of the row's input tokens, split into the row's
      // items (its batch-size column) or, when the trace has none, the card's batch_size
      // (default 1), as evenly as whole tokens allow (never more inputs than tokens), each
      // input then held to the card's input limits. No output, no prefix blocks.
      const auto total = static_cast<int32_t>(std::clamp<int64_t>(record.input_tokens, 1, INT32_MAX / 2));
      const int32_t n = record.items > 0 ? static_cast<int32_t>(std::min<int64_t>(record.items, total))
                                         : std::min(batch.Sample(batch_rng), total);
      r.item_tokens.assign(static_cast<size_t>(n), total / n);
      for (int32_t k = 0; k < total % n; ++k) ++r.item_tokens[static_cast<size_t>(k)];
      int64_t sum = 0;
      for (int32_t& t : r.item_tokens) sum += t = input.Clamp(t);
      r.input_tokens = static_cast<int32_t>(std::min<int64_t>(sum, INT32_MAX));
      r.output_tokens = 0;
    } else if (!record.hash_ids.empty()) {
      r.block_ids = record.hash_ids;
      r.block_tokens = trace_block_tokens;
    }
    if (trace_sessions) {
      if (linker) {
        r.session = linker->Link(record.hash_ids, record.input_tokens, record.t_s);
      } else if (record.session.empty()) {
        r.session = next_session++;
      } else {
        const auto [it, fresh] = session_ids.try_emplace(record.session, next_session);
        if (fresh) ++next_session;
        r.session = it->second;
      }
    }
  } else if (rerank) {
    // Each item is one (query, document) pair: the query's tokens plus the document's.
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos(arrivals->Next());
    r.query_tokens = input.Sample(input_rng);
    const int32_t n = batch.Sample(batch_rng);
    r.item_tokens.reserve(static_cast<size_t>(n));
    int64_t total = 0;
    for (int32_t k = 0; k < n; ++k) {
      r.item_tokens.push_back(r.query_tokens + document.Sample(document_rng));
      total += r.item_tokens.back();
    }
    r.input_tokens = static_cast<int32_t>(std::min<int64_t>(total, INT32_MAX));
    r.output_tokens = 0;
  } else if (transcription) {
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos(arrivals->Next());
    r.audio_ms = audio_ms.Sample(audio_rng);
    r.audio_tokens = static_cast<int32_t>(std::min<int64_t>(card::AudioCostFor(audio_model, r.audio_ms).tokens, INT32_MAX / 2));
    r.input_tokens = static_cast<int32_t>(std::max<int64_t>(1, audio_model.prompt_tokens));
    // The rule serve applies to the clip it receives, capped as the product caps it.
    r.output_tokens = card::TranscriptTokensFor(transcript_tokens_per_s, r.audio_ms);
    if (max_output_tokens > 0) r.output_tokens = static_cast<int32_t>(std::min<int64_t>(r.output_tokens, max_output_tokens));
  } else if (embeddings) {
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos(arrivals->Next());
    const int32_t n = batch.Sample(batch_rng);
    r.item_tokens.reserve(static_cast<size_t>(n));
    int64_t total = 0;
    for (int32_t k = 0; k < n; ++k) {
      r.item_tokens.push_back(input.Sample(input_rng));
      total += r.item_tokens.back();
    }
    r.input_tokens = static_cast<int32_t>(std::min<int64_t>(total, INT32_MAX));
    r.output_tokens = 0;
  } else {
    if (!opts.closed_loop) r.t_arrival = SecondsToNanos(arrivals->Next());
    r.input_tokens = input.Sample(input_rng);
    r.output_tokens = output.Sample(output_rng);
  }
  if (opts.horizon && r.t_arrival >= *opts.horizon && !opts.closed_loop) {
    done = true;
    return std::nullopt;
  }
  // Tenant and shared prefix: always two draws per request, so the prefix stream stays
  // aligned with the request index whatever the share.
  const card::PrefixSpec& p = traffic.prefix;
  r.tenant = static_cast<int32_t>(prefix_rng.Below(static_cast<uint64_t>(p.tenants)));
  const double u = prefix_rng.Uniform();
  const auto k = static_cast<int32_t>(prefix_rng.Below(static_cast<uint64_t>(p.distinct)));
  // A trace's prefix structure is its own (its hash_ids, or none): the card's synthetic
  // prefixes do not apply to a replay.
  if (u < p.share && p.tokens > 0 && !trace) {
    r.prefix_id = r.tenant * p.distinct + k;  // disjoint ranges per tenant: no cross-tenant sharing
    r.prefix_tokens = static_cast<int32_t>(p.tokens);
    r.input_tokens = std::max(r.input_tokens, r.prefix_tokens + 1);
  }
  if (images) {
    // Always two draws per request, so the stream stays aligned whatever the share.
    const double v = image_rng.Uniform();
    const int32_t n = image_count.Sample(image_rng);
    if (v < images->share) {
      r.images = n;
      r.image_tokens = static_cast<int32_t>(std::min<int64_t>(int64_t{n} * tokens_per_image, INT32_MAX / 2));
    }
  }
  ++next_index;
  return r;
}

Result<Generator> Generator::FromCard(const card::WorkloadCard& card, uint64_t seed) {
  return FromCard(card, GeneratorOptions{.seed = seed});
}

Result<Generator> Generator::FromCard(const card::WorkloadCard& card, const GeneratorOptions& options) {
  if (!(options.rate_scale > 0) || !std::isfinite(options.rate_scale)) {
    return Status::InvalidArgument("rate scale must be > 0");
  }
  const card::TrafficSpec& t = card.traffic;
  const card::PrefixSpec& p = t.prefix;
  if (p.tenants < 1 || p.distinct < 1 || static_cast<int64_t>(p.tenants) * p.distinct > INT32_MAX) {
    return Status::InvalidArgument("traffic.prefix: tenants x distinct must be between 1 and 2^31");
  }
  if (p.tokens < 0 || p.tokens > INT32_MAX - 1) return Status::InvalidArgument("traffic.prefix.tokens out of range");
  const bool is_trace = t.arrival.kind == card::ArrivalSpec::Kind::kTrace;
  if (card.product.Transcription()) {
    if (!t.audio) return Status::InvalidArgument("traffic.audio: not set; a transcription card needs its clips, e.g. {seconds: {p50: 8, p99: 45}}");
    if (!card.model.audio) return Status::InvalidArgument("model.audio: not set; a transcription card needs the model's audio-token rule");
    if (is_trace) return Status::InvalidArgument("trace replay is not modelled for a transcription card yet (a trace row has no audio)");
  } else if (!is_trace) {
    INFERENG_RETURN_IF_ERROR(CheckLengths(t.input_tokens, "traffic.input_tokens"));
    if (!card.product.PrefillOnly()) {
      INFERENG_RETURN_IF_ERROR(CheckLengths(t.output_tokens, "traffic.output_tokens"));
    }
    if (card.product.modality == "rerank") {
      if (!t.document_tokens) return Status::InvalidArgument("traffic.document_tokens: not set; a rerank card needs each document's tokens, e.g. {fixed: 256}");
      INFERENG_RETURN_IF_ERROR(CheckLengths(*t.document_tokens, "traffic.document_tokens"));
    }
  } else if (card.product.modality == "rerank") {
    return Status::InvalidArgument("trace replay is not modelled for a rerank card yet (a trace row has no query and documents)");
  }
  auto impl = std::make_unique<Impl>(card, options);
  if (t.images) {
    if (!card.model.vision) return Status::InvalidArgument("traffic.images: needs model.vision (the model's image-token rule)");
    INFERENG_ASSIGN_OR_RETURN(card::ImageCost cost, card::ImageCostFor(*card.model.vision, t.images->width, t.images->height));
    impl->tokens_per_image = static_cast<int32_t>(std::min<int64_t>(cost.tokens, INT32_MAX / 2));
  }
  if (is_trace) {
    const double speed = t.arrival.trace_speed * options.rate_scale;
    if (!(speed > 0)) return Status::InvalidArgument("traffic.arrival.speed must be > 0");
    const trace::ReplayOptions ro = ReplayOptionsFor(t.arrival);
    INFERENG_ASSIGN_OR_RETURN(ReplayInfo info, ScanTraceReplay(t.arrival));
    INFERENG_ASSIGN_OR_RETURN(trace::ReplaySource source, trace::ReplaySource::Open(t.arrival.trace_file, ro));
    impl->trace.emplace(std::move(source));
    impl->trace_origin_s = info.first_t_s;
    impl->trace_speed = speed;
    impl->trace_block_tokens = static_cast<int32_t>(info.block_tokens);
    impl->trace_sessions = !t.arrival.trace_sessions.empty();
    if (impl->trace_sessions && info.session_records == 0) {
      // No session ids: the conversations the hash_ids imply (trace/conversation_linker.h),
      // linked over the window as ScanReplay counted them. Neither: every request would be
      // a session of its own, which is no session replay at all.
      if (!info.has_hashes) {
        return Status::InvalidArgument(fmt::format(
            "traffic.arrival.sessions: {} has no session ids and no hash_ids to infer conversations from in the "
            "replayed window; give it a column named session, session_id, conversation, conversation_id or chat_id, or "
            "replay without sessions",
            t.arrival.trace_file));
      }
      impl->linker.emplace(info.block_tokens);
    }
    const double span = (info.last_t_s - info.first_t_s) / speed;
    // Every arrival offset is at most the span; checking it here keeps the nanosecond
    // conversion in Next() in range (a double beyond int64 would be an undefined cast).
    if (!DoubleToInt64(std::trunc(span * 1e9))) {
      return Status::InvalidArgument(fmt::format("{}: the trace spans {:g} s at speed {:g}: over ~292 years of nanoseconds",
                                                 t.arrival.trace_file, span, speed));
    }
    impl->mean_rate = span > 0 ? static_cast<double>(info.requests - 1) / span : 0;
  } else {
    if (!(t.arrival.rate_rps > 0)) return Status::InvalidArgument("traffic.arrival.rate must be > 0");
    impl->arrivals = MakeArrivalProcess(t.arrival, options.rate_scale, StreamSeed(options.seed, kArrivals));
    impl->mean_rate = MeanArrivalRate(t.arrival, options.rate_scale);
  }
  if (options.closed_loop) impl->mean_rate = 0;
  return Generator(std::move(impl));
}

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::Generator(Generator&&) noexcept = default;
Generator& Generator::operator=(Generator&&) noexcept = default;
Generator::~Generator() = default;

std::optional<RequestSpec> Generator::Next() { return impl_->Next(); }
const Status& Generator::status() const { return impl_->status; }
double Generator::MeanRate() const { return impl_->mean_rate; }

RequestSpec EmbeddingItemSpec(const RequestSpec& spec, size_t k) {
  RequestSpec item;
  item.index = kEmbeddingItemIndexBit | (spec.index << 11) | k;
  item.t_arrival = spec.t_arrival;
  item.input_tokens = spec.item_tokens.at(k) - spec.query_tokens;
  item.tenant = spec.tenant;
  item.offline = spec.offline;
  item.seed = Mix64(spec.seed ^ (0x6974656d00000000ULL + k));
  return item;
}

RequestSpec RerankQuerySpec(const RequestSpec& spec) {
  constexpr size_t kQueryItem = 2047;  // above every document's k (< kMaxRerankDocuments)
  static_assert(static_cast<size_t>(card::kMaxRerankDocuments) < kQueryItem);
  RequestSpec q;
  q.index = kEmbeddingItemIndexBit | (spec.index << 11) | kQueryItem;
  q.t_arrival = spec.t_arrival;
  q.input_tokens = spec.query_tokens;
  q.tenant = spec.tenant;
  q.offline = spec.offline;
  q.seed = Mix64(spec.seed ^ (0x7175657279000000ULL));
  return q;
}

trace::ReplayOptions ReplayOptionsFor(const card::ArrivalSpec& arrival) {
  trace::ReplayOptions ro;
  // An unknown format name is refused by ScanTraceReplay (and before it by the card parser
  // and --trace-format); here it leaves auto.
  if (Result<trace::Format> f = trace::ParseFormat(arrival.trace_format.empty() ? "auto" : arrival.trace_format); f.ok()) {
    ro.reader.format = *f;
  }
  ro.window = {.start_s = arrival.trace_start_s, .duration_s = arrival.trace_duration_s,
               .requests = arrival.trace_requests};
  ro.block_tokens = arrival.trace_block_tokens;
  return ro;
}

Result<ReplayInfo> ScanTraceReplay(const card::ArrivalSpec& arrival) {
  if (arrival.kind != card::ArrivalSpec::Kind::kTrace) return Status::InvalidArgument("the card replays no trace");
  if (Result<trace::Format> f = trace::ParseFormat(arrival.trace_format.empty() ? "auto" : arrival.trace_format); !f.ok()) {
    return Status::InvalidArgument("--trace-format: unknown format \"" + arrival.trace_format +
                                   "\"; expected auto, azure, mooncake, burstgpt, csv or jsonl");
  }
  return trace::ScanReplay(arrival.trace_file, ReplayOptionsFor(arrival));
}

Result<card::ArrivalSpec> ScaleRate(const card::ArrivalSpec& arrival, double k) {
  if (!(k > 0) || !std::isfinite(k)) return Status::InvalidArgument("rate scale must be > 0, got " + std::to_string(k));
  card::ArrivalSpec out = arrival;
  out.rate_rps *= k;
  out.trace_speed *= k;
  return out;
}

}  // namespace infereng::workload
