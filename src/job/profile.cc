#include "job/profile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <ctime>
#include <thread>

#include <nlohmann/json.hpp>

#include "client/prometheus.h"
#include "infereng/version_info.h"
#include "job/probe.h"
#include "job/probe_client.h"
#include "job/profile_fit.h"
#include "twin/llamacpp_kv.h"

namespace infereng::job {

namespace {

using twin::ProfilePoint;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// usage.prompt_tokens of a non-streamed answer (the server's own count, chat template
// included); nullopt when the body does not carry it.
std::optional<int64_t> UsagePromptTokens(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("usage") && j["usage"].is_object() && j["usage"].contains("prompt_tokens") &&
      j["usage"]["prompt_tokens"].is_number_integer()) {
    return j["usage"]["prompt_tokens"].get<int64_t>();
  }
  return std::nullopt;
}

// One measured call: TTFT and the mean decode step after the first token.
struct Sample {
  double ttft_s = 0;
  double step_s = 0;         // 0 when fewer than two tokens came back
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

class Profiler {
 public:
  explicit Profiler(const ProfileOptions& o)
      : o_(o), pc_(o.client, ProbeBudget{.max_requests = o.max_requests, .max_time = o.budget}) {}

  Result<twin::ProfileFile> Run();

 private:
  // `slot` >= 0 pins the request to that llama.cpp slot (its `id_slot` request field).
  std::string Body(int words, int max_tokens, bool stream = true, int slot = -1) {
    nlohmann::json j = {{"messages", {{{"role", "user"}, {"content", ProbeContext::Words(words, ++salt_ + run_salt_)}}}},
                        {"max_tokens", max_tokens},
                        {"stream", stream},
                        {"ignore_eos", true},
                        {"temperature", 0}};
    if (!model_.empty()) j["model"] = model_;
    if (slot >= 0) {
      // Pinned (the occupancy phase): the slot's old cells all go, so the replay of the
      // server's cell allocation knows what each request frees (MeasureOccupancy).
      j["id_slot"] = slot;
      j["cache_prompt"] = false;
    }
    if (stream) j["stream_options"] = {{"include_usage", true}};
    return j.dump();
  }
  // `batch` concurrent requests of `words` words; Unavailable/ResourceExhausted end the
  // profile, a failed call is a ProtocolError (the phase ends, the profile backs off).
  Result<std::vector<Sample>> Measure(int words, int max_tokens, int batch, int slot = -1);
  // 5. llama.cpp: the step over (batch tokens, KV span attended), see MeasureOccupancy.
  Status MeasureOccupancy(double front_end_s);
  // Leaves `slot` holding a `words`-word prompt (a 1-token, non-streamed request pinned to
  // it); the prompt's tokens as the server counts them.
  Result<int64_t> Fill(int slot, int words);
  // Empties every slot's cells (llama-server's POST /slots/N?action=erase, served only when
  // it runs with --slot-save-path); false when any slot was not erased.
  bool EraseSlots();
  // Prompt tokens of a `words`-word prompt as the server counts them (chat template
  // included): usage.prompt_tokens of one non-streamed 1-token request, once per length
  // (streamed usage is not in the probe client's facts). `words` when not reported.
  int64_t PromptTokens(int words, int slot = -1);
  void Discover();
  void BackOff();
  bool Alive() const { return failed_phases_ < 2 && pc_.time_left() > 0; }

  const ProfileOptions& o_;
  ProbeClient pc_;
  std::string model_;
  uint64_t salt_ = 0;
  // Differs from run to run (the clock), so a second profile of the same server finds none
  // of the first one's prompts in its caches (llama-server b11669 keeps them in host memory:
  // a 472-token prefill measured 9 ms instead of 539 ms on a second profile with the same seed).
  uint64_t run_salt_ = static_cast<uint64_t>(ProbeClient::SteadyNowNs()) * 7919 + o_.seed;
  int failed_phases_ = 0;
  Nanos backoff_ = kNanosPerSecond;
  twin::ProfileFile p_;
  std::map<int, int64_t> prompt_tokens_;
  int slots_ = 0;            // llama.cpp's /props total_slots (0: not a slot server)
  int64_t slot_ctx_ = 0;     // one slot's context (its /props n_ctx)
};

int64_t Profiler::PromptTokens(int words, int slot) {
  auto it = prompt_tokens_.find(words);
  if (it != prompt_tokens_.end()) return it->second;
  int64_t n = words;
  auto r = pc_.Call(CallSpec{.body = Body(words, 1, false, slot), .sse = false});
  if (r.ok() && r->ok()) n = UsagePromptTokens(r->body).value_or(n);
  prompt_tokens_[words] = n;
  return n;
}

Result<std::vector<Sample>> Profiler::Measure(int words, int max_tokens, int batch, int slot) {
  std::vector<CallSpec> specs;
  for (int i = 0; i < batch; ++i) specs.push_back(CallSpec{.body = Body(words, max_tokens, true, slot)});
  INFERENG_ASSIGN_OR_RETURN(std::vector<CallResult> rs, pc_.Batch(std::move(specs)));
  std::vector<Sample> out;
  for (const CallResult& r : rs) {
    if (!r.ok() || r.t_first_token < 0) {
      if (r.status == 0 && r.error == metrics::ErrorClass::kConnect) {
        return Status::Unavailable("the target stopped answering: " + r.error_message);
      }
      if (r.ok()) {
        // A 200 whose stream never carried text (a model that emits only tokens rendering as
        // nothing): no TTFT and no step can be read from it.
        return Status::ProtocolError("HTTP " + std::to_string(r.status) + ", but the stream carried no content (" +
                                     std::to_string(r.usage_completion) + " completion tokens by its usage)");
      }
      return Status::ProtocolError("HTTP " + std::to_string(r.status) + (r.error_message.empty() ? "" : ": " + r.error_message));
    }
    Sample s;
    s.ttft_s = static_cast<double>(r.ttft()) / 1e9;
    // The server's own count of this prompt (streamed usage), else the per-length count.
    s.prompt_tokens = r.usage_prompt > 0 ? r.usage_prompt : PromptTokens(words, slot);
    if (r.usage_prompt > 0) prompt_tokens_.emplace(words, r.usage_prompt);
    s.completion_tokens = r.usage_completion > 0 ? r.usage_completion : static_cast<int64_t>(r.chunk_times.size());
    s.step_s = DecodeStepSeconds(r.chunk_times, s.completion_tokens);
    out.push_back(s);
  }
  return out;
}

void Profiler::BackOff() {
  ++failed_phases_;
  const Nanos wait = std::min(backoff_, std::max<Nanos>(0, pc_.time_left()));
  std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
  backoff_ *= 2;
}

void Profiler::Discover() {
  model_ = o_.model;
  auto r = pc_.Get("/v1/models");
  if (r.ok() && r->status == 200) {
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty()) {
      const auto& m = j["data"][0];
      if (model_.empty() && m.contains("id") && m["id"].is_string()) model_ = m["id"].get<std::string>();
      if (m.contains("owned_by") && m["owned_by"].is_string()) p_.provenance.engine = m["owned_by"].get<std::string>();
    }
  }
  if (auto v = pc_.Get("/version"); v.ok() && v->status == 200) {
    auto j = nlohmann::json::parse(v->body, nullptr, false);
    if (j.is_object() && j.contains("version") && j["version"].is_string()) p_.provenance.engine = j["version"].get<std::string>();
  }
  // KV capacity: llama.cpp's /props (one slot's n_ctx x its slots: the cache they share).
  if (auto v = pc_.Get("/props"); v.ok() && v->status == 200) {
    const nlohmann::json props = nlohmann::json::parse(v->body, nullptr, false);
    p_.kv_capacity_tokens = KvCapacityFromProps(props);
    if (props.is_object() && props.contains("total_slots") && props["total_slots"].is_number_integer() &&
        p_.kv_capacity_tokens) {
      slots_ = static_cast<int>(std::clamp<int64_t>(props["total_slots"].get<int64_t>(), 0, 64));
      slot_ctx_ = slots_ > 0 ? *p_.kv_capacity_tokens / slots_ : 0;
    }
  }
  if (!p_.kv_capacity_tokens) p_.notes.push_back("KV capacity: not exposed by the target (no /props n_ctx)");
}

Result<twin::ProfileFile> Profiler::Run() {
  p_.provenance = {.target = o_.target, .engine = "", .model = "", .date = UtcNow(), .infereng_version = build::kVersion};
  Discover();
  p_.provenance.model = model_;
  const int repeats = std::max(1, o_.repeats);
  // 2. A warm-up request, not measured: the first request pays for the connection, the
  // server's first allocations (and on a GPU engine, lazy kernel and graph set-up), which
  // would otherwise land in the smallest points and bias the step overhead up.
  if (Alive()) {
    auto w = Measure(1, o_.decode_tokens, 1);
    if (!w.ok() && w.status().code() == Status::Code::kUnavailable) return w.status();
  }
  // Then a tiny prompt: the front end and the batch-1 decode step.
  std::vector<double> fe, step;
  int64_t tiny_tokens = 1, tiny_out = o_.decode_tokens;
  for (int i = 0; i < repeats && Alive(); ++i) {
    auto s = Measure(1, o_.decode_tokens, 1);
    if (!s.ok()) {
      if (s.status().code() == Status::Code::kUnavailable) return s.status();
      if (s.status().code() == Status::Code::kResourceExhausted) break;
      p_.notes.push_back("tiny prompt: " + s.status().message());
      BackOff();
      break;
    }
    fe.push_back(s->front().ttft_s);
    if (s->front().step_s > 0) step.push_back(s->front().step_s);
    tiny_tokens = s->front().prompt_tokens;
    tiny_out = s->front().completion_tokens;
  }
  if (fe.empty()) return Status::Unavailable("the target answered no request (see the notes)");
  p_.points.push_back({"front_end", tiny_tokens, 0, 1, Median(fe), static_cast<int32_t>(fe.size())});
  const double step1 = Median(step);
  if (!step.empty()) {
    p_.points.push_back({"decode_context", 1, tiny_tokens + tiny_out / 2, 1, step1, static_cast<int32_t>(step.size())});
  }
  // 3. Growing prompts, batch 1: prefill and decode vs context.
  for (int words = 64; words <= o_.max_prompt_words && Alive(); words *= 4) {
    std::vector<double> ttft, st;
    int64_t n = words, out = o_.decode_tokens;
    Status phase = Status::Ok();
    for (int i = 0; i < repeats && phase.ok(); ++i) {
      auto s = Measure(words, o_.decode_tokens, 1);
      if (!s.ok()) {
        phase = s.status();
        break;
      }
      ttft.push_back(s->front().ttft_s);
      if (s->front().step_s > 0) st.push_back(s->front().step_s);
      n = s->front().prompt_tokens;
      out = s->front().completion_tokens;
    }
    if (!ttft.empty()) p_.points.push_back({"prefill", n, 0, 1, Median(ttft), static_cast<int32_t>(ttft.size())});
    if (!st.empty()) p_.points.push_back({"decode_context", 1, n + out / 2, 1, Median(st), static_cast<int32_t>(st.size())});
    if (!phase.ok()) {
      if (phase.code() == Status::Code::kUnavailable) return phase;
      if (phase.code() == Status::Code::kResourceExhausted) break;
      p_.notes.push_back("prompts of " + std::to_string(words) + " words: " + phase.message() + "; longer prompts skipped");
      BackOff();
      break;
    }
    if (step1 > 0 && !st.empty() && Median(st) > 10 * step1) break;
    if (words < o_.max_prompt_words && words * 4 > o_.max_prompt_words) words = o_.max_prompt_words / 4;
  }
  // 4. Concurrent tiny-prompt streams: decode step vs batch.
  for (int b = 2; b <= o_.max_batch && Alive(); b *= 2) {
    // `repeats` rounds; a round's step is the median over its streams, the point's the
    // median over rounds (one round a host stall spoiled does not move it).
    std::vector<double> rounds;
    int64_t held = 0;
    Status phase = Status::Ok();
    for (int r = 0; r < repeats && Alive(); ++r) {
      auto s = Measure(1, o_.decode_tokens, b);
      if (!s.ok()) {
        phase = s.status();
        break;
      }
      std::vector<double> st;
      held = 0;
      for (const Sample& x : *s) {
        if (x.step_s > 0) st.push_back(x.step_s);
        held += x.prompt_tokens + x.completion_tokens / 2;
      }
      if (!st.empty()) rounds.push_back(Median(st));
    }
    if (!rounds.empty()) {
      p_.points.push_back({"decode_batch", b, held, b, Median(rounds), static_cast<int32_t>(rounds.size())});
    }
    if (!phase.ok()) {
      if (phase.code() == Status::Code::kUnavailable) return phase;
      if (phase.code() == Status::Code::kResourceExhausted) break;
      p_.notes.push_back("batch " + std::to_string(b) + ": " + phase.message() + "; larger batches skipped");
      BackOff();
      break;
    }
    if (rounds.empty()) continue;
    if (step1 > 0 && Median(rounds) > 10 * step1) {
      p_.notes.push_back("batch " + std::to_string(b) + ": decode step 10x batch 1's; larger batches skipped");
      break;
    }
  }
  // 5. A slot server's unified KV cache: the step over the cells the other slots hold.
  if (o_.occupancy && slots_ >= 2 && Alive()) {
    const Status st = MeasureOccupancy(Median(fe) - step1);
    if (st.code() == Status::Code::kUnavailable) return st;
    if (!st.ok()) p_.notes.push_back("occupancy: " + st.message());
  } else if (o_.occupancy && slots_ < 2) {
    p_.notes.push_back("occupancy: not measured (the target reports no slots in /props: not a llama.cpp-like server)");
  }
  if (pc_.time_left() <= 0 || pc_.used() >= o_.max_requests) p_.notes.push_back("budget spent: the profile is partial");
  INFERENG_RETURN_IF_ERROR(FitProfile(&p_));
  return p_;
}

Result<int64_t> Profiler::Fill(int slot, int words) {
  auto r = pc_.Call(CallSpec{.body = Body(words, 1, false, slot), .sse = false});
  if (!r.ok()) return r.status();
  if (!r->ok()) {
    if (r->status == 0 && r->error == metrics::ErrorClass::kConnect) {
      return Status::Unavailable("the target stopped answering: " + r->error_message);
    }
    return Status::ProtocolError("filling slot " + std::to_string(slot) + ": HTTP " + std::to_string(r->status) +
                                 (r->error_message.empty() ? "" : ": " + r->error_message));
  }
  return UsagePromptTokens(r->body).value_or(PromptTokens(words));
}

bool Profiler::EraseSlots() {
  bool all = true;
  for (int i = 0; i < slots_; ++i) {
    auto r = pc_.Call(CallSpec{.path = "/slots/" + std::to_string(i) + "?action=erase", .body = "{}", .sse = false});
    all = all && r.ok() && r->ok();
  }
  return all;
}

// The profile's own pinned requests through llama.cpp's cell allocator (twin/llamacpp_kv.h),
// as llama-server runs them: with cache_prompt off, a request first frees every cell of
// its slot, then its prompt goes in ubatches of 512 (b4748's default -ub), then each
// generated token but the last is decoded into one more cell. Returns the span (the cells
// attention runs over) of the prompt's last ubatch and of the middle decode step.
struct ReplayedSpans {
  int64_t prefill = 0;
  int64_t decode = 0;
};
ReplayedSpans ReplayRequest(twin::LlamaCppKvCells& kv, int slot, int64_t prompt, int64_t completion) {
  constexpr int64_t kUbatch = 512;
  ReplayedSpans out;
  kv.SeqRm(slot, 0, -1);
  for (int64_t pos = 0; pos < prompt; pos += kUbatch) {
    const twin::LlamaCppKvCells::Run run{slot, static_cast<int32_t>(pos), static_cast<int32_t>(std::min(kUbatch, prompt - pos))};
    out.prefill = kv.Decode({&run, 1});
  }
  kv.EndBatch();
  std::vector<int64_t> spans;
  for (int64_t i = 0; i + 1 < completion; ++i) {
    const twin::LlamaCppKvCells::Run run{slot, static_cast<int32_t>(prompt + i), 1};
    spans.push_back(kv.Decode({&run, 1}));
    kv.EndBatch();
  }
  if (!spans.empty()) out.decode = spans[spans.size() / 2];
  return out;
}

// llama.cpp (b4748) keeps every slot's cells in one cache after its request ends, and each
// step attends over the cells up to the highest used one (FIDELITY.md (b3)): a step's time
// grows with the span of the cache that earlier prompts, the idle slots' included, left
// behind. Rows: k = 0 .. S-1 of the other slots filled with a long prompt (three quarters
// of a slot; the rest with a one-word prompt), so the spans reach most of the cache; each
// request pinned with `id_slot` so the measured slot (the last) never evicts a filled one.
// Columns: a batch-1 decode step (a one-word prompt, its step
// from the chunk times) and batch-1 prefills of an eighth and a third of a slot's context
// (TTFT less the front end), at most one ubatch. Each point records the span of its step,
// from a replay of the phase's requests through llama.cpp's cell allocator
// (ReplayRequest), starting from a cache whose slots were all erased; a server that does
// not erase (no --slot-save-path) leaves the start state unknown, and the replay assumes an
// empty cache (a note says so). FitProfileTable turns the points into the grid. A failed
// request ends the phase with the points it has (a note).
Status Profiler::MeasureOccupancy(double front_end_s) {
  const int measured = slots_ - 1;
  // Sizes in tokens of a slot's context, turned into words at the server's own rate (its
  // tokenizer and chat template: from the shortest prompt of 16+ words counted so far, as a
  // longer one may have been cut to fit its slot; a digit-by-digit tokenizer spends ~7
  // tokens on one of our words), so every prompt fits its slot whole.
  double per_word = 1.0;
  for (const auto& [words, tokens] : prompt_tokens_) {
    if (words < 16) continue;
    per_word = std::max(0.25, static_cast<double>(tokens) / words);
    break;
  }
  auto words_for = [&](int64_t tokens) {
    return static_cast<int>(std::clamp<double>(static_cast<double>(tokens) / per_word, 2, o_.max_prompt_words));
  };
  const int fill_words = words_for(slot_ctx_ * 3 / 4);  // long prompts: three quarters of a slot
  const int repeats = std::max(1, o_.repeats);
  std::vector<int> prefill_words;                   // prefill columns: an eighth and a third,
  for (int w : {words_for(slot_ctx_ / 8), words_for(std::min<int64_t>(slot_ctx_ / 3, 480))}) {  // one ubatch
    if (prefill_words.empty() || w > prefill_words.back()) prefill_words.push_back(w);
  }
  // Counted before the erase, unpinned, so no uncounted request lands in a slot later.
  for (int w : prefill_words) PromptTokens(w);
  PromptTokens(fill_words);
  PromptTokens(1);
  if (!EraseSlots()) {
    p_.notes.push_back(
        "occupancy: the server did not erase its slots (llama-server erases only with --slot-save-path DIR); "
        "the spans are replayed from an assumed empty cache, so the grid's span axis may be off");
  }
  twin::LlamaCppKvCells kv(static_cast<int32_t>(slot_ctx_ * slots_));
  int points = 0;
  for (int k = 0; k <= measured && Alive(); ++k) {
    for (int i = 0; i < measured; ++i) {
      INFERENG_ASSIGN_OR_RETURN(int64_t prompt, Fill(i, i < k ? fill_words : 1));
      ReplayRequest(kv, i, prompt, 1);
    }
    std::vector<double> st;
    std::vector<int64_t> spans;
    int64_t own = 0;
    for (int r = 0; r < repeats && Alive(); ++r) {
      INFERENG_ASSIGN_OR_RETURN(std::vector<Sample> s, Measure(1, o_.decode_tokens, 1, measured));
      const ReplayedSpans sp = ReplayRequest(kv, measured, s.front().prompt_tokens, s.front().completion_tokens);
      if (s.front().step_s > 0) {
        st.push_back(s.front().step_s);
        spans.push_back(sp.decode);
      }
      own = s.front().prompt_tokens + s.front().completion_tokens / 2;
    }
    if (!st.empty()) {
      p_.points.push_back({.kind = "occupancy", .new_tokens = 1, .context_tokens = own, .batch = 1,
                           .seconds = Median(st), .repeats = static_cast<int32_t>(st.size()),
                           .kv_occupied_tokens = *std::max_element(spans.begin(), spans.end())});
      ++points;
    }
    for (int w : prefill_words) {
      std::vector<double> pf;
      int64_t n = w, span = 0;
      for (int r = 0; r < repeats && Alive(); ++r) {
        INFERENG_ASSIGN_OR_RETURN(std::vector<Sample> s, Measure(w, 1, 1, measured));
        pf.push_back(std::max(1e-6, s.front().ttft_s - front_end_s));
        n = s.front().prompt_tokens;
        span = std::max(span, ReplayRequest(kv, measured, n, s.front().completion_tokens).prefill);
      }
      if (pf.empty()) continue;
      p_.points.push_back({.kind = "occupancy", .new_tokens = n, .context_tokens = 0, .batch = 1,
                           .seconds = Median(pf), .repeats = static_cast<int32_t>(pf.size()),
                           .kv_occupied_tokens = span});
      ++points;
    }
  }
  if (points < 2) return Status::FailedPrecondition("fewer than two points measured");
  return Status::Ok();
}

}  // namespace

Result<twin::ProfileFile> RunProfile(const ProfileOptions& options) {
  Profiler p(options);
  return p.Run();
}

double DecodeStepSeconds(const std::vector<Nanos>& chunk_times, int64_t completion_tokens) {
  if (completion_tokens < 2 || chunk_times.size() < 2) return 0;
  const std::size_t n = chunk_times.size();
  if (static_cast<int64_t>(n) == completion_tokens && n >= 3) {
    // Siegel's repeated median: for each event the median slope to every other event, then
    // the median of those. A stall that holds back several events and releases them
    // together shortens some gaps to ~0 and lengthens one; up to half the events may be
    // displaced so and the timely ones still decide.
    std::vector<double> per_event, slopes;
    per_event.reserve(n);
    slopes.reserve(n - 1);
    for (std::size_t i = 0; i < n; ++i) {
      slopes.clear();
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double dt = static_cast<double>(chunk_times[j] - chunk_times[i]) / 1e9;
        slopes.push_back(dt / (static_cast<double>(j) - static_cast<double>(i)));
      }
      per_event.push_back(Median(slopes));
    }
    return Median(std::move(per_event));
  }
  return static_cast<double>(chunk_times.back() - chunk_times.front()) / 1e9 /
         static_cast<double>(completion_tokens - 1);
}

std::optional<int64_t> KvCapacityFromProps(const nlohmann::json& props) {
  if (!props.is_object() || !props.contains("default_generation_settings")) return std::nullopt;
  const auto& g = props["default_generation_settings"];
  if (!g.is_object() || !g.contains("n_ctx") || !g["n_ctx"].is_number_integer()) return std::nullopt;
  int64_t slots = 1;
  if (props.contains("total_slots") && props["total_slots"].is_number_integer()) {
    slots = std::max<int64_t>(1, props["total_slots"].get<int64_t>());
  }
  return g["n_ctx"].get<int64_t>() * slots;
}

}  // namespace infereng::job
