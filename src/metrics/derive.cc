#include "metrics/derive.h"

#include <algorithm>
#include <utility>

#include "core/stats.h"

namespace infereng::metrics {

RequestMetrics DeriveRequest(const RequestRecord& r, const DeriveOptions& options) {
  RequestMetrics m;
  DeriveRequestInto(r, options, m);
  return m;
}

void DeriveRequestInto(const RequestRecord& r, const DeriveOptions& options, RequestMetrics& m) {
  std::vector<double> itl = std::move(m.itl_ms), inter_chunk = std::move(m.inter_chunk_ms);
  itl.clear();
  inter_chunk.clear();
  m = RequestMetrics{};
  m.itl_ms = std::move(itl);
  m.inter_chunk_ms = std::move(inter_chunk);
  m.output_tokens = r.OutputTokens();
  int64_t reasoning_chunk_tokens = 0;
  for (const Chunk& c : r.chunks) {
    m.chunk_tokens += c.tokens;
    if (c.reasoning) {
      m.has_reasoning = true;
      reasoning_chunk_tokens += c.tokens;
    }
  }
  m.visible_chunk_tokens = m.chunk_tokens - reasoning_chunk_tokens;
  // The server's count wins (it also counts reasoning inside a chunk that carried both
  // kinds, which the stream marks visible); else the reasoning chunks' tokens.
  m.reasoning_from_usage = r.reasoning_tokens >= 0;
  m.reasoning_tokens = m.reasoning_from_usage ? std::min(r.reasoning_tokens, std::max<int64_t>(m.output_tokens, 0))
                                              : reasoning_chunk_tokens;
  m.visible_output_tokens = std::max<int64_t>(m.output_tokens - m.reasoning_tokens, 0);
  if (r.t_sched >= 0 && r.t_send >= 0) m.schedule_lag_ms = NanosToMillis(r.t_send - r.t_sched);
  // The engine's own queue time first: the twin sets it when a front end delays the
  // request's arrival at the engine after the send (twin/front_end.h).
  if (r.server_queue >= 0) {
    m.queue_ms = NanosToMillis(r.server_queue);
  } else if (r.t_send >= 0 && r.t_server_scheduled >= 0) {
    m.queue_ms = NanosToMillis(r.t_server_scheduled - r.t_send);
  }
  if (r.t_server_scheduled >= 0 && r.t_prefill_done >= 0) {
    m.prefill_ms = NanosToMillis(r.t_prefill_done - r.t_server_scheduled);
  } else if (r.server_prefill >= 0) {
    m.prefill_ms = NanosToMillis(r.server_prefill);
  }
  if (r.server_decode >= 0) m.decode_ms = NanosToMillis(r.server_decode);
  if (r.items > 0 && r.chunks.empty()) {
    // Embeddings: one JSON answer, no output events; E2E ends when it has fully arrived.
    if (r.t_send >= 0 && r.t_end >= r.t_send) m.e2e_ms = NanosToMillis(r.t_end - r.t_send);
    if (r.t_sched >= 0 && r.t_end >= r.t_sched) m.e2e_incl_queue_ms = NanosToMillis(r.t_end - r.t_sched);
    return;
  }
  if (r.chunks.empty()) return;

  const Nanos first = r.chunks.front().t;
  const Nanos last = r.chunks.back().t;
  if (r.t_send >= 0) {
    m.ttft_ms = NanosToMillis(first - r.t_send);
    m.e2e_ms = NanosToMillis(last - r.t_send);
  }
  // An answer not streamed is one event carrying every token: its first token arrived with
  // its last, so the decode is inside its TTFT too and comes off with the prefill (no
  // decode reported: no split, rather than a decode passed off as client and network).
  const bool whole = r.chunks.size() == 1 && m.output_tokens > 1;
  if (m.ttft_ms && m.prefill_ms && (!whole || m.decode_ms)) {
    m.split_includes_queue = !m.queue_ms;
    m.ttft_client_network_ms = *m.ttft_ms - *m.prefill_ms - m.queue_ms.value_or(0) - (whole ? *m.decode_ms : 0);
  }
  if (r.t_sched >= 0) {
    m.ttft_incl_queue_ms = NanosToMillis(first - r.t_sched);
    m.e2e_incl_queue_ms = NanosToMillis(last - r.t_sched);
  }
  // TTFT visible: the first chunk that is not reasoning-only (docs/metrics.md); without
  // reasoning that is the first chunk, so TTFT visible == TTFT.
  auto visible = std::find_if(r.chunks.begin(), r.chunks.end(), [](const Chunk& c) { return !c.reasoning; });
  if (visible != r.chunks.end()) {
    if (r.t_send >= 0) m.ttft_visible_ms = NanosToMillis(visible->t - r.t_send);
    if (r.t_sched >= 0) m.ttft_visible_incl_queue_ms = NanosToMillis(visible->t - r.t_sched);
  }
  if (r.t_end >= last) m.stream_close_ms = NanosToMillis(r.t_end - last);
  // TPOT needs >= 2 tokens and >= 2 output events: one event carrying every token (a
  // non-streamed answer) says nothing about decode speed, and must not read as 0.
  if (m.output_tokens >= 2 && r.chunks.size() >= 2) {
    m.tpot_ms = NanosToMillis(last - first) / static_cast<double>(m.output_tokens - 1);
  }
  if (options.want_itl && r.chunks.size() >= 2) {
    m.inter_chunk_ms.reserve(r.chunks.size() - 1);
    m.itl_ms.reserve(static_cast<size_t>(std::max<int64_t>(m.chunk_tokens, 1)));
    for (size_t i = 1; i < r.chunks.size(); ++i) {
      const double gap = NanosToMillis(r.chunks[i].t - r.chunks[i - 1].t);
      m.inter_chunk_ms.push_back(gap);
      // Token-expanded: k tokens in one event = k samples of gap / k. Tokens beyond the
      // first in the FIRST event have no preceding gap and give no ITL sample.
      const int32_t k = std::max<int32_t>(r.chunks[i].tokens, 1);
      for (int32_t j = 0; j < k; ++j) m.itl_ms.push_back(gap / k);
    }
    m.itl_p99_ms = stats::PercentileOf(m.itl_ms, 99);
  }
}

std::optional<double> RequestItlPercentile(const RequestMetrics& m, double p) {
  if (m.itl_ms.empty()) return std::nullopt;
  return stats::PercentileOf(m.itl_ms, p);
}

}  // namespace infereng::metrics
