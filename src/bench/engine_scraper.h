// EngineScraper: the engine's /metrics scraped on its own thread every `interval` during a
// load phase, each scrape turned into one line of canonical signals
// (client/engine_signals.h) and appended to DIR/engine_metrics.jsonl at once
// (docs/results-schema.md). For llama.cpp with --slots, GET /slots right after each
// /metrics adds the per-slot signals to the same line. Off the client's hot path: the io thread never waits for it,
// it holds only the previous scrape's cumulative values (bounded memory whatever the run
// length), and a slow or failed scrape only delays or marks its own line.
//
// Ticks are absolute (t0 + k * interval, as the load schedule's send times): a slow scrape
// skips the ticks it overran instead of drifting. Times in the file are seconds since the
// phase's t0, the same origin as requests.jsonl, so the two share one time axis.
//
// Thread-safety: Start and Stop from one thread; the fetch function runs on the scraper's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/engine_signals.h"
#include "core/clock.h"
#include "core/status.h"

namespace infereng::bench {

struct ScraperOptions {
  std::string path;    // where the lines go (created; appended to)
  Nanos t0 = 0;        // the phase's origin on `clock`
  Nanos interval = kNanosPerSecond;
  const Clock* clock = &SteadyClock::Instance();
  std::function<Result<std::string>()> fetch;  // one GET /metrics body
  // llama.cpp with --slots: one GET /slots body, fetched right after each /metrics scrape
  // and added to the same line (client/llamacpp_slots.h). Empty: not fetched.
  std::function<Result<std::string>()> fetch_slots;
};

class EngineScraper {
 public:
  static Result<std::unique_ptr<EngineScraper>> Start(ScraperOptions options);
  ~EngineScraper();
  EngineScraper(const EngineScraper&) = delete;
  EngineScraper& operator=(const EngineScraper&) = delete;

  // Takes a last scrape (the series covers the end of the phase), joins the thread and
  // closes the file. The first write error, if any. Idempotent.
  Status Stop();
  int64_t scrapes() const { return scrapes_; }  // after Stop: lines with signals
  int64_t failures() const { return failures_; }  // after Stop: lines with an error
  int64_t slot_failures() const { return slot_failures_; }  // after Stop: lines whose /slots failed
  const std::string& first_error() const { return first_error_; }

 private:
  explicit EngineScraper(ScraperOptions options, std::FILE* file);
  void Loop();
  void ScrapeOnce();
  void AddSlots(nlohmann::json& line);

  ScraperOptions opt_;
  std::FILE* file_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  // Owned by the scraper thread until Stop joins it.
  int64_t scrapes_ = 0;
  int64_t failures_ = 0;
  int64_t slot_failures_ = 0;
  std::string first_error_;
  Status write_status_;
  client::SignalSampler sampler_;
  std::thread thread_;  // last: starts after every member above is initialised
};

}  // namespace infereng::bench
