// Routing and the endpoints: /v1/chat/completions, /v1/completions (admission control,
// output-length planning, fault draws), /v1/embeddings (a prefill-only engine request;
// serve/embeddings.h), /v1/rerank and /rerank (the same, of its query-document pairs;
// serve/rerank.h), /tokenize, /v1/models, /health, /version, /metrics,
// /clock (the server's wall clock, a reference for sharded load's clock offsets).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "infereng/version_info.h"
#include "serve/admission.h"
#include "serve/server_internal.h"

namespace infereng::serve {

namespace {

ApiError NotFound(std::string_view path) {
  return MakeApiError(404, fmt::format("no route for {}", path), "NotFoundError");
}

ApiError LoadingError() {
  return MakeApiError(503, "Loading model", "unavailable_error");
}

std::string SanitizeHeader(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 256)) {
    if (c >= 0x20 && c < 0x7f) out += c;
  }
  return out;
}

}  // namespace

void Server::Impl::Handle(ServerConnection& c, http::request<http::string_body>& req) {
  std::string_view target(req.target().data(), req.target().size());
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  auto xid = req.find("x-request-id");
  c.x_request_id = xid == req.end() ? std::string() : SanitizeHeader(std::string_view(xid->value().data(), xid->value().size()));
  const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;

  struct Route { std::string_view path; bool is_post; };
  static constexpr Route kRoutes[] = {{"/v1/chat/completions", true}, {"/v1/completions", true}, {"/v1/embeddings", true},
                                      {"/v1/rerank", true},           {"/rerank", true},          {"/tokenize", true},
                                      {"/v1/models", false},          {"/health", false},         {"/version", false},
                                      {"/metrics", false},            {"/clock", false},
                                      {"/v1/audio/transcriptions", true}};
  const Route* route = nullptr;
  for (const Route& r : kRoutes) {
    if (r.path == target) route = &r;
  }
  if (!route) return c.SendError(NotFound(target));
  if ((route->is_post && !post) || (!route->is_post && !get && req.method() != http::verb::head)) {
    return c.SendError(MakeApiError(405, fmt::format("method {} is not allowed on {} (use {})",
                                               std::string_view(req.method_string().data(), req.method_string().size()),
                                               target, route->is_post ? "POST" : "GET")));
  }

  if (target == "/v1/chat/completions") return HandleCompletion(c, req, Endpoint::kChat);
  if (target == "/v1/completions") return HandleCompletion(c, req, Endpoint::kCompletions);
  if (target == "/v1/embeddings") return HandleEmbeddings(c, req);
  if (target == "/v1/rerank" || target == "/rerank") return HandleRerank(c, req);
  if (target == "/v1/audio/transcriptions") return HandleTranscription(c, req);
  if (target == "/health") {
    if (Loading() && !options.ready_lies) return c.SendError(LoadingError());
    return c.SendResponse(200, "application/json", "");
  }
  if (target == "/clock") {  // a time reference for sharded load (bench/clock_sync.h, docs/scale-out.md)
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    return c.SendResponse(200, "application/json", fmt::format(R"({{"realtime_ns":{}}})", now));
  }
  if (target == "/version") {
    return c.SendResponse(200, "application/json", fmt::format(R"({{"version":"infereng-{}"}})", build::kVersion));
  }
  if (target == "/metrics") {
    return c.SendResponse(200, "text/plain; version=0.0.4; charset=utf-8",
                          metrics.Render(options.model_name, engine->Stats()));
  }
  if (target == "/v1/models") {
    nlohmann::json j = {{"object", "list"},
                        {"data",
                         {{{"id", options.model_name},
                           {"object", "model"},
                           {"created", created_unix},
                           {"owned_by", "infereng"},
                           {"root", options.model_name},
                           {"parent", nullptr},
                           {"max_model_len", max_model_len},
                           {"permission", nlohmann::json::array()}}}}};
    return c.SendResponse(200, "application/json", j.dump());
  }
  // /tokenize (vLLM shape; llama.cpp clients read "tokens" too)
  std::vector<uint32_t> ids;
  if (auto e = ParseTokenizeRequest(req.body(), ids)) return c.SendError(*e);
  nlohmann::json j = {{"count", ids.size()}, {"max_model_len", max_model_len}, {"tokens", ids}};
  c.SendResponse(200, "application/json", j.dump());
}

void Server::Impl::SendRefusal(ServerConnection& c, std::string_view why) {
  ++snap.requests_rejected;
  ++metrics.counters.rejected;
  ApiError e = OverloadError(options.overload_status, why);
  c.SendResponse(e.http_status, "application/json", e.ToJson(), RetryAfterHeader(options.retry_after));
}

void Server::Impl::HandleCompletion(ServerConnection& c, http::request<http::string_body>& req, Endpoint ep) {
  ++snap.requests_total;
  if (Loading()) return c.SendError(LoadingError());
  ParseLimits limits{.model_name = options.model_name, .max_model_len = max_model_len,
                     .default_max_tokens = options.default_max_tokens, .vision = engine->Vision()};
  ParseOutcome parsed = ParseCompletionRequest(req.body(), ep, limits);
  if (parsed.error) return c.SendError(*parsed.error);
  CompletionParams& p = parsed.params;

  const std::optional<Nanos> now_e = AdmitOrRefuse(c);
  if (!now_e) return;

  const uint64_t seq = next_seq++;
  const bool chat = ep == Endpoint::kChat;
  auto r = std::make_unique<ActiveRequest>(chat, ResponseId(chat ? 0 : 1, seq), created_unix, options.model_name);
  BeginRequest(*r, seq, p.stream, p.include_usage, p.continuous_usage);
  r->chat = chat;
  r->prompt_tokens = static_cast<int32_t>(p.prompt_ids.size());
  r->text_seed = Mix64(p.seed ? *p.seed ^ 0xabcdefULL : options.seed * 1000003ULL + seq);

  // Plan the output length: stop strings, then EOS (unless ignore_eos), then min_tokens.
  int32_t length = p.max_tokens;
  if (!p.ignore_eos && options.eos_mean_tokens > 0) {
    auto natural = static_cast<int32_t>(1 + Mix64(r->text_seed ^ 0xe05) % (2 * static_cast<uint64_t>(options.eos_mean_tokens)));
    natural = std::max(natural, p.min_tokens);
    if (natural < length) {
      length = natural;
      r->natural_stop = true;
    }
  }
  uint64_t eval_key = 0;
  if (const EvalAnswer* a = options.eval_answers ? options.eval_answers->Find(p.prompt_ids, &eval_key) : nullptr) {
    // An eval-set prompt: its answer (right with probability quality_accuracy), cut at max_tokens.
    const bool right = AnswerRight(options.seed, eval_key, eval_seen[eval_key]++, options.quality_accuracy);
    r->answer_tokens = AnswerTokens(right ? a->right : a->wrong);
    if (r->answer_tokens.empty()) r->answer_tokens.push_back(".");
    // A reasoning model thinks first: its reasoning tokens come before the answer's words.
    const int32_t thinking = chat ? engine->ReasoningTokensFor(INT32_MAX) : 0;
    const int64_t words = int64_t{thinking} + static_cast<int64_t>(r->answer_tokens.size());
    r->natural_stop = words <= p.max_tokens;
    r->stop = StopScan{.tokens = static_cast<int32_t>(std::min<int64_t>(words, p.max_tokens))};
  } else {
    r->stop = ScanForStop(r->text_seed, length, p.stop);
  }
  if (r->stop.stopped) {
    if (r->stop.tokens < p.min_tokens) {
      r->stop = StopScan{.tokens = length};  // min_tokens wins over stop strings, as in vLLM
    } else {
      r->stop_string = p.stop[static_cast<std::size_t>(r->stop.which)];
      r->natural_stop = false;
    }
  }
  r->output_tokens = r->stop.tokens;
  r->reasoning_tokens = chat ? engine->ReasoningTokensFor(r->output_tokens) : 0;
  if (Faulted(c, *r)) return;

  EngineRequest er{.id = seq, .prompt_tokens = r->prompt_tokens, .output_tokens = r->output_tokens,
                   .block_hashes = BlockHashes(p.prompt_ids, engine->BlockTokens()),
                   .block_tokens = engine->BlockTokens(), .image_begin = p.image_begin, .image_end = p.image_end,
                   .encoder_flops = p.images > 0 && engine->Vision() ? card::EncoderFlops(*engine->Vision(), p.image_patches) : 0};
  auto header = [&req](std::string_view name) {
    auto it = req.find(boost::beast::string_view(name.data(), name.size()));
    return it == req.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
  };
  SaltBlockHashes(er.block_hashes, TenantSalt(options.cache_isolation, ApiKeyOf(header("authorization"), header("x-api-key")),
                                              p.cache_salt));
  StartInEngine(c, std::move(r), er, *now_e, chat ? "messages" : "prompt");
}

void Server::Impl::BeginRequest(ActiveRequest& r, uint64_t seq, bool stream, bool include_usage, bool continuous) {
  r.seq = seq;
  r.stream = stream;
  r.include_usage = include_usage;
  r.continuous = continuous;
  r.t_arrival = WallNow();
  if (options.request_timeout > 0) r.deadline = r.t_arrival + options.request_timeout;
}

bool Server::Impl::Faulted(ServerConnection& c, ActiveRequest& r) {
  r.faults = DrawFaults(options.faults, options.seed, r.seq, r.output_tokens);
  if (!r.faults.error5xx) return false;
  c.SendError(MakeApiError(500, "injected fault: internal server error", "InternalServerError"));
  return true;
}

std::optional<Nanos> Server::Impl::AdmitOrRefuse(ServerConnection& c) {
  Nanos now_e = Sync();
  EngineStats stats = engine->Stats();
  if (options.max_waiting > 0 && stats.waiting >= options.max_waiting) {
    SendRefusal(c, fmt::format("{} requests are waiting (limit {})", stats.waiting, options.max_waiting));
    return std::nullopt;
  }
  return now_e;
}

void Server::Impl::StartInEngine(ServerConnection& c, std::unique_ptr<ActiveRequest> r, const EngineRequest& er,
                                 Nanos now_e, const char* param) {
  const uint64_t seq = r->seq;
  if (Status st = engine->Submit(er, now_e); !st.ok()) {
    if (st.code() == Status::Code::kResourceExhausted) {
      return SendRefusal(c, st.message());
    }
    return c.SendError(MakeApiError(400, st.message(), "invalid_request_error", param));
  }
  r->t_submit_e = now_e + engine->InboundDelay();  // when the engine itself saw it
  ArmEngineTimer();
  if (trace) trace->Register(seq, c.x_request_id);
  r->conn = &c;
  active.emplace(seq, r.get());
  ++snap.requests_active;
  if (r->stream) {
    std::string& s = scratch;
    s.assign("HTTP/1.1 200 OK\r\nServer: infereng\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
             "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n");
    if (!c.keep_alive) s += "Connection: close\r\n";
    if (!c.x_request_id.empty()) fmt::format_to(std::back_inserter(s), "x-request-id: {}\r\n", c.x_request_id);
    s += "\r\n";
    c.SendStream(s);
    if (options.sse_heartbeat > 0) ArmHeartbeat(*r);
  }
  c.active = std::move(r);
  c.keep_alive_ref = c.shared_from_this();
  if (options.request_timeout > 0) ArmSweep();
}

template <typename Fill>
void Server::Impl::StartPrefillOnly(ServerConnection& c, int64_t prompt_tokens, Nanos now_e, const char* param, Fill fill) {
  const uint64_t seq = next_seq++;
  auto r = std::make_unique<ActiveRequest>(false, ResponseId(1, seq), created_unix, options.model_name);
  r->seq = seq;
  r->chat = false;
  r->stream = false;
  r->prompt_tokens = static_cast<int32_t>(prompt_tokens);  // < max_model_len (the parsers)
  // Prefill only: the engine's one output step marks the end of the prefill; no text.
  r->output_tokens = 1;
  r->stop = StopScan{.tokens = 1};
  r->text_seed = seq;
  r->t_arrival = WallNow();
  if (options.request_timeout > 0) r->deadline = r->t_arrival + options.request_timeout;
  r->faults = DrawFaults(options.faults, options.seed, seq, r->output_tokens);
  if (r->faults.error5xx) {
    return c.SendError(MakeApiError(500, "injected fault: internal server error", "InternalServerError"));
  }
  // One sequence of the summed tokens, never cached: the items of a batch are unrelated texts.
  EngineRequest er{.id = seq, .prompt_tokens = r->prompt_tokens, .output_tokens = 1, .block_hashes = {},
                   .block_tokens = engine->BlockTokens()};
  fill(*r);
  StartInEngine(c, std::move(r), er, now_e, param);
}

void Server::Impl::HandleEmbeddings(ServerConnection& c, http::request<http::string_body>& req) {
  ++snap.requests_total;
  if (Loading()) return c.SendError(LoadingError());
  ParseLimits limits{.model_name = options.model_name, .max_model_len = max_model_len,
                     .default_max_tokens = options.default_max_tokens};
  EmbeddingsOutcome parsed = ParseEmbeddingsRequest(req.body(), limits);
  if (parsed.error) return c.SendError(*parsed.error);
  const std::optional<Nanos> now_e = AdmitOrRefuse(c);
  if (!now_e) return;
  const int64_t tokens = parsed.params.prompt_tokens;
  StartPrefillOnly(c, tokens, *now_e, "input", [&parsed](ActiveRequest& r) { r.embeddings = std::move(parsed.params); });
}

// A cross-encoder scores each (query, document) pair as one sequence: the request is the
// pairs' tokens in one prefill, as an embeddings batch is its inputs'.
void Server::Impl::HandleRerank(ServerConnection& c, http::request<http::string_body>& req) {
  ++snap.requests_total;
  if (Loading()) return c.SendError(LoadingError());
  ParseLimits limits{.model_name = options.model_name, .max_model_len = max_model_len,
                     .default_max_tokens = options.default_max_tokens};
  RerankOutcome parsed = ParseRerankRequest(req.body(), limits);
  if (parsed.error) return c.SendError(*parsed.error);
  const std::optional<Nanos> now_e = AdmitOrRefuse(c);
  if (!now_e) return;
  const int64_t tokens = parsed.params.prompt_tokens;
  StartPrefillOnly(c, tokens, *now_e, "documents", [&parsed](ActiveRequest& r) { r.rerank = std::move(parsed.params); });
}


// A transcription is one generation: the decoder's start tokens, the `prompt` field's and
// the clip's audio tokens make the prompt (the audio ones last, priced by the encoder as
// image tokens are), and the transcript's length follows from the clip (card/audio.h),
// capped by max_completion_tokens. The audio tokens are never cached: each clip is its own.
void Server::Impl::HandleTranscription(ServerConnection& c, http::request<http::string_body>& req) {
  ++snap.requests_total;
  if (Loading()) return c.SendError(LoadingError());
  const card::AudioModelSpec* audio = engine->Audio();
  if (!audio) {
    return c.SendError(MakeApiError(404, "The model does not support Transcriptions API (start serve with a "
                                         "transcription card: model.audio)", "NotFoundError"));
  }
  ParseLimits limits{.model_name = options.model_name, .max_model_len = max_model_len,
                     .default_max_tokens = options.default_max_tokens};
  auto ct = req.find(http::field::content_type);
  const std::string_view content_type = ct == req.end() ? std::string_view() : std::string_view(ct->value().data(), ct->value().size());
  TranscriptionOutcome parsed = ParseTranscriptionRequest(content_type, req.body(), limits, card::kMaxAudioMs);
  if (parsed.error) return c.SendError(*parsed.error);
  TranscriptionParams& p = parsed.params;
  const card::AudioCost cost = card::AudioCostFor(*audio, p.audio.duration_ms);
  const int64_t text_tokens = audio->prompt_tokens + static_cast<int64_t>(p.prompt_ids.size());
  const int64_t prompt = text_tokens + cost.tokens;
  int64_t output = card::TranscriptTokensFor(engine->TranscriptTokensPerSecond(), p.audio.duration_ms);
  if (p.max_completion_tokens) output = std::min<int64_t>(output, *p.max_completion_tokens);
  if (prompt + output > max_model_len) {
    return c.SendError(MakeApiError(400, fmt::format("the clip's {} audio tokens, {} prompt tokens and {} transcript tokens "
                                                     "exceed the model's context of {} tokens", cost.tokens, text_tokens,
                                                     output, max_model_len), "BadRequestError", "file"));
  }
  const std::optional<Nanos> now_e = AdmitOrRefuse(c);
  if (!now_e) return;

  const uint64_t seq = next_seq++;
  auto r = std::make_unique<ActiveRequest>(true, "trsc-" + ResponseId(0, seq).substr(9), created_unix, options.model_name,
                                           "transcription.chunk");
  BeginRequest(*r, seq, p.stream, p.include_usage, p.continuous_usage);
  r->chat = true;  // chat's delta shape (sse_format.h)
  r->prompt_tokens = static_cast<int32_t>(prompt);
  r->audio_tokens = static_cast<int32_t>(cost.tokens);
  r->output_tokens = static_cast<int32_t>(output);
  r->stop = StopScan{.tokens = r->output_tokens};
  r->natural_stop = !p.max_completion_tokens || output < *p.max_completion_tokens;  // the clip's end, not the cap
  r->text_seed = Mix64(options.seed * 1000003ULL + seq);
  if (Faulted(c, *r)) return;
  std::vector<uint32_t> text_ids(static_cast<std::size_t>(audio->prompt_tokens), 50258u);  // Whisper's <|startoftranscript|>
  text_ids.insert(text_ids.end(), p.prompt_ids.begin(), p.prompt_ids.end());
  EngineRequest er{.id = seq, .prompt_tokens = r->prompt_tokens, .output_tokens = r->output_tokens,
                   .block_hashes = BlockHashes(text_ids, engine->BlockTokens()),
                   .block_tokens = engine->BlockTokens(), .image_begin = static_cast<int32_t>(text_tokens),
                   .image_end = r->prompt_tokens, .encoder_flops = card::AudioEncoderFlops(*audio, cost.encoder_positions)};
  r->transcription = std::move(p);
  StartInEngine(c, std::move(r), er, *now_e, "file");
}

}  // namespace infereng::serve
