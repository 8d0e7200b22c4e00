#include "report/report.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/clock.h"
#include "report/engine_sections.h"
#include "report/html_page.h"
#include "report/report_files.h"
#include "report/run_sections.h"
#include "report/sweep_sections.h"

namespace infereng::report {

namespace fs = std::filesystem;

namespace {

std::string Join(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

int CountCharts(const std::string& html) {
  int n = 0;
  for (std::size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++n;
  return n;
}

// The twin's prediction of the same run, when simulate wrote one beside it.
std::optional<RunData> LoadPredicted(const std::string& dir) {
  for (const char* sub : {"predicted", "simulated"}) {
    std::string p = Join(dir, sub);
    std::error_code ec;
    if (!fs::is_directory(p, ec)) continue;
    auto d = LoadRunDir(p);
    if (d.ok() && !d->rows.empty()) return std::move(*d);
  }
  return std::nullopt;
}

// The embedded engine's speed-up from a run's manifest (1 when none or not embedded).
double EmbeddedSpeedup(const nlohmann::json& manifest) {
  if (!manifest.is_object()) return 1;
  const nlohmann::json e = manifest.value("embedded_server", nlohmann::json());
  if (!e.is_object() || !e.contains("speedup") || !e["speedup"].is_number()) return 1;
  const double s = e["speedup"].get<double>();
  return s > 0 ? s : 1;
}

}  // namespace

Result<ReportFiles> WriteRunReport(const std::string& dir, const ReportOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(RunData run, LoadRunDir(dir));
  std::optional<RunData> predicted = LoadPredicted(dir);

  std::string name = CardNameOf(run.manifest);
  HtmlPage page("infereng report" + (name.empty() ? "" : " — " + name));
  std::vector<std::string> meta;
  meta.push_back(fmt::format("{} run · {} records · {}", run.summary ? run.summary->source : "unknown", run.rows.size(),
                             run.dir));
  meta.push_back("report generated " + WallTimeIso8601());
  page.Header("infereng report" + (name.empty() ? "" : " — " + name), meta);
  for (const std::string& p : run.problems) page.Notice(p);
  for (const std::string& n : run.notes) page.Notice(n, false);
  if (run.rows.empty() && run.summary && run.summary->counts.records == 0) page.Notice("This run has no requests.", false);
  if (predicted) {
    std::string window;
    if (predicted->prediction.is_object() && predicted->prediction.value("note", nlohmann::json()).is_string()) {
      window = " " + predicted->prediction["note"].get<std::string>() + ".";
    }
    page.Notice("Dashed curves are the twin's prediction of this workload (" + predicted->dir + ")." + window, false);
  }
  if (const double s = EmbeddedSpeedup(run.manifest); s != 1) {
    page.Notice(fmt::format("Time base: wall clock. The embedded engine ran {:g}x faster than the wall clock, so engine-time "
                            "latencies are {:g}x the ones shown and engine-time rates {:g}x lower.",
                            s, s, s),
                false);
  }
  AddDiagnosisSection(page, dir, "run");
  AddRunSections(page, run, {.id_prefix = "run", .predicted = predicted ? &*predicted : nullptr,
                             .waterfall_rows = options.waterfall_rows});
  AddEngineSignalsSection(page, run, "run");
  page.BeginSection("files", "Files");
  for (const char* f : {"requests.jsonl", "summary.json", "manifest.json", "requests.csv", "timeseries.csv", "report.md", "engine_metrics.jsonl", "diagnose.json"}) {
    page.LocalLink(f, f);
    page.AddRaw(" &middot; ");
  }
  page.EndSection();

  ReportFiles out;
  if (run.skipped.count > 0) out.warnings.push_back(run.skipped.Describe(run.records_file));
  std::string html = page.Finish();
  out.charts = CountCharts(html);
  out.html = Join(dir, "report.html");
  out.markdown = Join(dir, "report.md");
  INFERENG_RETURN_IF_ERROR(WriteTextFile(out.html, html));
  INFERENG_RETURN_IF_ERROR(WriteTextFile(out.markdown, RunMarkdown(run) + DiagnosisMarkdownSection(dir)));
  if (options.csv) {
    out.csv = {Join(dir, "requests.csv"), Join(dir, "timeseries.csv")};
    INFERENG_RETURN_IF_ERROR(WriteRequestsCsv(out.csv[0], run));
    INFERENG_RETURN_IF_ERROR(WriteTimeseriesCsv(out.csv[1], run));
  }
  return out;
}

Result<ReportFiles> WriteSweepReport(const std::string& dir, const ReportOptions& options) {
  INFERENG_ASSIGN_OR_RETURN(sweep::SweepFile f, sweep::ReadSweepJson(Join(dir, "sweep.json")));
  const sweep::SweepResult& r = f.result;
  std::vector<std::string> problems, warnings;
  if (options.point_reports) {
    for (const sweep::SweepPoint& p : r.points) {
      if (p.dir.empty()) continue;
      auto rep = WriteRunReport((fs::path(dir) / p.dir).string(), {.point_reports = false, .csv = options.csv,
                                                                   .waterfall_rows = options.waterfall_rows});
      if (!rep.ok()) problems.push_back(fmt::format("point {}: {}", p.dir, rep.status().message()));
      if (rep.ok()) warnings.insert(warnings.end(), rep->warnings.begin(), rep->warnings.end());
    }
  }

  std::string title = "infereng sweep" + (r.card_name.empty() ? "" : " — " + r.card_name);
  HtmlPage page(title);
  page.Header(title, {fmt::format("{} sweep by {} · {} points · target {}", r.source, sweep::LoadKindName(r.kind), r.points.size(),
                                  r.target.empty() ? "-" : r.target),
                      "report generated " + WallTimeIso8601()});
  for (const std::string& p : problems) page.Notice(p);
  if (r.points.empty()) page.Notice("This sweep has no points.");
  if (r.speedup != 1) {
    page.Notice(fmt::format("Time base: engine time. The embedded engine ran {:g}x faster than the wall clock; the "
                            "points' figures were converted (latencies x {:g}, rates / {:g}).",
                            r.speedup, r.speedup, r.speedup),
                false);
  }
  if (!f.predicted.empty()) {
    page.Notice("Dashed curves are the twin's prediction of each point: the same load over the same window, in engine "
                "time.",
                false);
  }
  AddSweepSections(page, f);

  // Detail of the most telling point: the max-goodput one, else the knee, else the last.
  std::optional<std::size_t> detail = r.max_goodput ? r.max_goodput : r.knee;
  if (!detail && !r.points.empty()) detail = r.points.size() - 1;
  if (detail && !r.points[*detail].dir.empty()) {
    const sweep::SweepPoint& p = r.points[*detail];
    auto run = LoadRunDir((fs::path(dir) / p.dir).string());
    if (r.speedup != 1) {
      // One time base per report: this one reads in engine time, the point's files are in
      // wall time (the embedded engine ran faster), so the detail stays in its own report.
      page.BeginSection("pt-detail", fmt::format("Detail @ {:.4g} {}", p.load, sweep::LoadUnit(r.kind)));
      page.Paragraph(fmt::format("Every figure above is in engine time. The points' own files and reports are in wall "
                                 "time (the embedded engine ran {:g}x faster than the wall clock) and say so; this "
                                 "point's detail:",
                                 r.speedup));
      page.LocalLink(p.dir + "/report.html", p.dir + "/report.html");
      page.EndSection();
    } else if (run.ok()) {
      std::string head = fmt::format("@ {:.4g} {} — ", p.load, sweep::LoadUnit(r.kind));
      AddRunSections(page, *run, {.id_prefix = "pt", .heading_prefix = head, .waterfall_rows = options.waterfall_rows,
                                  .definitions = false, .manifest = true});
    } else {
      page.Notice(fmt::format("point {}: {}", p.dir, run.status().message()));
    }
  }
  AddDefinitionsSection(page);
  page.BeginSection("files", "Files");
  for (const char* f2 : {"sweep.json", "sweep.csv", "report.md"}) {
    page.LocalLink(f2, f2);
    page.AddRaw(" &middot; ");
  }
  page.EndSection();

  ReportFiles out;
  out.sweep = true;
  out.warnings = std::move(warnings);
  std::string html = page.Finish();
  out.charts = CountCharts(html);
  out.html = Join(dir, "report.html");
  out.markdown = Join(dir, "report.md");
  INFERENG_RETURN_IF_ERROR(WriteTextFile(out.html, html));
  INFERENG_RETURN_IF_ERROR(WriteTextFile(out.markdown, SweepMarkdown(f)));
  if (options.csv) {
    out.csv = {Join(dir, "sweep.csv")};
    INFERENG_RETURN_IF_ERROR(sweep::WriteSweepCsv(out.csv[0], r));
  }
  return out;
}

Result<ReportFiles> WriteReport(const std::string& dir, const ReportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::NotFound(fmt::format("{}: not a directory", dir));
  if (fs::exists(Join(dir, "sweep.json"), ec)) return WriteSweepReport(dir, options);
  return WriteRunReport(dir, options);
}

}  // namespace infereng::report
