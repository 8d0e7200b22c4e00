// Load limits shared by the card (traffic.arrival.rate, traffic.concurrency) and the load
// flags of every command (--rate, --concurrency: workload::ResolveClientLoad; sweep's
// --points and --start): one rule, so a flag cannot ask for what a card may not.
#pragma once

namespace infereng::card {

inline constexpr double kMaxRateRps = 1e6;
inline constexpr int kMaxConcurrency = 1'000'000;
// Inputs per /v1/embeddings request (traffic.batch_size): OpenAI's own limit.
inline constexpr int kMaxEmbeddingBatch = 2048;
// Documents per /v1/rerank request (traffic.documents): Cohere's and Jina's limit.
inline constexpr int kMaxRerankDocuments = 1000;

}  // namespace infereng::card
