// Kernel receive timestamps (stamped_socket.h) against a scripted server on 127.0.0.1:
// present on Linux loopback (plain and TLS) and never after the user-space stamp; a
// blocked io thread shows up as the client's own delay while the event times keep the
// arrival schedule; the user-space fallback when the socket option cannot be set.
#include "client/stamped_socket.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "client/http_client.h"
#include "client/test_server.h"

namespace infereng::client {
namespace {

namespace http = boost::beast::http;
using testing::Exchange;
using testing::ScriptedServer;
using Req = http::request<http::string_body>;
using namespace std::chrono_literals;

Nanos SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// `n` output chunks `gap` apart, then a finish chunk and [DONE] (HTTP/1.1 close-delimited).
void StreamChunks(Exchange& ex, int n, std::chrono::milliseconds gap) {
  ex.Write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
  for (int i = 0; i < n; ++i) {
    ex.Pause(gap);
    ex.Write("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\"}}]}\n\n");
  }
  ex.Write("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
  ex.Close();
}

// Records each output chunk's event time and when the callback ran; may sleep in a callback
// (a busy client) to hold the io thread.
class TimingHandler final : public StreamHandler {
 public:
  explicit TimingHandler(std::chrono::milliseconds block_on_first = 0ms) : block_(block_on_first) {}
  void OnChunk(Nanos t, const ChunkInfo& info) override {
    if (!info.has_output()) return;
    event_t.push_back(t);
    callback_t.push_back(SteadyNowNs());
    if (event_t.size() == 1 && block_ > 0ms) std::this_thread::sleep_for(block_);
  }
  void OnEnd(const StreamEnd& e) override {
    end = e;
    done = true;
  }
  std::vector<Nanos> event_t, callback_t;
  StreamEnd end;
  bool done = false;

 private:
  std::chrono::milliseconds block_;
};

class StampTest : public ::testing::Test {
 protected:
  ClientOptions Options(const ScriptedServer& server) {
    ClientOptions o;
    o.base_url = server.url() + "/v1";
    o.stall_timeout = 5 * kNanosPerSecond;
    o.request_timeout = 5 * kNanosPerSecond;
    return o;
  }
  // One stream to its end (bounded by 5 s); returns the stamp statistics it produced.
  RxStampStats RunOne(ClientOptions options, TimingHandler& handler) {
    auto client = HttpClient::Create(io_, std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return {};
    StreamRequest r;
    r.path = "/chat/completions";
    r.body = R"({"model":"m","messages":[{"role":"user","content":"Hi"}],"stream":true})";
    (void)TakeThreadRxStampStats();  // this thread's earlier streams
    (*client)->StartStream(std::move(r), &handler);
    io_.restart();
    io_.run_for(5s);
    EXPECT_TRUE(handler.done);
    EXPECT_EQ(handler.end.error, metrics::ErrorClass::kNone) << handler.end.error_message;
    return TakeThreadRxStampStats();
  }
  boost::asio::io_context io_;
};

TEST_F(StampTest, KernelStampIsPresentOnLoopbackAndNeverAfterTheUserStamp) {
  ScriptedServer server([](const Req&, Exchange& ex) { StreamChunks(ex, 5, 2ms); });
  TimingHandler h;
  RxStampStats st = RunOne(Options(server), h);
  EXPECT_EQ(st.Source(), "kernel");
  EXPECT_GT(st.reads_kernel, 0u);
  EXPECT_EQ(st.reads_user, 0u);
  ASSERT_EQ(h.event_t.size(), 5u);
  EXPECT_GE(st.delay_ms.count(), 5u);  // per event: 5 outputs (+ the finish chunk, [DONE])
  EXPECT_GE(st.delay_ms.min(), 0.0);
  for (size_t i = 0; i < h.event_t.size(); ++i) EXPECT_LE(h.event_t[i], h.callback_t[i]) << "chunk " << i;
}

TEST_F(StampTest, TlsReadsKeepTheStampOfTheSocketRead) {
  testing::CertPem cert = testing::MakeSelfSignedCert();
  ScriptedServer server([](const Req&, Exchange& ex) { StreamChunks(ex, 4, 2ms); }, &cert);
  ClientOptions o = Options(server);
  o.insecure = true;
  TimingHandler h;
  RxStampStats st = RunOne(o, h);
  EXPECT_EQ(st.Source(), "kernel");
  ASSERT_EQ(h.event_t.size(), 4u);
  for (size_t i = 0; i < h.event_t.size(); ++i) EXPECT_LE(h.event_t[i], h.callback_t[i]) << "chunk " << i;
}

// The io thread sleeps 80 ms in the first chunk's callback while the server writes the
// rest of the stream (5 chunks, 3 ms apart): they queue up and are read late. Their delay
// (user - kernel) shows it, and their event time is when they arrived (the newest of them:
// TCP merges what queued up), not the late read's.
TEST_F(StampTest, BlockedIoThreadShowsAsTheClientsOwnDelay) {
  ScriptedServer server([](const Req&, Exchange& ex) { StreamChunks(ex, 6, 3ms); });
  TimingHandler h(80ms);
  RxStampStats st = RunOne(Options(server), h);
  ASSERT_EQ(h.event_t.size(), 6u);
  EXPECT_GT(st.delay_ms.Percentile(99), 1.0);
  EXPECT_GT(st.delay_ms.max(), 20.0);
  // The rest arrived within ~15 ms of the first (kernel stamp) though the client only
  // looked at it after its 80 ms nap (user stamp).
  EXPECT_LT(h.event_t[1] - h.event_t[0], 60 * kNanosPerMilli);
  EXPECT_GE(h.callback_t[1] - h.callback_t[0], 80 * kNanosPerMilli);
  EXPECT_LE(h.event_t[1], h.event_t[5]);
}

// The last event has no closing blank line, so it is delivered only when the stream ends
// (SseParser::Finish), on the end-of-stream read, 150 ms after its bytes came. That read
// brings no bytes and so no kernel stamp: the event keeps the stamp of the read that
// brought its bytes, and so does the stream's end (no [DONE]). Before, both took the
// close's user-space time.
TEST_F(StampTest, AnEventFlushedAtTheCloseKeepsTheStampOfItsBytes) {
  ScriptedServer server([](const Req&, Exchange& ex) {
    ex.Write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    ex.Write("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\"}}]}\n\n");
    ex.Pause(5ms);
    ex.Write("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"u\"},\"finish_reason\":\"stop\"}]}");
    ex.Pause(150ms);
    ex.Close();
  });
  TimingHandler h;
  RxStampStats st = RunOne(Options(server), h);
  EXPECT_EQ(st.Source(), "kernel");
  EXPECT_EQ(st.reads_user, 0u);
  ASSERT_EQ(h.event_t.size(), 2u);
  // The callback ran after the close; the event time is when its bytes came.
  EXPECT_GE(h.callback_t[1] - h.event_t[0], 140 * kNanosPerMilli);
  EXPECT_LT(h.event_t[1] - h.event_t[0], 100 * kNanosPerMilli);
  EXPECT_LT(h.end.t_end - h.event_t[0], 100 * kNanosPerMilli);
  EXPECT_GE(h.end.t_end, h.event_t[1]);
}

TEST_F(StampTest, UserSpaceFallbackWhenStampsAreOff) {
  ScriptedServer server([](const Req&, Exchange& ex) { StreamChunks(ex, 3, 1ms); });
  SetKernelRxStamps(false);
  TimingHandler h;
  RxStampStats st = RunOne(Options(server), h);
  SetKernelRxStamps(true);
  EXPECT_EQ(st.Source(), "user");
  EXPECT_EQ(st.reads_kernel, 0u);
  EXPECT_GT(st.reads_user, 0u);
  EXPECT_EQ(st.delay_ms.count(), 0u);  // no delay claimed without a kernel stamp
  EXPECT_EQ(h.event_t.size(), 3u);
}

TEST(KernelRxStamps, FallBackWhenTheSocketOptionFails) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(EnableKernelRxStamps(fds[0]), StampSource::kUser);  // not a socket: ENOTSOCK
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(EnableKernelRxStamps(-1), StampSource::kUser);
}

TEST(KernelRxStamps, RealtimeConvertsOntoTheSteadyTimeline) {
  timespec rt{};
  const Nanos before = SteadyNowNs();
  clock_gettime(CLOCK_REALTIME, &rt);
  const Nanos after = SteadyNowNs();
  const Nanos steady = RealtimeToSteady(static_cast<Nanos>(rt.tv_sec) * kNanosPerSecond + rt.tv_nsec);
  EXPECT_GE(steady, before - 100 * kNanosPerMicro);
  EXPECT_LE(steady, after + 100 * kNanosPerMicro);
}

TEST(RxStampStats, SourceAndMerge) {
  RxStampStats a, b;
  EXPECT_EQ(a.Source(), "none");
  a.reads_kernel = 3;
  a.delay_ms.AddN(0.2, 3);
  EXPECT_EQ(a.Source(), "kernel");
  b.reads_user = 1;
  EXPECT_EQ(b.Source(), "user");
  a.Merge(b);
  EXPECT_EQ(a.Source(), "mixed");
  EXPECT_EQ(a.delay_ms.count(), 3u);
}

}  // namespace
}  // namespace infereng::client
