#include "store/history_db.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace infereng::store {
namespace {

namespace fs = std::filesystem;

class HistoryDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("infereng-history-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "sub" / "history.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static RunEntry Entry(const std::string& card, double ttft_p99, bool pass) {
    RunEntry e;
    e.kind = "bench";
    e.card_name = card;
    e.target = "http://127.0.0.1:8000";
    e.seed = 42;
    e.slo_pass = pass;
    e.metrics = {{"ttft_ms.p99", ttft_p99, ttft_p99 - 1, ttft_p99 + 1}, {"output_tokens_per_s", 100, {}, {}}};
    e.slos = {{"ttft p99 <= 500 ms", pass, ttft_p99}};
    return e;
  }

  int64_t Count(const char* table) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, (std::string("SELECT COUNT(*) FROM ") + table).c_str(), -1, &st, nullptr);
    int64_t n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(HistoryDbTest, InsertsAndReadsBackWithMetricsAndVerdicts) {
  auto db = HistoryDb::Open(path_);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
  RunEntry e = Entry("chat", 420, true);
  e.dir = "/runs/a";
  auto id = (*db)->Insert(e);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto back = (*db)->Get(*id);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->card_name, "chat");
  EXPECT_EQ(back->dir, "/runs/a");
  EXPECT_EQ(back->seed, 42);
  ASSERT_TRUE(back->slo_pass.has_value());
  EXPECT_TRUE(*back->slo_pass);
  ASSERT_NE(back->Metric("ttft_ms.p99"), nullptr);
  EXPECT_DOUBLE_EQ(back->Metric("ttft_ms.p99")->value, 420);
  EXPECT_EQ(back->Metric("ttft_ms.p99")->ci_high, 421);
  EXPECT_FALSE(back->Metric("output_tokens_per_s")->ci_low.has_value());
  ASSERT_EQ(back->slos.size(), 1u);
  EXPECT_FALSE(back->registered_at.empty());
  auto by_dir = (*db)->FindRun("/runs/a", "");
  ASSERT_TRUE(by_dir.ok());
  EXPECT_EQ(*by_dir, *id);
  // Another run in the same directory (after --force) is another entry.
  e.started_at = "2026-12-01T00:00:00Z";
  auto again = (*db)->Insert(e);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(*again, *id);
  EXPECT_FALSE((*db)->Insert(e).ok());  // but the same run twice is refused
  EXPECT_EQ((*db)->Get(*id + 100).status().code(), Status::Code::kNotFound);
}

TEST_F(HistoryDbTest, ListFiltersAndLatestPassing) {
  auto db = HistoryDb::Open(path_);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Insert(Entry("chat", 400, true)).ok());
  auto pass2 = (*db)->Insert(Entry("chat", 410, true));
  ASSERT_TRUE((*db)->Insert(Entry("chat", 900, false)).ok());
  ASSERT_TRUE((*db)->Insert(Entry("batch", 100, true)).ok());
  RunEntry partial = Entry("chat", 300, true);
  partial.partial = true;
  ASSERT_TRUE((*db)->Insert(partial).ok());
  auto chat = (*db)->List({.card = "chat"});
  ASSERT_TRUE(chat.ok());
  ASSERT_EQ(chat->size(), 4u);
  EXPECT_LT(chat->front().id, chat->back().id);  // oldest first
  auto last2 = (*db)->List({.card = "chat", .limit = 2});
  ASSERT_EQ(last2->size(), 2u);
  EXPECT_TRUE(last2->back().partial);
  // Latest passing skips the failed and the partial run.
  auto base = (*db)->LatestPassing({.card = "chat"});
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->id, *pass2);
  EXPECT_EQ((*db)->LatestPassing({.card = "none"}).status().code(), Status::Code::kNotFound);

  // A newer passing probe suite, canary and sweep of the same card are not baselines for a
  // run; asked for by kind, they are found.
  for (const char* kind : {"probe", "canary", "sweep"}) {
    RunEntry other = Entry("chat", 100, true);
    other.kind = kind;
    ASSERT_TRUE((*db)->Insert(other).ok());
    EXPECT_EQ((*db)->LatestPassing({.card = "chat"})->id, *pass2) << kind;
    auto by_kind = (*db)->LatestPassing({.card = "chat", .kind = kind});
    ASSERT_TRUE(by_kind.ok()) << kind;
    EXPECT_EQ(by_kind->kind, kind);
  }
  EXPECT_FALSE(IsComparableRunKind("probe"));
  EXPECT_TRUE(IsComparableRunKind("bench"));
}

// An older database (schema 1, as released) is upgraded in place: its rows stay, the new
// table and column appear.
TEST_F(HistoryDbTest, MigratesFromSchemaVersion1) {
  fs::create_directories(fs::path(path_).parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, registered_at TEXT NOT NULL,
  started_at TEXT NOT NULL DEFAULT '', dir TEXT, card_name TEXT NOT NULL DEFAULT '',
  card_sha256 TEXT NOT NULL DEFAULT '', target TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
  model_revision TEXT NOT NULL DEFAULT '', engine TEXT NOT NULL DEFAULT '', engine_version TEXT NOT NULL DEFAULT '',
  hardware TEXT NOT NULL DEFAULT '', tool_version TEXT NOT NULL DEFAULT '', git_commit TEXT NOT NULL DEFAULT '',
  seed INTEGER, load TEXT NOT NULL DEFAULT '{}', partial INTEGER NOT NULL DEFAULT 0, slo_pass INTEGER);
CREATE UNIQUE INDEX runs_dir ON runs(dir, started_at) WHERE dir IS NOT NULL;
CREATE INDEX runs_card ON runs(card_name, registered_at);
CREATE TABLE metrics (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, name TEXT NOT NULL,
  value REAL NOT NULL, ci_low REAL, ci_high REAL, PRIMARY KEY (run_id, name));
INSERT INTO runs (kind, registered_at, card_name, slo_pass) VALUES ('bench', '2026-11-01T00:00:00Z', 'old', 1);
INSERT INTO metrics VALUES (1, 'ttft_ms.p99', 250, NULL, NULL);
)sql";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  auto db = HistoryDb::Open(path_);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->schema_version(), 2);
  auto old = (*db)->Get(1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->card_name, "old");
  EXPECT_EQ(old->manifest, "");
  EXPECT_DOUBLE_EQ(old->Metric("ttft_ms.p99")->value, 250);
  // The new schema's parts work on the upgraded file.
  auto id = (*db)->Insert(Entry("old", 260, false));
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ((*db)->Get(*id)->slos.size(), 1u);
}

TEST_F(HistoryDbTest, RefusesANewerSchema) {
  { ASSERT_TRUE(HistoryDb::Open(path_).ok()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = HistoryDb::Open(path_);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(db.status().message().find("newer infereng"), std::string::npos);
}

// Two processes registering at once: every row of both lands (the busy timeout and
// BEGIN IMMEDIATE serialise the writers; nothing is lost to SQLITE_BUSY).
TEST_F(HistoryDbTest, ConcurrentWritersInTwoProcessesLoseNothing) {
  { ASSERT_TRUE(HistoryDb::Open(path_).ok()); }
  constexpr int kEach = 40;
  auto writer = [&](const std::string& card) {
    auto db = HistoryDb::Open(path_);
    if (!db.ok()) return 10;
    for (int i = 0; i < kEach; ++i) {
      if (!(*db)->Insert(Entry(card, 100 + i, true)).ok()) return 11;
    }
    return 0;
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(writer("child"));
  const int mine = writer("parent");
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(mine, 0);
  EXPECT_EQ(Count("runs"), 2 * kEach);
  EXPECT_EQ(Count("metrics"), 2 * 2 * kEach);
  auto db = HistoryDb::Open(path_);
  EXPECT_EQ((*db)->List({.card = "child"})->size(), static_cast<size_t>(kEach));
}

// A process killed in the middle of a write transaction leaves the database as before it.
TEST_F(HistoryDbTest, KilledWriterLeavesTheDatabaseConsistent) {
  {
    auto db = HistoryDb::Open(path_);
    ASSERT_TRUE((*db)->Insert(Entry("chat", 1, true)).ok());
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* raw = nullptr;
    if (sqlite3_open(path_.c_str(), &raw) != SQLITE_OK) ::_exit(1);
    sqlite3_exec(raw, "BEGIN IMMEDIATE; INSERT INTO runs (kind, registered_at) VALUES ('bench', 'x');"
                      "INSERT INTO metrics VALUES (last_insert_rowid(), 'm', 1, NULL, NULL);",
                 nullptr, nullptr, nullptr);
    ::raise(SIGKILL);  // mid-transaction, no rollback, no close
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  auto db = HistoryDb::Open(path_);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(Count("runs"), 1);
  EXPECT_EQ(Count("metrics"), 2);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(raw);
  // And it still takes writes.
  EXPECT_TRUE((*db)->Insert(Entry("chat", 2, true)).ok());
}

}  // namespace
}  // namespace infereng::store
