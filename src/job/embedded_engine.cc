#include "job/embedded_engine.h"

#include <filesystem>

#include "serve/paced_engine.h"
#include "serve/text_model.h"
#include "serve/twin_engine.h"
#include "twin/quality_model.h"

namespace infereng::job {

std::shared_ptr<const serve::EvalAnswers> BuildEvalAnswers(const std::vector<bench::EvalItem>& evals) {
  auto answers = std::make_shared<serve::EvalAnswers>();
  for (const bench::EvalItem& item : evals) {
    if (item.answer.empty()) continue;  // nothing known to pass: the engine's filler answers it
    std::vector<uint32_t> ids;
    const nlohmann::json& m = item.prompt.messages;
    if (m.is_array()) {
      // The server's rule (text_model.h): the messages' text contents, in order.
      for (const nlohmann::json& msg : m) {
        if (!msg.is_object() || !msg.contains("content")) continue;
        const nlohmann::json& c = msg["content"];
        if (c.is_string()) serve::TokenizeAppend(c.get_ref<const std::string&>(), ids);
        if (c.is_array()) {
          for (const nlohmann::json& part : c) {
            if (part.is_object() && part.contains("text") && part["text"].is_string()) {
              serve::TokenizeAppend(part["text"].get_ref<const std::string&>(), ids);
            }
          }
        }
      }
    } else {
      serve::TokenizeAppend(item.prompt.text, ids);
    }
    answers->Add(ids, {.right = item.answer, .wrong = bench::WrongAnswer(item)});
  }
  return answers;
}

Result<double> EffectiveQualityAccuracy(double accuracy, const card::WorkloadCard& card) {
  if (!(accuracy >= 0 && accuracy <= 1)) return Status::InvalidArgument("--quality-accuracy: must be in [0, 1]");
  return accuracy * twin::PrecisionAccuracyFactor(card.model.precision);
}

Result<Embedded> StartEmbedded(const card::WorkloadCard& card, const EmbeddedOptions& options) {
  if (!(options.speedup > 0)) return Status::InvalidArgument("--speedup: must be > 0");
  serve::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.speedup = options.speedup;
  so.seed = options.seed;
  so.unix_socket = options.unix_socket;
  if (!card.model.id.empty()) so.model_name = card.model.id;
  if (!options.faults.empty()) {
    INFERENG_ASSIGN_OR_RETURN(so.faults, serve::ParseFaultSpec(options.faults));
  }
  // The twin, configured from the card; a card without a model architecture or an
  // accelerator cannot drive it, so the fixed-cost paced engine stands in (and says so).
  std::string engine_desc;
  std::unique_ptr<serve::EnginePort> engine;
  Embedded e;
  {
    std::string desc;
    Result<std::unique_ptr<serve::EnginePort>> twin = serve::MakeTwinEngineForCard(card, {}, &desc);
    if (twin.ok()) {
      engine = std::move(twin).value();
      engine_desc = "twin: " + desc;
    } else {
      engine = std::make_unique<serve::PacedEngine>(serve::PacedEngineOptions{});
      engine_desc = "paced (fixed-cost) engine";
      e.note = "embedded engine: the twin needs " + twin.status().message() + "; using the fixed-cost paced engine";
    }
  }
  // The card's eval set, answered (an assumed placeholder that does not exist is skipped,
  // as the bench job skips it).
  double accuracy = 0;
  INFERENG_ASSIGN_OR_RETURN(accuracy, EffectiveQualityAccuracy(options.quality_accuracy, card));
  std::error_code ec;
  const std::string& evals = card.quality.eval_set;
  if (!evals.empty() && (std::filesystem::exists(evals, ec) || !card.Assumed("quality.eval_set"))) {
    INFERENG_ASSIGN_OR_RETURN(std::vector<bench::EvalItem> items, bench::LoadEvalSet(evals));
    so.eval_answers = BuildEvalAnswers(items);
    so.quality_accuracy = accuracy;
  }
  e.server = std::make_unique<serve::Server>(so, std::move(engine));
  INFERENG_ASSIGN_OR_RETURN(uint16_t port, e.server->Start());
  e.url = options.unix_socket.empty() ? "http://127.0.0.1:" + std::to_string(port) : "http://localhost";
  e.manifest = {{"embedded_server",
                 {{"engine", engine_desc}, {"speedup", options.speedup}, {"seed", options.seed},
                  {"faults", options.faults}, {"model_name", so.model_name},
                  {"eval_answers", so.eval_answers ? nlohmann::json(so.eval_answers->size()) : nlohmann::json(nullptr)},
                  {"quality_accuracy", so.eval_answers ? nlohmann::json(so.quality_accuracy) : nlohmann::json(nullptr)},
                  {"transport", options.unix_socket.empty() ? "tcp" : "unix:" + options.unix_socket}}}};
  return e;
}

Result<JobEngine> JobEngine::Open(const std::string& target, const card::WorkloadCard& card,
                                  const EmbeddedOptions& options) {
  JobEngine e;
  if (!target.empty()) {
    e.url_ = target;
    return e;
  }
  INFERENG_ASSIGN_OR_RETURN(e.embedded_, StartEmbedded(card, options));
  e.url_ = e.embedded_.url;
  e.speedup_ = options.speedup;
  return e;
}

void JobEngine::Apply(bench::BenchOptions* opt) const {
  opt->target = url_;
  if (embedded()) opt->extra_manifest = embedded_.manifest;
}

void JobEngine::Stop() {
  if (embedded_.server) embedded_.server->Stop();
}

}  // namespace infereng::job
