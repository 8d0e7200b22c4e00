#include "store/history_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "core/clock.h"

namespace infereng::store {
namespace {

// The migrations, in order: kMigrations[i] takes the schema from version i to i + 1.
// Append-only (an old database replays the ones it has not seen).
constexpr const char* kMigrations[] = {
    // 1: runs and their headline metrics.
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  registered_at TEXT NOT NULL,
  started_at TEXT NOT NULL DEFAULT '',
  dir TEXT,
  card_name TEXT NOT NULL DEFAULT '',
  card_sha256 TEXT NOT NULL DEFAULT '',
  target TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  model_revision TEXT NOT NULL DEFAULT '',
  engine TEXT NOT NULL DEFAULT '',
  engine_version TEXT NOT NULL DEFAULT '',
  hardware TEXT NOT NULL DEFAULT '',
  tool_version TEXT NOT NULL DEFAULT '',
  git_commit TEXT NOT NULL DEFAULT '',
  seed INTEGER,
  load TEXT NOT NULL DEFAULT '{}',
  partial INTEGER NOT NULL DEFAULT 0,
  slo_pass INTEGER
);
CREATE UNIQUE INDEX runs_dir ON runs(dir, started_at) WHERE dir IS NOT NULL;
CREATE INDEX runs_card ON runs(card_name, registered_at);
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  ci_low REAL,
  ci_high REAL,
  PRIMARY KEY (run_id, name)
);
)sql",
    // 2: the manifest as written, and one row per SLO objective.
    R"sql(
ALTER TABLE runs ADD COLUMN manifest TEXT NOT NULL DEFAULT '';
CREATE TABLE slo_verdicts (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  objective TEXT NOT NULL,
  pass INTEGER NOT NULL,
  value REAL,
  PRIMARY KEY (run_id, objective)
);
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion, "one migration per schema version");

// A prepared statement, finalized on scope exit. Bind indexes are 1-based.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void Bind(int i, const std::string& s) { sqlite3_bind_text(st_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT); }
  void BindNullable(int i, const std::string& s) {
    if (s.empty()) {
      sqlite3_bind_null(st_, i);
    } else {
      Bind(i, s);
    }
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(st_, i, v); }
  void Bind(int i, double v) { sqlite3_bind_double(st_, i, v); }
  template <typename T>
  void Bind(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      sqlite3_bind_null(st_, i);
    }
  }
  int Step() { return sqlite3_step(st_); }
  std::string Text(int c) const {
    const unsigned char* t = sqlite3_column_text(st_, c);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(st_, c))) : "";
  }
  bool Null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  int64_t Int(int c) const { return sqlite3_column_int64(st_, c); }
  double Real(int c) const { return sqlite3_column_double(st_, c); }
  std::optional<double> OptReal(int c) const { return Null(c) ? std::nullopt : std::optional<double>(Real(c)); }

 private:
  sqlite3_stmt* st_ = nullptr;
  int rc_;
};

Status SqlError(sqlite3* db, const std::string& path, const std::string& what) {
  return Status::IoError("history " + path + ": " + what + ": " + sqlite3_errmsg(db));
}

// Rolls back on scope exit unless committed: an error path never leaves a transaction open.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  int Begin() {
    const int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    open_ = rc == SQLITE_OK;
    return rc;
  }
  int Commit() {
    const int rc = sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) open_ = false;
    return rc;
  }

 private:
  sqlite3* db_;
  bool open_ = false;
};

constexpr const char* kRunColumns =
    "id, kind, registered_at, started_at, dir, card_name, card_sha256, target, model, model_revision, engine, "
    "engine_version, hardware, tool_version, git_commit, seed, load, partial, slo_pass, manifest";

RunEntry RowToEntry(const Stmt& s) {
  RunEntry e;
  e.id = s.Int(0);
  e.kind = s.Text(1);
  e.registered_at = s.Text(2);
  e.started_at = s.Text(3);
  e.dir = s.Text(4);
  e.card_name = s.Text(5);
  e.card_sha256 = s.Text(6);
  e.target = s.Text(7);
  e.model = s.Text(8);
  e.model_revision = s.Text(9);
  e.engine = s.Text(10);
  e.engine_version = s.Text(11);
  e.hardware = s.Text(12);
  e.tool_version = s.Text(13);
  e.git_commit = s.Text(14);
  if (!s.Null(15)) e.seed = s.Int(15);
  e.load = s.Text(16);
  e.partial = s.Int(17) != 0;
  if (!s.Null(18)) e.slo_pass = s.Int(18) != 0;
  e.manifest = s.Text(19);
  return e;
}

// WHERE clause for a filter; its parameters bound in order by BindFilter.
std::string FilterSql(const ListFilter& f) {
  std::string w = " WHERE 1=1";
  if (!f.card.empty()) w += " AND card_name = ?";
  if (!f.target.empty()) w += " AND target = ?";
  if (!f.since.empty()) w += " AND registered_at >= ?";
  if (!f.kind.empty()) w += " AND kind = ?";
  return w;
}

int BindFilter(Stmt& s, const ListFilter& f) {
  int i = 1;
  for (const std::string* v : {&f.card, &f.target, &f.since, &f.kind}) {
    if (!v->empty()) s.Bind(i++, *v);
  }
  return i;
}

}  // namespace

const MetricValue* RunEntry::Metric(const std::string& name) const {
  for (const MetricValue& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<std::unique_ptr<HistoryDb>> HistoryDb::Open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return Status::IoError("history " + path + ": cannot create its folder: " + ec.message());
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::IoError("history " + path + ": cannot open: " + msg);
  }
  std::unique_ptr<HistoryDb> h(new HistoryDb(db, path));
  // The busy timeout first: the WAL switch and the migration wait for another writer too.
  sqlite3_busy_timeout(db, 15000);
  INFERENG_RETURN_IF_ERROR(h->Exec("PRAGMA journal_mode=WAL"));
  INFERENG_RETURN_IF_ERROR(h->Exec("PRAGMA synchronous=NORMAL"));
  INFERENG_RETURN_IF_ERROR(h->Exec("PRAGMA foreign_keys=ON"));
  INFERENG_RETURN_IF_ERROR(h->Migrate());
  return h;
}

HistoryDb::~HistoryDb() { sqlite3_close(db_); }

Status HistoryDb::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return Status::IoError("history " + path_ + ": " + msg);
  }
  return Status::Ok();
}

Status HistoryDb::Migrate() {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return SqlError(db_, path_, "cannot lock for the schema check");
  INFERENG_RETURN_IF_ERROR(Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  int version = 0;
  {
    Stmt s(db_, "SELECT MAX(version) FROM schema_version");
    if (!s.ok() || s.Step() != SQLITE_ROW) return SqlError(db_, path_, "reading schema_version");
    version = s.Null(0) ? 0 : static_cast<int>(s.Int(0));
  }
  if (version > kSchemaVersion) {
    return Status::FailedPrecondition("history " + path_ + ": schema version " + std::to_string(version) +
                                      " was written by a newer infereng (this one knows up to " +
                                      std::to_string(kSchemaVersion) + "); upgrade infereng or pass --history ANOTHER.db");
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    if (Status s = Exec(kMigrations[v]); !s.ok()) return s.WithContext("migrating to schema " + std::to_string(v + 1));
  }
  if (version < kSchemaVersion) {
    INFERENG_RETURN_IF_ERROR(Exec("DELETE FROM schema_version"));
    INFERENG_RETURN_IF_ERROR(Exec("INSERT INTO schema_version(version) VALUES (" + std::to_string(kSchemaVersion) + ")"));
  }
  if (tx.Commit() != SQLITE_OK) return SqlError(db_, path_, "committing the schema");
  version_ = kSchemaVersion;
  return Status::Ok();
}

Result<int64_t> HistoryDb::Insert(const RunEntry& e) {
  Transaction tx(db_);
  if (tx.Begin() != SQLITE_OK) return SqlError(db_, path_, "cannot lock for writing");
  int64_t id = 0;
  {
    Stmt s(db_,
           "INSERT INTO runs (kind, registered_at, started_at, dir, card_name, card_sha256, target, model, "
           "model_revision, engine, engine_version, hardware, tool_version, git_commit, seed, load, partial, slo_pass, "
           "manifest) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!s.ok()) return SqlError(db_, path_, "preparing the insert");
    s.Bind(1, e.kind);
    s.Bind(2, e.registered_at.empty() ? WallTimeIso8601() : e.registered_at);
    int i = 3;
    s.Bind(i++, e.started_at);
    s.BindNullable(i++, e.dir);
    for (const std::string* v : {&e.card_name, &e.card_sha256, &e.target, &e.model, &e.model_revision, &e.engine,
                                 &e.engine_version, &e.hardware, &e.tool_version, &e.git_commit}) {
      s.Bind(i++, *v);
    }
    s.Bind(i++, e.seed);
    s.Bind(i++, e.load.empty() ? std::string("{}") : e.load);
    s.Bind(i++, static_cast<int64_t>(e.partial));
    s.Bind(i++, e.slo_pass ? std::optional<int64_t>(*e.slo_pass ? 1 : 0) : std::nullopt);
    s.Bind(i++, e.manifest);
    if (s.Step() != SQLITE_DONE) return SqlError(db_, path_, "inserting the run");
    id = sqlite3_last_insert_rowid(db_);
  }
  for (const MetricValue& m : e.metrics) {
    Stmt s(db_, "INSERT OR REPLACE INTO metrics (run_id, name, value, ci_low, ci_high) VALUES (?,?,?,?,?)");
    s.Bind(1, id);
    s.Bind(2, m.name);
    s.Bind(3, m.value);
    s.Bind(4, m.ci_low);
    s.Bind(5, m.ci_high);
    if (s.Step() != SQLITE_DONE) return SqlError(db_, path_, "inserting metric " + m.name);
  }
  for (const SloVerdict& v : e.slos) {
    Stmt s(db_, "INSERT OR REPLACE INTO slo_verdicts (run_id, objective, pass, value) VALUES (?,?,?,?)");
    s.Bind(1, id);
    s.Bind(2, v.objective);
    s.Bind(3, static_cast<int64_t>(v.pass));
    s.Bind(4, v.value);
    if (s.Step() != SQLITE_DONE) return SqlError(db_, path_, "inserting SLO verdict " + v.objective);
  }
  if (tx.Commit() != SQLITE_OK) return SqlError(db_, path_, "committing the run");
  return id;
}

Result<std::optional<int64_t>> HistoryDb::FindRun(const std::string& dir, const std::string& started_at) {
  Stmt s(db_, "SELECT id FROM runs WHERE dir = ? AND started_at = ?");
  s.Bind(1, dir);
  s.Bind(2, started_at);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::optional<int64_t>(s.Int(0));
  if (rc != SQLITE_DONE) return SqlError(db_, path_, "looking up " + dir);
  return std::optional<int64_t>();
}

Status HistoryDb::LoadDetails(RunEntry* e) {
  {
    Stmt s(db_, "SELECT name, value, ci_low, ci_high FROM metrics WHERE run_id = ? ORDER BY name");
    s.Bind(1, e->id);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) e->metrics.push_back({s.Text(0), s.Real(1), s.OptReal(2), s.OptReal(3)});
    if (rc != SQLITE_DONE) return SqlError(db_, path_, "reading metrics");
  }
  Stmt s(db_, "SELECT objective, pass, value FROM slo_verdicts WHERE run_id = ? ORDER BY objective");
  s.Bind(1, e->id);
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) e->slos.push_back({s.Text(0), s.Int(1) != 0, s.OptReal(2)});
  if (rc != SQLITE_DONE) return SqlError(db_, path_, "reading SLO verdicts");
  return Status::Ok();
}

Result<std::vector<RunEntry>> HistoryDb::List(const ListFilter& f) {
  // Newest N when limited, returned oldest first either way.
  std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs" + FilterSql(f) + " ORDER BY id DESC";
  if (f.limit > 0) sql += " LIMIT " + std::to_string(f.limit);
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return SqlError(db_, path_, "preparing the list");
  BindFilter(s, f);
  std::vector<RunEntry> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(RowToEntry(s));
  if (rc != SQLITE_DONE) return SqlError(db_, path_, "listing runs");
  std::reverse(out.begin(), out.end());
  for (RunEntry& e : out) INFERENG_RETURN_IF_ERROR(LoadDetails(&e));
  return out;
}

Result<RunEntry> HistoryDb::Get(int64_t id) {
  Stmt s(db_, (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?").c_str());
  s.Bind(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return Status::NotFound("history: no run #" + std::to_string(id) + " in " + path_);
  if (rc != SQLITE_ROW) return SqlError(db_, path_, "reading run #" + std::to_string(id));
  RunEntry e = RowToEntry(s);
  INFERENG_RETURN_IF_ERROR(LoadDetails(&e));
  return e;
}

namespace {
// Kinds whose entry is not one comparable run (the one list both checks read).
constexpr std::string_view kNotRunKinds[] = {"sweep", "canary", "probe"};
}  // namespace

bool IsComparableRunKind(std::string_view kind) {
  return std::find(std::begin(kNotRunKinds), std::end(kNotRunKinds), kind) == std::end(kNotRunKinds);
}

Result<RunEntry> HistoryDb::LatestPassing(const ListFilter& f) {
  // Without a kind filter, only comparable runs: a passing probe suite or a "go" canary is
  // not a baseline for a run.
  std::string kinds;
  if (f.kind.empty()) {
    for (std::string_view k : kNotRunKinds) kinds += (kinds.empty() ? " AND kind NOT IN ('" : ", '") + std::string(k) + "'";
    kinds += ")";
  }
  const std::string sql = std::string("SELECT ") + kRunColumns + " FROM runs" + FilterSql(f) + kinds +
                          " AND partial = 0 AND slo_pass = 1 ORDER BY id DESC LIMIT 1";
  Stmt s(db_, sql.c_str());
  BindFilter(s, f);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return Status::NotFound("history: no complete run that passed its SLOs matches");
  if (rc != SQLITE_ROW) return SqlError(db_, path_, "looking up the latest passing run");
  RunEntry e = RowToEntry(s);
  INFERENG_RETURN_IF_ERROR(LoadDetails(&e));
  return e;
}

}  // namespace infereng::store
