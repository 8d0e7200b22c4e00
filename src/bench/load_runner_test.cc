#include "bench/load_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/schedule.h"

namespace infereng::bench {
namespace {

// Completes requests only when the test says so; remembers what it saw.
class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(Clock& clock) : clock_(clock) {}
  void Start(PreparedRequest req, DoneFn done) override {
    std::lock_guard<std::mutex> lock(mu_);
    req.record.t_send = clock_.Now();
    max_in_flight_ = std::max<int64_t>(max_in_flight_, static_cast<int64_t>(pending_.size()) + 1);
    started_.push_back(req.record);
    pending_.push_back({std::move(req), std::move(done)});
    if (auto_complete_) CompleteLocked();
  }
  void CancelAll() override {
    std::deque<Item> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      all.swap(pending_);
    }
    for (Item& p : all) {
      Finished f{std::move(p.req.record), "", -1};
      f.record.error = metrics::ErrorClass::kCancelled;
      p.done(std::move(f));
    }
  }
  // Completes the oldest pending request; false when none.
  bool CompleteOne() {
    std::unique_lock<std::mutex> lock(mu_);
    if (pending_.empty()) return false;
    Item p = std::move(pending_.front());
    pending_.pop_front();
    lock.unlock();
    Finished f{std::move(p.req.record), "", -1};
    f.record.t_end = clock_.Now();
    p.done(std::move(f));
    return true;
  }
  size_t PendingCount() {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_.size();
  }
  std::vector<metrics::RequestRecord> Started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int64_t MaxInFlight() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_in_flight_;
  }
  void set_auto_complete(bool v) { auto_complete_ = v; }

 private:
  struct Item {
    PreparedRequest req;
    DoneFn done;
  };
  void CompleteLocked() {
    // Completes inline (the runner must cope with `done` inside Start).
    Item p = std::move(pending_.front());
    pending_.pop_front();
    mu_.unlock();
    Finished f{std::move(p.req.record), "", -1};
    p.done(std::move(f));
    mu_.lock();
  }
  Clock& clock_;
  std::mutex mu_;
  std::deque<Item> pending_;
  std::vector<metrics::RequestRecord> started_;
  int64_t max_in_flight_ = 0;
  bool auto_complete_ = false;
};

SpecSource Arrivals(std::vector<Nanos> offsets) {
  auto idx = std::make_shared<size_t>(0);
  return [offsets, idx]() -> std::optional<workload::RequestSpec> {
    if (*idx >= offsets.size()) return std::nullopt;
    workload::RequestSpec s;
    s.index = *idx;
    s.t_arrival = offsets[*idx];
    ++*idx;
    return s;
  };
}

SpecSource Endless() {
  auto idx = std::make_shared<uint64_t>(0);
  return [idx]() -> std::optional<workload::RequestSpec> {
    workload::RequestSpec s;
    s.index = (*idx)++;
    return s;
  };
}

Preparer Plain() {
  return [](const workload::RequestSpec& s) -> Result<PreparedRequest> {
    PreparedRequest r;
    r.record.id = s.index;
    return r;
  };
}

// Every send takes 3 ms of clock time and finishes at once; it stamps t_send when it starts.
class SlowTransport final : public Transport {
 public:
  explicit SlowTransport(FakeClock& c) : c_(c) {}
  void Start(PreparedRequest req, DoneFn done) override {
    req.record.t_send = c_.Now();
    c_.Advance(3 * kNanosPerMilli);
    done(Finished{std::move(req.record), "", -1});
  }
  void CancelAll() override {}

 private:
  FakeClock& c_;
};

struct Collector {
  std::mutex mu;
  std::vector<Finished> got;
  Sink sink() {
    return [this](Finished&& f) {
      std::lock_guard<std::mutex> lock(mu);
      got.push_back(std::move(f));
    };
  }
};

TEST(ScheduleTest, RampedOffsetIsContinuousAndMonotonic) {
  const Nanos R = 10 * kNanosPerSecond;
  EXPECT_EQ(RampedOffset(123, 0), 123);
  EXPECT_EQ(RampedOffset(0, R), 0);
  // At load-time R/2 the ramp ends at real time R; afterwards it is a plain shift by R/2.
  EXPECT_NEAR(RampedOffset(R / 2 - 1, R), R, 1e3);
  EXPECT_EQ(RampedOffset(R, R), R + R / 2);
  Nanos prev = -1;
  for (Nanos a = 0; a < 2 * R; a += R / 97) {
    Nanos t = RampedOffset(a, R);
    EXPECT_GE(t, prev);
    EXPECT_GE(t, a);  // a ramp only ever delays arrivals
    prev = t;
  }
  EXPECT_EQ(RampedConcurrency(8, 0, R), 1);
  EXPECT_EQ(RampedConcurrency(8, R / 2, R), 4);
  EXPECT_EQ(RampedConcurrency(8, R, R), 8);
  EXPECT_EQ(RampedConcurrency(8, 5, 0), 8);
}

TEST(RunnerTest, OpenLoopIntendedTimesAreAbsoluteDespiteSlowSends) {
  FakeClock clock(1'000'000);
  // A transport whose every send takes 3 ms of clock time: a drifting scheduler
  // (previous + gap) would slip 3 ms per request.
  SlowTransport transport(clock);
  std::vector<Nanos> offsets;
  for (int i = 0; i < 100; ++i) offsets.push_back(i * 2 * kNanosPerMilli);  // 500 rps
  LoadRunner runner(clock, transport);
  Collector c;
  auto st = runner.Run({}, Arrivals(offsets), Plain(), c.sink());
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(c.got.size(), 100u);
  for (const Finished& f : c.got) {
    EXPECT_EQ(f.record.t_sched, st->t0 + offsets[f.record.id]) << f.record.id;
    EXPECT_GE(f.record.t_send, f.record.t_sched);
  }
  // The client fell behind (3 ms per 2 ms slot): the lag grows and is visible.
  EXPECT_GT(c.got.back().record.t_send - c.got.back().record.t_sched, 90 * kNanosPerMilli);
  EXPECT_EQ(st->issued, 100);
  EXPECT_EQ(st->completed, 100);
  EXPECT_EQ(st->lost, 0);
}

TEST(RunnerTest, OpenLoopStopsAtDuration) {
  FakeClock clock;
  FakeTransport transport(clock);
  transport.set_auto_complete(true);
  std::vector<Nanos> offsets;
  for (int i = 0; i < 50; ++i) offsets.push_back(i * 100 * kNanosPerMilli);
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.stop_after = kNanosPerSecond;  // offsets 0..900 ms
  auto st = runner.Run(opt, Arrivals(offsets), Plain(), c.sink());
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->issued, 10);
  EXPECT_EQ(st->t_last_sched, st->t0 + 900 * kNanosPerMilli);
}

TEST(RunnerTest, RequestsModeCountsOnlyMeasuredAndCoolsDown) {
  FakeClock clock;
  FakeTransport transport(clock);
  transport.set_auto_complete(true);
  std::vector<Nanos> offsets;
  for (int i = 0; i < 100; ++i) offsets.push_back(i * 100 * kNanosPerMilli);
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.measure_from = 500 * kNanosPerMilli;  // 5 warm-up requests (0..400 ms)
  opt.max_requests = 10;                    // measured: 500..1400 ms
  opt.cooldown = 300 * kNanosPerMilli;      // then 1500 and 1600 ms (before 1400 + 300)
  auto st = runner.Run(opt, Arrivals(offsets), Plain(), c.sink());
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->measured, 10);
  EXPECT_EQ(st->t_last_measured, st->t0 + 1400 * kNanosPerMilli);
  EXPECT_EQ(st->issued, 5 + 10 + 2);
}

TEST(RunnerTest, ClosedLoopKeepsExactlyCInFlight) {
  FakeClock clock;
  FakeTransport transport(clock);
  constexpr int kC = 7;
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.mode = RunnerOptions::Mode::kClosedLoop;
  opt.concurrency = kC;
  opt.max_requests = 60;
  Result<RunnerStats> st = Status::Internal("not run");
  std::thread t([&] { st = runner.Run(opt, Endless(), Plain(), c.sink()); });
  std::vector<Nanos> freed_at;
  // Each time the runner has refilled to C, complete the oldest one.
  for (int done = 0; done < 60;) {
    const int64_t issued = runner.Issued();
    const size_t pending = transport.PendingCount();
    const bool refilled = pending == static_cast<size_t>(kC) || (issued == 60 && pending > 0);
    if (!refilled) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      continue;
    }
    clock.Advance(kNanosPerMilli);
    freed_at.push_back(clock.Now());
    ASSERT_TRUE(transport.CompleteOne());
    ++done;
  }
  t.join();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(transport.MaxInFlight(), kC);
  EXPECT_EQ(st->issued, 60);
  EXPECT_EQ(c.got.size(), 60u);
  // Requests after the first C were scheduled exactly when a slot freed.
  std::vector<metrics::RequestRecord> started = transport.Started();
  ASSERT_EQ(started.size(), 60u);
  for (size_t i = kC; i < started.size(); ++i) {
    EXPECT_EQ(started[i].t_sched, freed_at[i - kC]) << i;
  }
}

// Two lanes complete at T1 and T2, but T1's completion reaches the runner last (its sink
// was slower): the request reusing T1's slot is sent after the one reusing T2's. The
// measured window still ends at the latest intended send, so both lie inside it.
TEST(RunnerTest, ClosedLoopWindowEndsAtTheLatestIntendedSendWhenCompletionsCross) {
  FakeClock clock;
  FakeTransport transport(clock);
  LoadRunner runner(clock, transport);
  std::mutex mu;
  std::condition_variable cv;
  bool first_in_sink = false, release_first = false;
  Collector c;
  Sink slow_first = [&](Finished&& f) {
    if (f.record.id == 0) {
      std::unique_lock<std::mutex> lock(mu);
      first_in_sink = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release_first; });
    }
    c.sink()(std::move(f));
  };
  RunnerOptions opt;
  opt.mode = RunnerOptions::Mode::kClosedLoop;
  opt.concurrency = 2;
  opt.max_requests = 4;
  Result<RunnerStats> st = Status::Internal("not run");
  std::thread t([&] { st = runner.Run(opt, Endless(), Plain(), slow_first); });
  auto wait_issued = [&](int64_t n) {
    while (runner.Issued() < n) std::this_thread::sleep_for(std::chrono::microseconds(50));
  };
  wait_issued(2);
  clock.Advance(kNanosPerMilli);
  const Nanos t1 = clock.Now();
  std::thread lane_a([&] { transport.CompleteOne(); });  // request 0, freed at T1, sink held
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return first_in_sink; });
  }
  clock.Advance(kNanosPerMilli);
  const Nanos t2 = clock.Now();
  ASSERT_TRUE(transport.CompleteOne());  // request 1, freed at T2, arrives first
  wait_issued(3);
  {
    std::lock_guard<std::mutex> lock(mu);
    release_first = true;
  }
  cv.notify_all();
  lane_a.join();
  wait_issued(4);
  while (transport.CompleteOne()) {
  }
  t.join();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  std::vector<metrics::RequestRecord> started = transport.Started();
  ASSERT_EQ(started.size(), 4u);
  EXPECT_EQ(started[2].t_sched, t2);
  EXPECT_EQ(started[3].t_sched, t1);  // honest: its slot freed at T1
  EXPECT_EQ(st->measured, 4);
  EXPECT_EQ(st->t_last_measured, t2);
  EXPECT_EQ(st->t_last_sched, t2);
}

TEST(RunnerTest, OpenLoopCapDelaysSendButNotIntent) {
  FakeClock clock;
  FakeTransport transport(clock);
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.concurrency = 2;
  std::vector<Nanos> offsets = {0, 0, 0, 0};
  Result<RunnerStats> st = Status::Internal("not run");
  std::thread t([&] { st = runner.Run(opt, Arrivals(offsets), Plain(), c.sink()); });
  while (transport.PendingCount() < 2) std::this_thread::yield();
  clock.Advance(50 * kNanosPerMilli);
  for (int done = 0; done < 4;) {
    if (transport.CompleteOne()) {
      ++done;
    } else {
      std::this_thread::yield();
    }
  }
  t.join();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(transport.MaxInFlight(), 2);
  std::vector<metrics::RequestRecord> started = transport.Started();
  ASSERT_EQ(started.size(), 4u);
  EXPECT_EQ(started[3].t_sched, st->t0);                           // intent unchanged
  EXPECT_EQ(started[3].t_send, st->t0 + 50 * kNanosPerMilli);      // queueing visible
}

// Issue 10: `bench --rate 1e12` grew past 500 MB: every arrival went in flight at once. The
// client's ceiling holds the rest back (as the generator's next arrival, not in memory).
TEST(RunnerTest, OpenLoopNeverExceedsTheInFlightCeiling) {
  FakeClock clock;
  FakeTransport transport(clock);
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;  // no cap of the user's
  opt.max_in_flight = 5;
  Result<RunnerStats> st = Status::Internal("not run");
  std::thread t([&] { st = runner.Run(opt, Arrivals(std::vector<Nanos>(40, 0)), Plain(), c.sink()); });
  while (transport.PendingCount() < 5) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(runner.Issued(), 5);  // held back, not sent
  for (int done = 0; done < 40;) {
    if (transport.CompleteOne()) {
      ++done;
    } else {
      std::this_thread::yield();
    }
  }
  t.join();
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(transport.MaxInFlight(), 5);
  EXPECT_EQ(st->issued, 40);
  EXPECT_GT(st->held_by_ceiling, 0);
  EXPECT_FALSE(st->fell_behind);

  RunnerOptions closed;
  closed.mode = RunnerOptions::Mode::kClosedLoop;
  closed.concurrency = 6;
  closed.max_in_flight = 5;
  LoadRunner again(clock, transport);
  auto bad = again.Run(closed, Endless(), Plain(), c.sink());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("exceeds the client's limit"), std::string::npos);
}

// A client that cannot keep up with the rate stops a drain timeout after the window instead
// of working through its backlog for ever (1e6 rps for 60 s would be 6e7 sends).
TEST(RunnerTest, OpenLoopFarBehindScheduleStopsSending) {
  FakeClock clock;
  SlowTransport transport(clock);
  std::vector<Nanos> offsets;
  for (int i = 0; i < 1000; ++i) offsets.push_back(i * 2 * kNanosPerMilli);  // 500 rps
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.stop_after = 300 * kNanosPerMilli;   // 150 intended sends, 450 ms of sending
  opt.drain_timeout = 50 * kNanosPerMilli;  // give up at 350 ms
  auto st = runner.Run(opt, Arrivals(offsets), Plain(), c.sink());
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->fell_behind);
  EXPECT_LT(st->issued, 150);
  EXPECT_GE(st->issued, 110);
  EXPECT_EQ(st->completed, st->issued);
}

TEST(RunnerTest, StopCancelsInFlightAndLosesNothing) {
  FakeClock clock;
  FakeTransport transport(clock);
  LoadRunner runner(clock, transport);
  Collector c;
  RunnerOptions opt;
  opt.mode = RunnerOptions::Mode::kClosedLoop;
  opt.concurrency = 5;
  Result<RunnerStats> st = Status::Internal("not run");
  std::thread t([&] { st = runner.Run(opt, Endless(), Plain(), c.sink()); });
  for (int i = 0; i < 12; ++i) {
    while (transport.PendingCount() < 5) std::this_thread::yield();
    transport.CompleteOne();
  }
  runner.Stop();
  t.join();
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->interrupted);
  EXPECT_EQ(st->lost, 0);
  EXPECT_EQ(st->completed, st->issued);
  EXPECT_EQ(static_cast<int64_t>(c.got.size()), st->issued);
  int cancelled = 0;
  for (const Finished& f : c.got) cancelled += f.record.error == metrics::ErrorClass::kCancelled;
  EXPECT_GE(cancelled, 4);
}

TEST(RunnerTest, PrepareFailureStopsWithError) {
  FakeClock clock;
  FakeTransport transport(clock);
  transport.set_auto_complete(true);
  LoadRunner runner(clock, transport);
  Collector c;
  auto st = runner.Run({}, Arrivals({0, 1, 2}), [](const workload::RequestSpec& s) -> Result<PreparedRequest> {
    if (s.index == 2) return Status::InvalidArgument("data.jsonl:3: bad line");
    return PreparedRequest{};
  }, c.sink());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("data.jsonl:3"), std::string::npos);
  EXPECT_EQ(c.got.size(), 2u);
}

}  // namespace
}  // namespace infereng::bench
