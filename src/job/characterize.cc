// The characterize job: read, characterise, write JSON, report and card section.
#include "job/characterize.h"

#include <filesystem>
#include <fstream>

#include "report/trace_report.h"
#include "trace/card_out.h"
#include "trace/characterization_json.h"

namespace infereng::job {
namespace {

Status WriteText(const std::string& path, const std::string& text, std::vector<std::string>* written) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::IoError("cannot write " + path);
  written->push_back(path);
  return Status::Ok();
}

const card::SloTarget* Lowest(const card::WorkloadCard& c, const std::string& metric) {
  const card::SloTarget* best = nullptr;
  for (const auto& t : c.slo.latency) {
    if (t.metric == metric && (best == nullptr || t.percentile < best->percentile)) best = &t;
  }
  return best;
}

std::string P(double p) {
  std::string s = std::to_string(p);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::optional<double> LatencyFromCard(const card::WorkloadCard& card, double mean_output_tokens, std::string* basis) {
  if (const card::SloTarget* e2e = Lowest(card, "e2e_ms")) {
    *basis = "the card's e2e p" + P(e2e->percentile) + " objective";
    return e2e->threshold_ms / 1e3;
  }
  const card::SloTarget* ttft = Lowest(card, "ttft_ms");
  const card::SloTarget* tpot = Lowest(card, "tpot_ms");
  if (ttft != nullptr && tpot != nullptr) {
    *basis = "the card's ttft p" + P(ttft->percentile) + " + tpot p" + P(tpot->percentile) +
             " x (mean output - 1)";
    return (ttft->threshold_ms + tpot->threshold_ms * std::max(0.0, mean_output_tokens - 1)) / 1e3;
  }
  *basis = "the card has no e2e objective, nor ttft and tpot objectives";
  return std::nullopt;
}

Result<CharacterizeJobResult> RunCharacterize(const CharacterizeJobOptions& options) {
  if (options.traces.empty()) return Status::InvalidArgument("no trace given");
  if (!options.card_out.empty() && options.traces.size() != 1) {
    return Status::InvalidArgument("--card-out writes one trace's traffic; give exactly one trace");
  }
  if (options.card_sessions && options.card_out.empty()) {
    return Status::InvalidArgument("--card-sessions shapes the card --card-out writes; give --card-out FILE");
  }
  CharacterizeJobResult result;
  for (const std::string& path : options.traces) {
    trace::CharacterizeOptions stats = options.stats;
    INFERENG_ASSIGN_OR_RETURN(trace::Characterization c, trace::CharacterizeFile(path, options.reader, stats));
    if (options.card) {
      std::string basis;
      if (auto w = LatencyFromCard(*options.card, c.output.stats.mean, &basis)) {
        c.littles = trace::ApplyLittlesLaw(c.arrivals, *w, basis);
      } else {
        result.littles_note = "Little's law: " + basis;
      }
    }
    result.traces.push_back(std::move(c));
  }
  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) return Status::IoError("cannot create " + options.out_dir + ": " + ec.message());
    nlohmann::json all = nlohmann::json::array();
    for (const auto& c : result.traces) all.push_back(trace::ToJson(c));
    const std::string dir = options.out_dir;
    INFERENG_RETURN_IF_ERROR(WriteText(dir + "/characterize.json", nlohmann::json{{"traces", all}}.dump(2) + "\n",
                                       &result.written));
    INFERENG_RETURN_IF_ERROR(WriteText(dir + "/report.html", report::TraceReportHtml(result.traces), &result.written));
  }
  if (!options.card_out.empty()) {
    const std::filesystem::path card_path(options.card_out);
    INFERENG_ASSIGN_OR_RETURN(trace::CardOut card, trace::TrafficCard(result.traces.front(), card_path.stem().string(),
                                                                      {.sessions = options.card_sessions}));
    const std::filesystem::path dir = card_path.parent_path();
    for (const auto& [name, body] : card.files) {
      INFERENG_RETURN_IF_ERROR(WriteText((dir / name).string(), body, &result.written));
    }
    INFERENG_RETURN_IF_ERROR(WriteText(options.card_out, card.yaml, &result.written));
  }
  return result;
}

}  // namespace infereng::job
