#include "report/run_data.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "metrics/records_io.h"
#include "metrics/summary_json.h"

namespace infereng::report {

namespace fs = std::filesystem;

Result<RunData> LoadRunDir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(fmt::format("{}: not a directory", dir));
  RunData d;
  d.dir = dir;
  bool any = false;

  for (const char* name : {"requests.jsonl", "records.jsonl", "trial-1/requests.jsonl"}) {
    std::string path = (fs::path(dir) / name).string();
    if (!fs::exists(path, ec)) continue;
    if (std::string_view(name).starts_with("trial-")) {
      int trials = 0;
      while (fs::exists(fs::path(dir) / fmt::format("trial-{}", trials + 1), ec)) ++trials;
      d.notes.push_back(fmt::format("{} trials: the per-request charts show trial 1 (as does the summary); each trial's "
                                    "records are in trial-K/, the 95% confidence intervals across trials in summary.json",
                                    trials));
    }
    any = true;
    d.records_file = path;
    Status st = metrics::ForEachRecordInFile(path, [&](metrics::RequestRecord&& r) {
      RequestRow row;
      row.m = metrics::DeriveRequest(r);
      row.record = std::move(r);
      d.rows.push_back(std::move(row));
      return Status::Ok();
    }, &d.skipped);
    if (!st.ok()) d.problems.push_back(fmt::format("{} (the records before it are shown)", st.message()));
    if (d.skipped.count > 0) d.problems.push_back(d.skipped.Describe(path));
    break;
  }
  if (d.records_file.empty()) d.problems.push_back("requests.jsonl: missing (no per-request charts)");

  std::string summary_path = (fs::path(dir) / "summary.json").string();
  if (fs::exists(summary_path, ec)) {
    any = true;
    auto s = metrics::ReadSummaryFile(summary_path);
    if (s.ok()) {
      d.summary = std::move(*s);
    } else {
      d.problems.push_back(s.status().message());
    }
    std::ifstream in(summary_path);
    nlohmann::json raw = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (raw.is_object() && raw.contains("trials") && raw["trials"].is_object()) d.trials = raw["trials"];
    if (raw.is_object() && raw.contains("quality") && raw["quality"].is_object()) {
      Result<metrics::QualityReport> q = metrics::QualityReportFromJson(raw["quality"]);
      if (q.ok()) {
        d.quality = std::move(q).value();
      } else {
        d.problems.push_back("summary.json: " + q.status().message());
      }
    }
    // The run's own notes (prompt-length exactness, retries, model mismatch) belong in the
    // report as on the terminal.
    if (raw.is_object() && raw.contains("notes") && raw["notes"].is_array()) {
      for (const auto& n : raw["notes"]) {
        if (n.is_string()) d.notes.push_back(n.get<std::string>());
      }
    }

    if (raw.is_object() && raw.contains("prediction") && raw["prediction"].is_object()) d.prediction = raw["prediction"];
  } else {
    d.problems.push_back("summary.json: missing (no run-level figures)");
  }

  std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  if (fs::exists(manifest_path, ec)) {
    any = true;
    std::ifstream in(manifest_path);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      d.problems.push_back(manifest_path + ": not valid JSON");
    } else {
      d.manifest = std::move(j);
    }
  } else {
    d.problems.push_back("manifest.json: missing");
  }
  if (!any) {
    return Status::NotFound(fmt::format("{}: no requests.jsonl, summary.json or manifest.json: not a run directory", dir));
  }
  return d;
}

}  // namespace infereng::report
