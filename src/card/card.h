// WorkloadCard: the product contract, traffic shape, SLOs and constraints that every
// command reads (fit, simulate, capacity, serve, bench, run, sweep, report).
//
// Plain values for consumers; `fields` records, for every path present in the YAML
// ("traffic.arrival.rate"), where it was written and whether it is marked as an
// assumption ({value: X, assumed: true}), so `card check` can list what is assumed or
// missing. Parsing and validation live in card/card_parser.{h,cc}; the schema is
// documented in docs/workload-card.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "card/audio.h"
#include "card/vision.h"

namespace infereng::card {

// A distribution of token lengths (or any positive quantity).
struct Distribution {
  enum class Kind { kFixed, kUniform, kNormal, kLognormal, kEmpirical };
  Kind kind = Kind::kFixed;
  double value = 0;               // fixed
  double min = 1, max = 0;        // uniform bounds; also clamps for every kind (max 0 = none)
  double mean = 0, stddev = 0;    // normal
  double p50 = 0, p99 = 0;        // lognormal given its median and 99th percentile
  std::string file;               // empirical: one number per line, or JSONL with a field
  std::string field;              // empirical JSONL: the field to read ("" = plain numbers)
  std::vector<double> samples;    // empirical: loaded values

  static Distribution Fixed(double v) {
    Distribution d;
    d.value = v;
    return d;
  }
  // The distribution of k·X (k > 0): every parameter and clamp scaled, samples included.
  Distribution Scaled(double k) const {
    Distribution d = *this;
    for (double* v : {&d.value, &d.min, &d.max, &d.mean, &d.stddev, &d.p50, &d.p99}) *v *= k;
    for (double& v : d.samples) v *= k;
    return d;
  }
};

struct ArrivalSpec {
  enum class Kind { kConstant, kPoisson, kGamma, kOnOff, kDiurnal, kTrace };
  Kind kind = Kind::kPoisson;
  double rate_rps = 1;            // mean rate (on/off: rate while on)
  double cv = 1;                  // gamma: coefficient of variation of inter-arrival gaps
  double on_s = 0, off_s = 0;     // on/off bursts
  double period_s = 86400;        // diurnal: period
  double peak_to_trough = 3;      // diurnal: ratio of peak to trough rate
  std::string trace_file;         // trace: any format `characterize` reads (trace/reader.h)
  double trace_speed = 1;         // trace: replay speed factor
  std::string trace_format = "auto";  // trace: auto|azure|mooncake|burstgpt|csv|jsonl
  double trace_start_s = 0;       // trace window (trace/replay.h): skip this long after the first arrival,
  double trace_duration_s = 0;    //   then replay this long (0 = to the end),
  int64_t trace_requests = 0;     //   at most this many requests (0 = all)
  int64_t trace_block_tokens = 0; // trace: tokens per hash_ids block (0 = the format's: 512)
  // trace: replay the trace's session ids as sessions ("sessions") or agent tasks ("tasks"):
  // a call goes no earlier than its trace time and not before its session's previous step
  // ended (workload/sessions.h, "Trace sessions"); "" = every request on its own.
  std::string trace_sessions;
  // trace sessions: a session's calls that arrive within this of their step's first call
  // are one step (parallel calls, joined before the next step); 0 = equal times only.
  double trace_parallel_window_s = 0;
};

struct PrefixSpec {
  double share = 0;      // share of requests that start with a shared prefix (0..1)
  int distinct = 1;      // distinct prefixes per tenant
  int64_t tokens = 0;    // prefix length in tokens
  int tenants = 1;       // tenants; prefixes are never shared across tenants
};

// Multi-turn sessions and agent tasks (workload/sessions.h): a session is a chain of LLM
// calls; each later call re-sends the conversation so far (previous prompt + previous
// answer + a new message), released `think_time_s` after the previous call ended. An agent
// task is a session whose turns are the card's agent_steps and whose think time is
// agent_tool_time (the tool call); new_message_tokens is then the tool result.
struct SessionSpec {
  Distribution turns = Distribution::Fixed(1);  // calls per session (rounded, >= 1)
  // Milliseconds from a call's end to the next call's send (whole ms, >= 1); none: 0.
  std::optional<Distribution> think_time_ms;
  Distribution new_message_tokens = Distribution::Fixed(64);  // tokens each later call appends
  // Calls per step after the first, sent together and joined before the next step (an
  // agent's parallel sub-calls; rounded, >= 1; traffic.agent_parallel). Each branch's prompt
  // is the conversation so far plus its own new message; the next step's conversation adds
  // every branch's message and answer (workload/sessions.h).
  Distribution parallel = Distribution::Fixed(1);
  bool task = false;  // agent tasks (agent_steps): summaries call them tasks, SLO task_ms applies
};

// traffic.images: the images a chat request carries (vision inputs; card/vision.h has the
// model's rule for what they cost). Every image has the same size.
struct ImagesSpec {
  double share = 1;                             // share of requests that carry images (0..1)
  Distribution count = Distribution::Fixed(1);  // images per such request (rounded, 1..64)
  int64_t width = 0, height = 0;                // pixels of every image
};

// traffic.audio: the clip each transcription request carries (card/audio.h has the model's
// rule for what it costs).
struct AudioTrafficSpec {
  Distribution seconds = Distribution::Fixed(0);  // each clip's length in seconds (required)
  // Transcript tokens per second of audio: speech at ~150 words/min and ~1.3 tokens per word
  // (GPT-2-style BPE, Whisper's) is ~3.25; an assumption unless measured on your own audio.
  double transcript_tokens_per_s = 3.25;
};

struct ProductSpec {
  std::string task;                 // e.g. "chat", "summarisation", "agent"
  std::string modality = "text";   // text | embeddings | rerank | transcription (card_parser.cc)
  int64_t max_context_tokens = 0;   // 0 = unspecified
  int64_t max_input_tokens = 0;
  int64_t max_output_tokens = 0;
  std::string format = "text";      // text | json | tool_calls
  bool streaming = true;
  double timeout_s = 0;             // client-side request timeout (0 = none)
  std::string overload_response;    // e.g. "429 with retry-after", "queue"
  std::string unit_of_work = "request";  // request | task (agent flows: the whole task)
  // Fixed per-request costs outside the model, for E2E budgets (ms; unset = unknown).
  std::optional<double> network_ms, preprocess_ms, postprocess_ms;

  // Embeddings and rerank requests are prefill only: a batch of items (inputs, or
  // query-document pairs) scored in one forward pass each, no output tokens, no stream.
  // The one rule every "is this a generation card?" question asks.
  bool PrefillOnly() const { return modality == "embeddings" || modality == "rerank"; }
  // The API a prefill-only modality is benchmarked on (its bench.endpoint, which must
  // match): "embeddings" or "rerank"; "" for text (chat or completions).
  std::string ItemsEndpoint() const { return PrefillOnly() ? modality : std::string(); }
  // Speech to text (/v1/audio/transcriptions): one audio clip in, a streamed transcript out.
  bool Transcription() const { return modality == "transcription"; }
};

struct TrafficSpec {
  enum class Class { kOnline, kOffline };
  Class cls = Class::kOnline;
  ArrivalSpec arrival;
  std::optional<int> concurrency;       // closed loop when set without a rate; else a cap
  std::optional<double> peak_rate_rps;  // the rate capacity planning must serve
  Distribution input_tokens;   // embeddings: tokens of each input; rerank: of the query
  Distribution output_tokens;  // embeddings, rerank: not used (no output tokens)
  // Embeddings (product.modality: embeddings): inputs per /v1/embeddings request, one draw
  // per request (rounded, clamped to [1, 2048]); unset there: 1. Refused on other cards.
  std::optional<Distribution> batch_size;
  // Rerank (product.modality: rerank): documents per /v1/rerank request, one draw per
  // request (rounded, clamped to [1, 1000]; unset: 1), and each document's tokens, one draw
  // per document (required). Refused on other cards.
  std::optional<Distribution> documents;
  std::optional<Distribution> document_tokens;
  // Vision inputs on chat requests; needs model.vision. Refused on embeddings cards, with
  // bench.endpoint completions and with sessions (card_validate.cc).
  std::optional<ImagesSpec> images;
  // Transcription (product.modality: transcription): the clip each request carries; needs
  // model.audio. Required on a transcription card, refused on others.
  std::optional<AudioTrafficSpec> audio;
  PrefixSpec prefix;
  std::optional<int> agent_steps;       // agentic flows: LLM calls per task
  std::optional<double> agent_tool_ms;  // agentic flows: tool-call time between steps
  std::optional<Distribution> agent_parallel;  // agentic flows: calls per step after the first
  // traffic.sessions, or the agent task agent_steps/agent_tool_time make (card_validate.cc
  // folds them in); nullopt: every request is a single call.
  std::optional<SessionSpec> sessions;
};

// One latency objective: `metric` at `percentile` must be <= `threshold_ms`.
struct SloTarget {
  std::string metric;     // "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms"
  double percentile = 99; // 50, 90, 95, 99, 99.9
  double threshold_ms = 0;
};

// One per-request threshold for goodput and attainment (vLLM's `--goodput ttft:X tpot:Y`,
// DistServe): a request is good when its own value of `metric` is <= threshold_ms.
// card/slo.h owns the rule that picks them (slo.goodput, or defaults from the objectives).
struct RequestThreshold {
  std::string metric;          // "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms"
  double threshold_ms = 0;
  // The objective's percentile it defaults from (99 for slo.goodput); for itl_ms also the
  // percentile of the request's own ITL that is compared.
  double percentile = 99;
  std::string origin;          // "slo.goodput", or the objective it defaults from ("ttft p99")

  friend bool operator==(const RequestThreshold&, const RequestThreshold&) = default;
};

// Two notions, kept apart (docs/metrics.md, "SLO evaluation"): `latency` objectives are
// judged on the run's percentile; goodput and `attainment` count requests meeting the
// per-request thresholds.
struct SloSpec {
  std::vector<SloTarget> latency;
  std::vector<RequestThreshold> goodput;  // slo.goodput as written; empty: default (card/slo.h)
  std::optional<double> min_output_tokens_per_s;  // throughput floor (system-wide)
  std::optional<double> availability;             // e.g. 0.999
  double attainment = 0.99;  // share of requests that must meet every per-request threshold
  std::optional<double> recovery_s;               // time to recover after a failure
  // Sessions/tasks: a task (or session) is good when it completed, every call succeeded and
  // it took at most this long from its first call's t_sched to its last call's end.
  std::optional<double> task_ms;
};

struct ConstraintsSpec {
  std::optional<double> budget_per_hour_usd;
  std::optional<double> budget_per_1m_tokens_usd;
  std::string region, data_residency, privacy, licence;
  std::vector<std::string> accelerators;  // allowed accelerator catalog names
  std::string operations;                 // operations capacity, free text
};

struct ModelRef {
  std::string id;            // served model id, e.g. "meta-llama/Llama-3.1-8B-Instruct"
  std::string revision;      // commit / tag pinned for reproducibility
  std::string precision = "bf16";     // weights: bf16 | fp8 | int8 | int4
  std::string kv_precision = "bf16";  // bf16 | fp8
  std::string architecture;  // catalog name ("llama-3.1-8b") or path to a HF config.json
  // A vision-language model: how images become prompt tokens and the encoder's size.
  std::optional<VisionSpec> vision;
  // A speech model (transcription cards): how audio becomes tokens and the encoder's size.
  std::optional<AudioModelSpec> audio;
};

// Where it runs (for fit, simulate, serve); capacity searches over these.
struct DeploymentSpec {
  std::string accelerator;   // catalog name, e.g. "h100-sxm"
  int count = 1;             // accelerators per replica
  int tp = 1;                // tensor parallel degree
  int ep = 1;                // expert parallel degree
  int replicas = 1;
  std::optional<double> price_per_hour_usd;  // per accelerator; overrides the catalog
};

struct QualitySpec {
  std::string eval_set;       // JSONL path
  double pass_threshold = 0;  // minimum pass rate (0..1)
};

// The measured baseline this card was written from (a bench run directory), if any.
struct BaselineSpec {
  std::string run;    // path to a bench/run results directory or summary
  std::string notes;
};

// How the baseline benchmark runs this card (bench/run/sweep read it; flags override).
struct BenchSpec {
  double duration_s = 60;
  std::optional<int64_t> requests;  // stop after N requests instead of a duration
  double warmup_s = 5;
  double cooldown_s = 0;
  int trials = 1;
  uint64_t seed = 42;
  std::string endpoint = "chat";    // chat | completions | embeddings | rerank | transcriptions (the default of those modalities)
};

struct FieldMeta {
  int line = 0;
  bool assumed = false;
};

struct WorkloadCard {
  std::string name;
  std::string description;
  ProductSpec product;
  TrafficSpec traffic;
  SloSpec slo;
  ConstraintsSpec constraints;
  ModelRef model;
  DeploymentSpec deployment;
  // Engine knobs as flattened key=value ("max_num_seqs" -> "256"); the twin applies them
  // with the same code as `--set engine.KEY=VALUE`, so the card does not depend on it.
  std::map<std::string, std::string> engine;
  QualitySpec quality;
  BenchSpec bench;
  BaselineSpec baseline;

  // Every dotted path present in the file, with its line and assumption mark.
  std::map<std::string, FieldMeta> fields;
  std::string source_path;   // file it was read from ("" if built in code)
  std::string content_hash;  // hex SHA-256 of the file's bytes, for manifests

  bool Has(const std::string& path) const { return fields.count(path) != 0; }
  // Session calls are agent tasks (summaries say tasks, slo.task_ms applies): the card's
  // agent_steps, or a trace replayed with sessions: tasks.
  bool SessionsAreTasks() const {
    return (traffic.sessions && traffic.sessions->task) || traffic.arrival.trace_sessions == "tasks";
  }
  bool Assumed(const std::string& path) const {
    auto it = fields.find(path);
    return it != fields.end() && it->second.assumed;
  }
};

}  // namespace infereng::card
