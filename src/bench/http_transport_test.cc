// HttpTransport against a scripted server on 127.0.0.1: requests dealt across io threads,
// every record back through `done`, counters and stamp statistics summed over the lanes;
// the default lane count from the machine.
#include "bench/http_transport.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "client/test_server.h"

namespace infereng::bench {
namespace {

using namespace std::chrono_literals;
using Req = boost::beast::http::request<boost::beast::http::string_body>;

TEST(DefaultIoThreads, OneOnSmallMachinesMoreWhenCoresAllow) {
  EXPECT_EQ(DefaultIoThreads(1), 1);
  EXPECT_EQ(DefaultIoThreads(2), 1);
  EXPECT_EQ(DefaultIoThreads(4), 1);
  EXPECT_EQ(DefaultIoThreads(8), 2);
  EXPECT_EQ(DefaultIoThreads(16), 4);
  EXPECT_EQ(DefaultIoThreads(256), 8);
}

TEST(HttpTransport, RejectsZeroIoThreads) {
  HttpTransportOptions o;
  o.client.base_url = "http://127.0.0.1:1";
  o.io_threads = 0;
  auto t = HttpTransport::Create(o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kInvalidArgument);
}

TEST(HttpTransport, ShardsConnectionsAcrossIoThreadsAndMergesTheRecords) {
  client::testing::ScriptedServer server([](const Req&, client::testing::Exchange& ex) {
    ex.Write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
    ex.Pause(20ms);  // keeps the streams overlapping: each needs its own connection
    ex.Write("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\"},\"finish_reason\":\"stop\"}]}\n\n"
             "data: [DONE]\n\n");
    ex.Close();
  });
  HttpTransportOptions o;
  o.client.base_url = server.url();
  o.client.request_timeout = 5 * kNanosPerSecond;
  o.io_threads = 2;
  auto t = HttpTransport::Create(o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->io_threads(), 2);
  std::mutex mu;
  std::condition_variable cv;
  std::set<uint64_t> ids;
  int ok = 0;
  for (uint64_t i = 0; i < 6; ++i) {
    PreparedRequest r;
    r.record.id = i;
    r.path = "/v1/chat/completions";
    r.body = "{}";
    (*t)->Start(std::move(r), [&](Finished&& f) {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(f.record.id);
      if (f.record.ok()) ++ok;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return ids.size() == 6; }));
  }
  EXPECT_EQ(ok, 6);
  EXPECT_EQ((*t)->ConnectionsOpened(), 6u);
  ASSERT_EQ((*t)->IoThreadCpus().size(), 2u);
  for (Nanos cpu : (*t)->IoThreadCpus()) EXPECT_GT(cpu, 0);  // both lanes did work
  client::RxStampStats st = (*t)->TakeRxStampStats();
  EXPECT_EQ(st.Source(), "kernel");
  EXPECT_GE(st.reads_kernel, 6u);
}

}  // namespace
}  // namespace infereng::bench
