// Loading one run for compare: strict readers over the run directory's files, and the
// per-request resampling units of its in-window requests.
#include "job/compare_inputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "card/slo.h"
#include "metrics/derive.h"
#include "metrics/records_io.h"
#include "metrics/request_slo.h"
#include "metrics/summary_json.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;

// Slack on the window's edges: summary.json holds them in seconds (a double) and the
// records in milliseconds, so the last scheduled request may round a few ns past the end.
constexpr Nanos kWindowSlack = 1000;

// The per-request value of one latency key (the same definitions the summary pools).
const std::optional<double>* ScalarOf(const metrics::RequestMetrics& m, std::string_view key) {
  if (key == "ttft_ms") return &m.ttft_ms;
  if (key == "tpot_ms") return &m.tpot_ms;
  if (key == "e2e_ms") return &m.e2e_ms;
  if (key == "ttft_incl_queue_ms") return &m.ttft_incl_queue_ms;
  if (key == "e2e_incl_queue_ms") return &m.e2e_incl_queue_ms;
  return nullptr;
}

Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot be read");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path + ": not valid JSON");
  return j;
}

}  // namespace

namespace {

// Builds a RunInputs record by record (a 100k-request run is never held in memory whole).
class InputsBuilder {
 public:
  InputsBuilder(metrics::Summary summary, nlohmann::json manifest) {
    in_.summary = std::move(summary);
    in_.manifest = std::move(manifest);
    in_.has_records = true;
    const metrics::Summary& s = in_.summary;
    start_ = SecondsToNanos(s.window_start_s) - kWindowSlack;
    end_ = SecondsToNanos(s.window_end_s) + kWindowSlack;
    for (const metrics::ThresholdResult& t : s.goodput_thresholds) thresholds_.push_back(t.threshold);
  }

  void Add(const metrics::RequestRecord& r) {
    if (r.error == metrics::ErrorClass::kInterrupted) return;  // no server outcome (metrics.md)
    if (r.t_sched < start_ || r.t_sched > end_) return;
    ++in_window_;
    metrics::DeriveRequestInto(r, metrics::DeriveOptions{}, m_);
    ok_.push_back(r.ok() ? 1 : 0);
    good_.push_back(metrics::MeetsThresholds(r, m_, thresholds_, in_.summary.open_loop) && r.quality_pass != 0 ? 1 : 0);
    tokens_.push_back(r.ok() ? static_cast<double>(m_.output_tokens) : 0);
    if (!r.ok()) return;
    for (const char* key : kCompareLatencyKeys) {
      if (const std::optional<double>* v = ScalarOf(m_, key); v && v->has_value()) scalars_[key].push_back(**v);
    }
    itl_.AddUnit(m_.itl_ms);
  }

  RunInputs Finish() && {
    for (const char* key : kCompareLatencyKeys) {
      if (std::string_view(key) == "itl_ms") continue;
      in_.latency[key] = metrics::UnitSample::OnePerUnit(scalars_[key]);
    }
    in_.latency["itl_ms"] = std::move(itl_);
    in_.ok = metrics::UnitSample::OnePerUnit(ok_);
    in_.good = metrics::UnitSample::OnePerUnit(good_);
    in_.tokens = metrics::UnitSample::OnePerUnit(tokens_);
    if (in_window_ != in_.summary.counts.in_window) {
      in_.notes.push_back(fmt::format("{} in-window requests found in the records, the summary counts {} (the "
                                      "intervals use the records)",
                                      in_window_, in_.summary.counts.in_window));
    }
    return std::move(in_);
  }

 private:
  RunInputs in_;
  Nanos start_ = 0, end_ = 0;
  std::vector<card::RequestThreshold> thresholds_;
  std::map<std::string, std::vector<double>> scalars_;
  std::vector<double> ok_, good_, tokens_;
  metrics::UnitSample itl_;
  metrics::RequestMetrics m_;
  int64_t in_window_ = 0;
};

}  // namespace

RunInputs RunInputsFromRecords(metrics::Summary summary, const std::vector<metrics::RequestRecord>& records,
                               nlohmann::json manifest) {
  InputsBuilder b(std::move(summary), std::move(manifest));
  for (const metrics::RequestRecord& r : records) b.Add(r);
  return std::move(b).Finish();
}

Result<RunInputs> LoadRunInputs(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(dir + ": not a directory");
  const std::string summary_path = (fs::path(dir) / "summary.json").string();
  if (!fs::exists(summary_path, ec)) {
    return Status::NotFound(summary_path + ": missing (compare needs a run directory: summary.json, requests.jsonl)");
  }
  INFERENG_ASSIGN_OR_RETURN(metrics::Summary summary, metrics::ReadSummaryFile(summary_path));
  INFERENG_ASSIGN_OR_RETURN(nlohmann::json raw, ReadJsonFile(summary_path));
  Result<SummaryExtras> extras = SummaryExtrasFromJson(raw);
  if (!extras.ok()) return extras.status().WithContext(summary_path);

  nlohmann::json manifest;
  const std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  if (fs::exists(manifest_path, ec)) {
    INFERENG_ASSIGN_OR_RETURN(manifest, ReadJsonFile(manifest_path));
  }

  std::string records_path;
  std::string note;
  for (const char* name : {"requests.jsonl", "records.jsonl", "trial-1/requests.jsonl"}) {
    const std::string p = (fs::path(dir) / name).string();
    if (!fs::exists(p, ec)) continue;
    records_path = p;
    if (std::string_view(name).starts_with("trial-")) {
      note = "--trials run: trial 1's requests are compared (summary.json is trial 1's; the 95% intervals across "
             "trials are in its \"trials\")";
    }
    break;
  }
  RunInputs in;
  if (records_path.empty()) {
    in.summary = std::move(summary);
    in.manifest = std::move(manifest);
    in.notes.push_back(dir + ": no requests.jsonl: the summary's figures are compared without intervals");
  } else {
    InputsBuilder b(std::move(summary), std::move(manifest));
    INFERENG_RETURN_IF_ERROR(metrics::ForEachRecordInFile(records_path, [&](metrics::RequestRecord&& r) {
      b.Add(r);
      return Status::Ok();
    }));
    in = std::move(b).Finish();
    if (!note.empty()) in.notes.insert(in.notes.begin(), note);
  }
  in.dir = dir;
  in.label = fs::path(dir).filename().string();
  if (in.label.empty()) in.label = fs::path(dir).parent_path().filename().string();
  in.quality = extras->quality;
  return in;
}

}  // namespace infereng::job
