#include "cli/output_dir.h"

#include <ctime>
#include <filesystem>

#include "core/path_names.h"

namespace infereng::cli {
namespace {

namespace fs = std::filesystem;

bool IsArtefact(const std::string& name) {
  for (std::string_view a : OutputArtefacts()) {
    if (name == a) return true;
    if (a == "trial-" && name.starts_with("trial-") && name.size() > 6 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string TimestampedOutputDir(std::string_view prefix, std::string_view name, std::string_view fallback) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return std::string(prefix) + SafePathComponent(name, fallback) + "-" + stamp;
}

const std::vector<std::string_view>& OutputArtefacts() {
  static const std::vector<std::string_view> kArtefacts = {
      // bench / run (job/bench_job.cc, job/prediction.cc)
      "manifest.json", "summary.json", "requests.jsonl", "cold_requests.jsonl", "engine_metrics_before.prom",
      "engine_metrics_after.prom", "engine_metrics.jsonl", "trial-", "predicted",
      // sweep (cli/cmd_sweep.cc, sweep/runner.cc)
      "sweep.json", "sweep.csv", "points",
      // the report (report/report.cc, report/report_files.cc)
      "report.html", "report.md", "requests.csv", "timeseries.csv", "diagnose.json"};
  return kArtefacts;
}

Status PrepareOutputDir(const std::string& dir, bool force) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return Status::Ok();  // the run creates it when it writes
  if (!fs::is_directory(st)) return Status::FailedPrecondition("--out " + dir + ": exists and is not a directory");
  std::vector<std::string> names, artefacts;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (IsArtefact(n)) artefacts.push_back(n);
    names.push_back(std::move(n));
  }
  if (ec) return Status::IoError("--out " + dir + ": " + ec.message());
  if (names.empty()) return Status::Ok();
  if (!force) {
    std::string some;
    for (size_t i = 0; i < names.size() && i < 3; ++i) some += (i ? ", " : "") + names[i];
    if (names.size() > 3) some += ", ...";
    return Status::FailedPrecondition("--out " + dir + ": not empty (" + some +
                                      "); an earlier run's files would mix with this one's. Choose another "
                                      "directory, or pass --force to replace the earlier run");
  }
  if (artefacts.empty()) {
    return Status::FailedPrecondition("--out " + dir +
                                      ": not empty and holds no infereng output; --force only replaces an earlier "
                                      "run's files, so choose another directory");
  }
  for (const std::string& n : artefacts) {
    fs::remove_all(fs::path(dir) / n, ec);
    if (ec) return Status::IoError("--out " + dir + ": cannot remove the earlier " + n + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace infereng::cli
