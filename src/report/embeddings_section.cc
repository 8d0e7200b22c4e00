// Embeddings in the run report (see embeddings_section.h).
#include "report/embeddings_section.h"

#include <fmt/format.h>

#include "core/units.h"
#include "metrics/caveats.h"

namespace infereng::report {
namespace {

std::string Dist(const stats::SampleStats& d, double v) { return d.count > 0 ? units::FormatNumber(v) : "n/a"; }

}  // namespace

void AddEmbeddingsSection(HtmlPage& page, const RunData& run, const std::string& id_prefix,
                          const std::string& heading_prefix) {
  if (!run.summary || !run.summary->embeddings) return;
  const metrics::Summary& s = *run.summary;
  const metrics::EmbeddingsSummary& e = *s.embeddings;
  const std::string items = metrics::ItemsName(e);
  const std::string tokens = e.rerank ? "pair tokens" : "input tokens";
  page.BeginSection(id_prefix + "-" + metrics::EmbeddingsKey(e), heading_prefix + (e.rerank ? "Rerank" : "Embeddings"),
                    e.rerank ? "Documents and pair tokens (query + document, per document) of successful requests that "
                               "ended in the window, per second of the window (docs/metrics.md, \"Embeddings\"). A "
                               "rerank request has no token stream: its latency is E2E."
                             : "Items and input tokens of successful requests that ended in the window, per second of "
                               "the window (docs/metrics.md, \"Embeddings\"). An embeddings request has no token "
                               "stream: its latency is E2E.");
  std::vector<Kpi> k;
  k.push_back({items + "/s", metrics::RateOrNa(s, e.items_per_s, (items + "/s").c_str()),
               fmt::format("{} {} in the window", e.window_items, items)});
  k.push_back({tokens + "/s", metrics::RateOrNa(s, e.input_tokens_per_s, "tok/s"),
               fmt::format("{} {} in the window", e.window_input_tokens, tokens)});
  k.push_back({"requests", std::to_string(e.requests), fmt::format("{} {}, {} {}", e.items, items, e.input_tokens, tokens)});
  page.Kpis(k);
  const stats::SampleStats& b = e.items_per_request;
  const stats::SampleStats& t = e.input_tokens_per_item;
  page.Table({"per request", "p50", "p90", "p99", "mean", "max", "n"},
             {{e.rerank ? "documents" : "items (batch size)", Dist(b, b.p50), Dist(b, b.p90), Dist(b, b.p99),
               Dist(b, b.mean), Dist(b, b.max), std::to_string(b.count)},
              {e.rerank ? "pair tokens per document" : "input tokens per item", Dist(t, t.p50), Dist(t, t.p90),
               Dist(t, t.p99), Dist(t, t.mean), Dist(t, t.max), std::to_string(t.count)}},
             {1, 2, 3, 4, 5, 6});
  page.EndSection();
}

std::string EmbeddingsMarkdownRows(const metrics::Summary& s) {
  if (!s.embeddings) return {};
  const metrics::EmbeddingsSummary& e = *s.embeddings;
  const std::string key = metrics::EmbeddingsKey(e), items = metrics::ItemsName(e);
  const std::string tokens = e.rerank ? "pair tokens" : "input tokens";
  std::string o;
  o += fmt::format("| {} throughput | {} · {} |\n", key, metrics::RateOrNa(s, e.items_per_s, (items + "/s").c_str()),
                   metrics::RateOrNa(s, e.input_tokens_per_s, e.rerank ? "pair tok/s" : "input tok/s"));
  o += fmt::format("| {} requests · {} · {} | {} · {} · {} |\n", key, items, tokens, e.requests, e.items, e.input_tokens);
  if (e.items_per_request.count > 0) {
    o += fmt::format("| {} P50 / max | {} / {} |\n", e.rerank ? "documents per request" : "batch size",
                     units::FormatNumber(e.items_per_request.p50), units::FormatNumber(e.items_per_request.max));
  }
  return o;
}

}  // namespace infereng::report
