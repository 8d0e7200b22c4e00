// HistoryDb: the run history, one SQLite database (default ~/.local/share/infereng/history.db;
// job/history.h resolves the path). Every run, bench, sweep, simulate and merge registers one
// row: what it was (manifest facts), its headline metrics, its SLO verdicts and the path of
// its run directory. `history list/show/trend/export` read it; `history check`
// fetches a baseline by id or "latest-passing" through the same lookups.
//
// Durability and concurrency: WAL mode, a busy timeout, and every write in one
// BEGIN IMMEDIATE transaction, so two runs finishing at once both land (the second waits
// for the first's lock) and a process killed mid-write (Ctrl-C, kill -9) leaves the database
// as it was before that write: SQLite rolls the torn transaction back on the next open.
//
// Schema: a `schema_version` table holds one row; Open applies the migrations from that
// version up to kSchemaVersion in one transaction (an older database is upgraded in place,
// a newer one is refused rather than misread). Migrations are append-only: a released
// migration is never edited.
//
// Thread-safety: one HistoryDb per thread (SQLite's default serialized mode would allow
// more, but nothing needs it). Processes may share the file freely.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

struct sqlite3;

namespace infereng::store {

inline constexpr int kSchemaVersion = 2;

// One headline metric: "ttft_ms.p99", "output_tokens_per_s", ... with its 95% CI across
// trials when the run had several.
struct MetricValue {
  std::string name;
  double value = 0;
  std::optional<double> ci_low, ci_high;
};

// One SLO objective's verdict ("ttft p99 <= 500 ms", measured value, pass).
struct SloVerdict {
  std::string objective;
  bool pass = false;
  std::optional<double> value;
};

struct RunEntry {
  int64_t id = 0;              // assigned by Insert
  std::string kind;            // "run" | "bench" | "sweep" | "simulate" | "merge"
  std::string registered_at;   // ISO 8601 UTC; Insert sets it when empty
  std::string started_at;      // the run's start (manifest start_time_utc), "" unknown
  std::string dir;             // absolute path of the run directory, "" when none
  std::string card_name, card_sha256;
  std::string target;          // URL without secrets, "embedded", "twin"
  std::string model, model_revision;
  std::string engine, engine_version;
  std::string hardware;        // host name or accelerator
  std::string tool_version, git_commit;
  std::optional<int64_t> seed;
  std::string load;            // the load shape, JSON text
  bool partial = false;
  std::optional<bool> slo_pass;  // nullopt: the card has no SLOs
  std::string manifest;        // manifest.json text (schema 2)
  std::vector<MetricValue> metrics;
  std::vector<SloVerdict> slos;  // schema 2

  const MetricValue* Metric(const std::string& name) const;
};

// Kinds whose entry is one measured run directory that `compare` and `history check` can
// set against another (a sweep, a canary's two targets or a probe suite are not).
bool IsComparableRunKind(std::string_view kind);

struct ListFilter {
  std::string card{};    // card name, exact
  std::string target{};  // target URL, exact
  std::string since{};   // ISO 8601 date or time: registered at or after it
  std::string kind{};    // "" any
  int64_t limit = 0;   // 0: no limit (newest first when set)
};

class HistoryDb {
 public:
  // Opens (creating the file and its folder when missing) and migrates. FailedPrecondition
  // for a database written by a newer infereng; IoError naming the path otherwise.
  static Result<std::unique_ptr<HistoryDb>> Open(const std::string& path);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // Inserts one entry with its metrics and verdicts in one transaction; returns its id.
  Result<int64_t> Insert(const RunEntry& entry);
  // The entry registered for the run that started at `started_at` in directory `dir`
  // (absolute), if any. A later run in the same directory (--force) is another run.
  Result<std::optional<int64_t>> FindRun(const std::string& dir, const std::string& started_at);
  // Entries matching `f`, oldest first (with metrics and verdicts).
  Result<std::vector<RunEntry>> List(const ListFilter& f);
  // One entry; NotFound "history: no run #ID".
  Result<RunEntry> Get(int64_t id);
  // The newest entry matching `f` that is complete and passed its SLOs; NotFound when none.
  // Without f.kind only comparable runs (IsComparableRunKind) are candidates.
  Result<RunEntry> LatestPassing(const ListFilter& f);

  int schema_version() const { return version_; }
  const std::string& path() const { return path_; }

 private:
  HistoryDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Migrate();
  Status Exec(const std::string& sql);
  Status LoadDetails(RunEntry* e);

  sqlite3* db_;
  std::string path_;
  int version_ = 0;
};

}  // namespace infereng::store
