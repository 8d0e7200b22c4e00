// BenchOptions: everything one `bench` / `run` invocation asks for, after flag parsing.
// Unset optionals fall back to the card (bench: section, traffic, product.timeout).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/shard.h"
#include "bench/target.h"
#include "card/card.h"
#include "core/clock.h"
#include "metrics/summary.h"
#include "metrics/trials.h"

namespace infereng::bench {

// A live view for the progress line (read-only snapshot).
struct Progress {
  std::string phase;        // "warm-up", "measure", "cool-down", "drain", "cold-start"
  int trial = 1, trials = 1;
  double elapsed_s = 0;
  double total_s = 0;       // planned length (0 when unknown: requests mode)
  int64_t issued = 0, in_flight = 0, finished = 0, errors = 0;
  double rate_rps = 0;      // finished per second over the last interval
};

struct BenchOptions {
  std::string target;                  // URL of the server (root or .../v1)
  card::WorkloadCard card;
  std::string out_dir;                 // "" = keep everything in memory, write nothing

  // Load overrides (unset: the card's).
  std::optional<double> rate_rps;      // open loop at this mean rate (card's arrival shape)
  std::optional<int> concurrency;      // alone: closed loop; with a rate: a cap
  std::optional<Nanos> duration;       // measurement window
  std::optional<int64_t> requests;     // measured requests instead of a duration
  std::optional<Nanos> warmup;
  std::optional<Nanos> cooldown;
  Nanos ramp = 0;
  std::optional<int> trials;
  std::optional<uint64_t> seed;
  // --prompt-salt: the salt of each request's own text (unset: drawn fresh per run). The seed
  // alone would resend an earlier run's exact prompts, which a server's prefix or prompt
  // cache (vLLM's prefix caching, llama.cpp's --cache-ram) may still hold.
  std::optional<uint64_t> prompt_salt;
  std::optional<std::string> endpoint; // "chat" | "completions"
  std::optional<Nanos> timeout;        // per request (and stall) timeout
  std::string model;                   // --model: the model id sent (default: card, then /v1/models)
  // --length-control: which output-length fields to send. "auto" = what the engine is known
  // to accept; "ignore_eos", "min_tokens", "both" send them anyway; "none" sends neither.
  std::string length_control = "auto";
  // --response-format: a transcription's answer shape, json or verbose_json (whose segments
  // list the decoder's tokens: the only count some engines give, at a cost on some).
  std::string response_format = "json";

  // Connection.
  bool insecure = false;
  // Open the closed loop's C connections (or the open loop's cap) before each measured
  // phase, so connection setup neither inflates the first TTFTs nor shows as schedule lag.
  bool preconnect = true;
  std::string ca_file;
  std::string unix_socket;             // connect here instead of the URL's host:port
  ApiKeyOptions api_key;
  // --io-threads N: client io threads (HttpTransport lanes) connections are sharded across;
  // unset: DefaultIoThreads() (1 on <= 4 cores, else cores/4 up to 8).
  std::optional<int> io_threads;

  // Prompts and quality.
  std::string dataset;                 // JSONL / ShareGPT file; "" = synthetic prompts
  std::string dataset_format = "auto";
  int quality_every = 10;              // one request in N carries an eval-set item (1 = all)
  int cold_start_requests = 0;         // measure the first N requests after /health is 200
  // The engine's /metrics scraped this often during each trial into engine_metrics.jsonl
  // (bench/engine_scraper.h); 0 = only before and after (--no-scrape).
  Nanos scrape_interval = kNanosPerSecond;

  // Sharded load (bench/shard.h): this process runs shard K of N of the one schedule, its
  // t0 at the shared wall-clock start; the clock's stated error goes into the manifest.
  std::optional<Shard> shard;
  std::optional<int64_t> start_at_unix_ns;
  std::optional<double> clock_uncertainty_ms;
  // --clock-ref URL: before the load, measure this process's clock offset to that reference
  // (an `infereng serve` GET /clock) and write it as the manifest's shard.clock, which
  // `merge` uses to realign shards (bench/clock_sync.h). "" = not measured.
  std::string clock_ref;

  // Presentation and control.
  std::function<void(const Progress&)> on_progress;  // called about once a second
  // Warnings worth seeing before any load is sent (e.g. the served model differs).
  std::function<void(const std::string&)> on_notice;
  const std::atomic<bool>* interrupt = nullptr;      // set by SIGINT/SIGTERM
  nlohmann::json extra_manifest;       // merged into manifest.json (e.g. the embedded server)
  nlohmann::json card_from_flags;      // bench without --card: the flags the card was built from
                                       // (manifest card.synthesised_from_flags); null otherwise
};

struct BenchResult {
  metrics::Summary summary;                 // trial 1 (the only one unless --trials)
  std::vector<metrics::Summary> trials;     // every trial
  std::optional<metrics::Summary> cold;     // cold-start requests, reported apart
  nlohmann::json summary_json;              // summary.json as written
  nlohmann::json manifest;                  // manifest.json as written
  std::vector<std::string> notes;           // warnings worth a line on the terminal
  bool partial = false;                     // interrupted or target died
  bool interrupted = false;                 // by the user (SIGINT/SIGTERM)
  bool target_down = false;                 // the target stopped accepting connections
  bool has_slos = false;                    // the card defines latency SLOs or a floor
  std::string first_error;                  // "http_4xx: HTTP 400 ...": the first failed request

  // The eval-set checks of trial 1 (the charted trial): pass rate, interval, breakdowns and
  // the first failing cases; nullopt without an eval set.
  std::optional<metrics::QualityReport> quality;

  metrics::TrialGate gate;                  // what a trial must meet (SLOs, quality floor)
  metrics::TrialsVerdict verdict;           // over every trial (metrics::kTrialsRule)
};

}  // namespace infereng::bench
