// Per-request derived metrics: the definitions of docs/metrics.md applied to ONE record.
// This is the only place a latency is derived from raw facts; the accumulator
// (metrics/summary.h) pools these, and anything that wants a live per-request figure
// (progress lines, the twin's own checks) calls DeriveRequest instead of recomputing.
//
// All outputs are milliseconds (double); std::nullopt means "undefined for this request"
// (e.g. TPOT with fewer than 2 output tokens), which is excluded from statistics, never 0.
#pragma once

#include <optional>
#include <vector>

#include "metrics/record.h"

namespace infereng::metrics {

struct RequestMetrics {
  int64_t output_tokens = 0;                  // record.OutputTokens()
  int64_t chunk_tokens = 0;                   // sum of chunk tokens (what the stream carried)
  std::optional<double> schedule_lag_ms;      // t_send - t_sched
  std::optional<double> ttft_ms;              // first output chunk (any kind) - t_send
  std::optional<double> ttft_incl_queue_ms;   // first output chunk - t_sched
  // First non-reasoning chunk - t_send (t_sched): for a request without reasoning chunks
  // its TTFT; undefined when every chunk was reasoning (the answer never started).
  std::optional<double> ttft_visible_ms;
  std::optional<double> ttft_visible_incl_queue_ms;
  std::optional<double> e2e_ms;               // last output chunk - t_send
  std::optional<double> e2e_incl_queue_ms;    // last output chunk - t_sched
  std::optional<double> stream_close_ms;      // t_end - last output chunk
  std::optional<double> tpot_ms;              // (last - first) / (output_tokens - 1), >= 2 tokens
  // Server-side phases: the twin's timestamps (t_server_scheduled - t_send,
  // t_prefill_done - t_server_scheduled), else the durations the engine reported
  // (record.server_queue / server_prefill / server_decode); undefined when neither. A
  // reported server_queue wins over the timestamps (the twin's, behind a front end).
  std::optional<double> queue_ms;
  std::optional<double> prefill_ms;
  std::optional<double> decode_ms;            // reported only: first token -> last token
  // The TTFT split: ttft_ms - queue_ms - prefill_ms, what the client, the network and
  // the server outside the engine (HTTP, tokenising, detokenising) took. Defined when
  // ttft_ms and prefill_ms are; an engine that reports no queue time (llama.cpp) leaves
  // its queue inside this figure and sets split_includes_queue.
  std::optional<double> ttft_client_network_ms;
  bool split_includes_queue = false;
  // Token-expanded ITL: a gap before a chunk carrying k tokens gives k samples of gap/k.
  std::vector<double> itl_ms;
  // Raw gaps between consecutive output chunks (one per chunk after the first).
  std::vector<double> inter_chunk_ms;
  // This request's own P99 of itl_ms (numpy linear); undefined with no ITL samples.
  std::optional<double> itl_p99_ms;
  bool has_reasoning = false;                  // some chunk carried reasoning only
  // Reasoning tokens: the server's usage count (record.reasoning_tokens) when reported,
  // else the tokens of the reasoning chunks; visible = output_tokens - reasoning (>= 0).
  int64_t reasoning_tokens = 0;
  bool reasoning_from_usage = false;
  int64_t visible_output_tokens = 0;
  int64_t visible_chunk_tokens = 0;           // tokens of the non-reasoning chunks
};

struct DeriveOptions {
  bool want_itl = true;  // fill itl_ms / inter_chunk_ms / itl_p99_ms (costs allocations)
};

RequestMetrics DeriveRequest(const RequestRecord& r, const DeriveOptions& options = {});
// The same into `out`, whose vectors keep their capacity: a caller deriving record after
// record (the accumulator) allocates nothing per record in steady state.
void DeriveRequestInto(const RequestRecord& r, const DeriveOptions& options, RequestMetrics& out);

// The request's own ITL at percentile p (numpy linear over its token-expanded ITL samples);
// undefined with fewer than 2 output tokens. Used for per-request ITL SLO checks.
std::optional<double> RequestItlPercentile(const RequestMetrics& m, double p);

}  // namespace infereng::metrics
