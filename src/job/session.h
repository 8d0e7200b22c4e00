// The state one bench job shares across its phases (bench_job.cc sets it up, phase.cc runs
// load with it): the resolved load plan, the client options and API key, what the probe
// found, the prompts and eval set, the transport, and the counters and notes that every
// phase adds to. Internal to job/: one Session per RunBench call, used from one thread
// (the phase's watcher and the runner's callbacks only read it, or touch atomics).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_options.h"
#include "bench/dataset.h"
#include "bench/engine_probe.h"
#include "bench/http_transport.h"
#include "bench/load_plan.h"
#include "bench/png_image.h"
#include "bench/prompt_setup.h"
#include "bench/quality.h"
#include "bench/request_body.h"
#include "client/http_client.h"
#include "job/client_saturation.h"
#include "job/shard_plan.h"

namespace infereng::job {

struct Session {
  explicit Session(const bench::BenchOptions& o) : opt(o) {}
  const bench::BenchOptions& opt;
  bench::LoadPlan plan;
  std::string api_key;
  client::ClientOptions client;
  bench::ServerInfo server;
  std::string model_id;
  bench::BodyOptions body;
  bench::PromptSetup prompt_setup;
  bench::PromptBuilder* prompts = nullptr;  // prompt_setup.builder (null with a dataset)
  std::vector<bench::DatasetItem> dataset;
  std::vector<bench::EvalItem> evals;
  std::optional<bench::SyntheticPng> image;  // traffic.images: the image every variant comes from
  std::unique_ptr<bench::HttpTransport> transport;
  std::vector<std::string> notes;
  Nanos client_cpu = 0;     // dispatcher + io + pipeline threads, all phases
  int64_t retried = 0;      // requests re-sent after a dead kept-alive connection, all phases
  Nanos retry_lost = 0;     // their first send -> re-send, summed
  std::string first_error;  // the first failed request of the run ("" when none)
  // The first measured phase's pool warm-up (bench --no-preconnect: none).
  std::optional<client::PreconnectResult> preconnect;
  std::optional<ShardPlan> shard;  // --shard K/N (job/shard_plan.h)
  nlohmann::json shard_facts;      // what the shard's trial measured for the merge (t0 wall, window end)
  nlohmann::json shard_clock;      // --clock-ref: the measured offset (shard.clock), null otherwise
  nlohmann::json trace;            // trace replay: trace::ReplayInfoToJson (null otherwise)
  // The client's saturation signals, measured parts of every trial (client_saturation.h).
  client::RxStampStats rx_stamps;          // merged
  std::optional<double> io_cpu_share;      // the busiest trial's
  std::vector<double> steady_lag_ms;       // steady-phase schedule lag, all trials
  std::optional<ClientSaturation> saturation;  // judged once, after the last trial
};

// `text` with the API key scrubbed out (every error message goes through it).
std::string Scrub(const Session& s, const std::string& text);

}  // namespace infereng::job
