// `diagnose` on hand-built run directories with one injected bottleneck each: the right
// cause ranks first, with evidence numbers that match what the run holds.
#include "job/diagnose.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "job/diagnose_facts.h"
#include "metrics/records_io.h"
#include "metrics/summary.h"
#include "metrics/summary_json.h"

namespace infereng::job {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A 30 s open-loop run at 10 req/s (2 s warm-up) with knobs for one bottleneck at a time.
struct Scenario {
  int requests = 300;
  double interval_ms = 100;
  double lag_ms = 0.05;           // t_send - t_sched
  double lag_growth_ms = 0;       // added per request (a client that falls behind)
  double ttft_ms = 50;
  double queue_growth_ms = 0;     // added to TTFT per request (a growing queue)
  double ttft_per_prompt_ms = 0;  // TTFT grows with the prompt (prefill-bound)
  int prompt_min = 200, prompt_max = 200;
  double itl_ms = 10;
  int tokens = 30;
  bool stall_on_prefill = false;  // a decode gap holding another request's first token is 8x
  bool reported_phases = false;   // the engine's per-request `timings`: queue = the growth, prefill 40 ms
  int fail_every = 0;
  // The engine's canonical signals at t_s (engine_metrics.jsonl); empty: no file.
  std::function<json(double)> engine;
};

std::vector<metrics::RequestRecord> Records(const Scenario& s) {
  std::vector<metrics::RequestRecord> out;
  for (int i = 0; i < s.requests; ++i) {
    metrics::RequestRecord r;
    r.id = static_cast<uint64_t>(i);
    r.t_sched = MillisToNanos(i * s.interval_ms);
    r.t_send = r.t_sched + MillisToNanos(s.lag_ms + i * s.lag_growth_ms);
    r.t_first_byte = r.t_send + MillisToNanos(1);
    const int span = s.prompt_max - s.prompt_min;
    r.prompt_tokens = s.prompt_min + (span > 0 ? (i * 7919) % (span + 1) : 0);
    r.input_tokens_target = static_cast<int32_t>(r.prompt_tokens);
    r.output_tokens_target = s.tokens;
    r.http_status = 200;
    if (s.fail_every > 0 && i % s.fail_every == 0) {
      r.error = metrics::ErrorClass::kHttp5xx;
      r.http_status = 503;
      r.t_end = r.t_send + MillisToNanos(2);
      out.push_back(std::move(r));
      continue;
    }
    const double ttft = s.ttft_ms + i * s.queue_growth_ms + static_cast<double>(r.prompt_tokens) * s.ttft_per_prompt_ms +
                        (i % 5);
    r.chunks.push_back({r.t_send + MillisToNanos(ttft), 1, false});
    if (s.reported_phases) {
      r.server_queue = MillisToNanos(i * s.queue_growth_ms);
      r.server_prefill = MillisToNanos(40);
    }
    out.push_back(std::move(r));
  }
  std::vector<Nanos> firsts;
  for (const auto& r : out) {
    if (!r.chunks.empty()) firsts.push_back(r.chunks.front().t);
  }
  std::sort(firsts.begin(), firsts.end());
  for (auto& r : out) {
    if (r.chunks.empty()) continue;
    Nanos t = r.chunks.front().t;
    for (int k = 1; k < s.tokens; ++k) {
      Nanos gap = MillisToNanos(s.itl_ms + (k % 3) * 0.5);
      if (s.stall_on_prefill) {
        auto it = std::upper_bound(firsts.begin(), firsts.end(), t);
        if (it != firsts.end() && *it <= t + gap && *it != r.chunks.front().t) gap *= 8;
      }
      t += gap;
      r.chunks.push_back({t, 1, false});
    }
    r.t_end = t + MillisToNanos(1);
    r.completion_tokens = s.tokens;
    r.finish_reason = "length";
  }
  return out;
}

std::string MakeRunDir(const std::string& name, const Scenario& s) {
  const std::string dir = (fs::temp_directory_path() / ("diagnose-" + name + "-" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<metrics::RequestRecord> recs = Records(s);
  {
    auto w = metrics::RecordWriter::Open(dir + "/requests.jsonl", 0);
    EXPECT_TRUE(w.ok());
    for (const auto& r : recs) EXPECT_TRUE((*w)->Write(r).ok());
    EXPECT_TRUE((*w)->Close().ok());
  }
  metrics::AccumulatorOptions ao;
  ao.warmup = 2 * kNanosPerSecond;
  ao.window_end = recs.back().t_sched;
  metrics::SummaryAccumulator acc(ao);
  for (const auto& r : recs) acc.Add(r);
  json sj = metrics::SummaryToJson(acc.Finish());
  sj["client"] = {{"cpu_s", 1.5}};
  std::ofstream(dir + "/summary.json") << sj.dump(2);
  if (s.engine) {
    std::ofstream e(dir + "/engine_metrics.jsonl");
    for (int t = 1; t <= 30; ++t) {
      json line = {{"t_s", t}, {"signals", s.engine(t)}};
      if (t == 1) line["engine"] = "infereng", line["missing"] = json::array({"decode_time_s"});
      e << line.dump() << "\n";
    }
  }
  return dir;
}

const Evidence* Find(const Hypothesis& h, const std::string& what) {
  for (const Evidence& e : h.evidence) {
    if (e.what == what) return &e;
  }
  return nullptr;
}

std::string Ranking(const Diagnosis& d) {
  std::string s;
  for (const Hypothesis& h : d.hypotheses) s += h.id + "(" + std::to_string(h.score) + ") ";
  return s;
}

TEST(Diagnose, QueueBoundByRateRanksQueueingFirst) {
  Scenario s;
  s.queue_growth_ms = 5;  // TTFT climbs to ~1.5 s: more arrivals than the engine serves
  s.engine = [](double t) {
    return json{{"waiting", t / 2}, {"running", 4}, {"kv_usage", 0.4}, {"preemptions", 0}, {"queue_time_s", t * 0.05}};
  };
  const std::string dir = MakeRunDir("queue", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  const Hypothesis& top = d->hypotheses.front();
  EXPECT_EQ(top.id, "queueing") << Ranking(*d);
  EXPECT_EQ(top.confidence, "high");
  const Evidence* waiting = Find(top, "requests waiting (max)");
  ASSERT_NE(waiting, nullptr);
  EXPECT_DOUBLE_EQ(waiting->value, 15);  // the series' last point, t = 30 s
  const Evidence* queue = Find(top, "engine queue time (mean)");
  ASSERT_NE(queue, nullptr);
  EXPECT_NEAR(queue->value, 775, 1e-6);  // mean of 0.05 t s over t = 1..30, in ms
  EXPECT_FALSE(d->client_shaped);
  EXPECT_EQ(top.experiment.variable, "offered rate");
  fs::remove_all(dir);
}

// Without an engine series, the per-request queue times the engine reported in its
// `timings` (summary.json queue_ms, the TTFT split) are the queue's evidence.
TEST(Diagnose, ReportedPerRequestQueueIsEvidenceWithoutEngineSeries) {
  Scenario s;
  s.queue_growth_ms = 5;
  s.reported_phases = true;
  const std::string dir = MakeRunDir("queue-timings", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  const Hypothesis& top = d->hypotheses.front();
  EXPECT_EQ(top.id, "queueing") << Ranking(*d);
  const Evidence* queue = Find(top, "server queue time (mean)");
  ASSERT_NE(queue, nullptr);
  EXPECT_NEAR(queue->value, 5 * (20 + 299) / 2.0, 1e-6);  // in-window requests 20..299
  const Evidence* share = Find(top, "queue share of TTFT");
  ASSERT_NE(share, nullptr);
  EXPECT_GT(share->value, 80);
  fs::remove_all(dir);
}

// llama.cpp: no queue time anywhere, but /slots shows every slot busy on most scrapes (and
// requests deferred): queueing, with the slots as its evidence; free slots add nothing.
TEST(Diagnose, EverySlotBusyIsQueueingEvidenceForLlamaCpp) {
  auto run = [](const char* name, int busy_from) {
    Scenario s;
    s.queue_growth_ms = 2;
    s.engine = [busy_from](double t) {
      return json{{"slots_total", 4}, {"slots_busy", t >= busy_from ? 4 : 2}, {"waiting", t >= busy_from ? 1 : 0}};
    };
    const std::string dir = MakeRunDir(name, s);
    Result<Diagnosis> d = Diagnose(dir);
    fs::remove_all(dir);
    return d;
  };
  Result<Diagnosis> full = run("slots-full", 7);  // busy from t = 7 s: 24 of 30 scrapes
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  ASSERT_FALSE(full->hypotheses.empty());
  const Hypothesis& top = full->hypotheses.front();
  EXPECT_EQ(top.id, "queueing") << Ranking(*full);
  const Evidence* slots = Find(top, "scrapes with every slot busy");
  ASSERT_NE(slots, nullptr);
  EXPECT_NEAR(slots->value, 80, 1e-9);
  Result<Diagnosis> free = run("slots-free", 31);  // never all busy
  ASSERT_TRUE(free.ok());
  double full_score = 0, free_score = 0;
  for (const Hypothesis& h : full->hypotheses) full_score = h.id == "queueing" ? h.score : full_score;
  for (const Hypothesis& h : free->hypotheses) free_score = h.id == "queueing" ? h.score : free_score;
  EXPECT_GT(full_score, free_score) << Ranking(*full) << " vs " << Ranking(*free);
}

TEST(Diagnose, KvStarvedWithPreemptionsRanksMemoryFirst) {
  Scenario s;
  s.engine = [](double t) {
    return json{{"waiting", 0}, {"running", 12}, {"kv_usage", t > 5 ? 0.98 : 0.7},
                {"preemptions", t > 5 ? 2 : 0}, {"queue_time_s", 0.002}};
  };
  const std::string dir = MakeRunDir("kv", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  const Hypothesis& top = d->hypotheses.front();
  EXPECT_EQ(top.id, "kv_starved") << Ranking(*d);
  EXPECT_DOUBLE_EQ(Find(top, "preemptions during the run")->value, 50);  // 2 per scrape, t = 6..30
  EXPECT_DOUBLE_EQ(Find(top, "KV-cache usage (max)")->value, 98);
  EXPECT_EQ(top.experiment.twin_set, "engine.kv_cache_tokens");
  fs::remove_all(dir);
}

TEST(Diagnose, PrefillInterferenceRanksFirstWithLongPrompts) {
  Scenario s;
  s.prompt_min = s.prompt_max = 3000;
  s.stall_on_prefill = true;
  s.engine = [](double) { return json{{"waiting", 0}, {"running", 3}, {"kv_usage", 0.3}, {"queue_time_s", 0.001}}; };
  const std::string dir = MakeRunDir("prefill-interference", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  const Hypothesis& top = d->hypotheses.front();
  EXPECT_EQ(top.id, "prefill_interference") << Ranking(*d);
  EXPECT_DOUBLE_EQ(Find(top, "spikes during another request's prefill")->value, 100);
  EXPECT_DOUBLE_EQ(Find(top, "mean prompt length")->value, 3000);
  Result<RunFacts> f = LoadRunFacts(dir);
  ASSERT_TRUE(f.ok());
  EXPECT_GT(f->itl_spikes, 100);
  EXPECT_LT(f->gaps_with_prefill, 0.3);
  fs::remove_all(dir);
}

TEST(Diagnose, TtftGrowingWithPromptLengthIsPrefillBound) {
  Scenario s;
  s.prompt_min = 100;
  s.prompt_max = 4000;
  s.ttft_per_prompt_ms = 0.2;  // 20 ms .. 800 ms of prefill
  const std::string dir = MakeRunDir("prefill-bound", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  EXPECT_EQ(d->hypotheses.front().id, "prefill_bound") << Ranking(*d);
  EXPECT_GT(Find(d->hypotheses.front(), "correlation of TTFT with prompt length")->value, 0.95);
  fs::remove_all(dir);
}

TEST(Diagnose, ClientBoundByScheduleLagIsTheTopFinding) {
  Scenario s;
  s.lag_growth_ms = 1;  // the client falls up to 300 ms behind its schedule (TTFT p50 ~0.8 s)
  s.queue_growth_ms = 5;  // and the engine queues too: the client still comes first
  s.engine = [](double t) { return json{{"waiting", t / 2}, {"queue_time_s", t * 0.05}}; };
  const std::string dir = MakeRunDir("client", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->client_shaped);
  ASSERT_FALSE(d->hypotheses.empty());
  EXPECT_EQ(d->hypotheses.front().id, "client_bound") << Ranking(*d);
  Result<metrics::Summary> sum = metrics::ReadSummaryFile(dir + "/summary.json");
  ASSERT_TRUE(sum.ok());
  EXPECT_DOUBLE_EQ(Find(d->hypotheses.front(), "schedule lag p99")->value, sum->schedule_lag_ms.p99);
  EXPECT_GT(sum->schedule_lag_ms.p99, 50);
  const auto lag = std::find_if(d->validity.begin(), d->validity.end(), [](const ValidityCheck& c) { return c.id == "schedule_lag"; });
  ASSERT_NE(lag, d->validity.end());
  EXPECT_EQ(lag->status, CheckStatus::kFail);
  EXPECT_NE(DiagnosisToMarkdown(*d).find("The client shaped this result"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Diagnose, HealthyRunShowsNoSymptom) {
  Scenario s;
  s.engine = [](double) { return json{{"waiting", 0}, {"running", 2}, {"kv_usage", 0.2}, {"preemptions", 0}, {"queue_time_s", 0.001}}; };
  const std::string dir = MakeRunDir("healthy", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->hypotheses.empty()) << Ranking(*d);
  EXPECT_FALSE(d->client_shaped);
  for (const ValidityCheck& c : d->validity) {
    if (c.id == "sample_size" || c.id == "errors" || c.id == "schedule_lag" || c.id == "achieved_rate") {
      EXPECT_EQ(c.status, CheckStatus::kOk) << c.id << ": " << c.detail;
    }
  }
  fs::remove_all(dir);
}

TEST(Diagnose, ErrorsAreCountedByClassAndRankOverload) {
  Scenario s;
  s.fail_every = 10;
  const std::string dir = MakeRunDir("errors", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_FALSE(d->hypotheses.empty());
  EXPECT_EQ(d->hypotheses.front().id, "overload") << Ranking(*d);
  const Evidence* cls = Find(d->hypotheses.front(), "errors: http_5xx");
  ASSERT_NE(cls, nullptr);
  Result<metrics::Summary> sum = metrics::ReadSummaryFile(dir + "/summary.json");
  EXPECT_DOUBLE_EQ(cls->value, static_cast<double>(sum->errors.at("http_5xx")));
  fs::remove_all(dir);
}

TEST(Diagnose, NotARunDirectoryNamesTheFile) {
  Result<Diagnosis> d = Diagnose("/nonexistent/run");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Status::Code::kNotFound);
  EXPECT_NE(d.status().message().find("/nonexistent/run/summary.json"), std::string::npos);
}

TEST(Diagnose, BadEngineLineNamesFileAndLine) {
  Scenario s;
  s.engine = [](double) { return json{{"waiting", 0}}; };
  const std::string dir = MakeRunDir("bad-engine", s);
  std::ofstream(dir + "/engine_metrics.jsonl", std::ios::app) << "{\"t_s\": \"soon\"}\n";
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("engine_metrics.jsonl:31: t_s"), std::string::npos) << d.status().message();
  fs::remove_all(dir);
}

TEST(Diagnose, JsonHasRankedHypothesesAndValidity) {
  Scenario s;
  s.queue_growth_ms = 5;
  s.engine = [](double t) { return json{{"waiting", t / 2}, {"queue_time_s", t * 0.05}}; };
  const std::string dir = MakeRunDir("json", s);
  Result<Diagnosis> d = Diagnose(dir);
  ASSERT_TRUE(d.ok());
  json j = DiagnosisToJson(*d);
  EXPECT_EQ(j["schema"], "infereng.diagnose/1");
  EXPECT_EQ(j["validity"].size(), 7u);  // six measurement checks + the client's own saturation verdict
  EXPECT_TRUE(std::any_of(j["validity"].begin(), j["validity"].end(),
                          [](const json& c) { return c.value("id", "") == "client_saturation"; }));
  EXPECT_EQ(j["hypotheses"][0]["rank"], 1);
  EXPECT_EQ(j["hypotheses"][0]["id"], "queueing");
  EXPECT_FALSE(j["hypotheses"][0]["experiment"]["change"].get<std::string>().empty());
  EXPECT_EQ(j["engine"], "infereng");
  EXPECT_EQ(j["missing_signals"], json::array({"decode_time_s"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace infereng::job
