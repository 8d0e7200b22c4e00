// The embedded engine for `infereng run CARD` without --target: an in-process
// serve::Server on a free loopback port, configured from the card (model name, seed), so
// the card's baseline runs with no external server. --speedup makes engine time run
// faster than the wall clock (tests, quick looks).
//
// JobEngine is the one lifecycle every job uses for "the engine it measures": the server
// --target names, or an embedded engine started for the job and stopped when the JobEngine
// goes out of scope (or by Stop()). `run` holds one for the run; a measured sweep opens a
// fresh one per point (job/sweep_points.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_options.h"
#include "bench/quality.h"
#include "card/card.h"
#include "core/status.h"
#include "serve/server.h"

namespace infereng::job {

struct EmbeddedOptions {
  double speedup = 1.0;
  uint64_t seed = 42;
  std::string faults;  // serve --faults spec ("" = none)
  std::string unix_socket;  // listen here instead of 127.0.0.1:<free port> ("" = TCP)
  // The card's quality.eval_set is answered (serve/eval_answers.h): right with probability
  // quality_accuracy x the twin's factor for the card's weight precision
  // (twin/quality_model.h), so a quantisation what-if shows "faster but worse".
  double quality_accuracy = 1.0;
};

// The embedded engine's answers to `evals` (items with a reference answer), keyed by the
// prompt as the server tokenises it.
std::shared_ptr<const serve::EvalAnswers> BuildEvalAnswers(const std::vector<bench::EvalItem>& evals);

// The accuracy the embedded engine answers a card's eval set with: `accuracy` x the factor
// of the card's weight precision. InvalidArgument unless accuracy is in [0, 1].
Result<double> EffectiveQualityAccuracy(double accuracy, const card::WorkloadCard& card);

struct Embedded {
  std::unique_ptr<serve::Server> server;
  std::string url;          // "http://127.0.0.1:PORT" ("http://localhost" on a Unix socket)
  nlohmann::json manifest;  // {"embedded_server": {...}} for manifest.json
  std::string note;         // why the twin could not be used ("" when it is)
};

Result<Embedded> StartEmbedded(const card::WorkloadCard& card, const EmbeddedOptions& options);

class JobEngine {
 public:
  // `target` not empty: that server, nothing is started (options are not used). Empty: an
  // embedded engine for `card` (StartEmbedded; InvalidArgument on a bad --speedup/--faults).
  static Result<JobEngine> Open(const std::string& target, const card::WorkloadCard& card,
                                const EmbeddedOptions& options);

  const std::string& url() const { return url_; }
  bool embedded() const { return embedded_.server != nullptr; }
  // Engine time over wall time: the embedded engine's speed-up; 1 against a target.
  double speedup() const { return speedup_; }
  // Why the embedded engine is not the twin ("" when it is, or against a target).
  const std::string& note() const { return embedded_.note; }
  // Points a bench at the engine: its URL and, embedded, manifest.json's "embedded_server".
  void Apply(bench::BenchOptions* opt) const;
  // Stops the embedded engine now (idempotent; the destructor does it too).
  void Stop();

 private:
  std::string url_;
  double speedup_ = 1.0;
  Embedded embedded_;
};

}  // namespace infereng::job
