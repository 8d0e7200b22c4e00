// HttpClient against `infereng serve` (serve::Server with the fixed-cost PacedEngine) on
// 127.0.0.1: the client's facts must agree with what the server is documented to send
// (docs/serve.md): continuous usage with several tokens per chunk, final usage, injected
// faults mapped to the right error classes, admission-control 429s, /metrics scraping.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "client/http_client.h"
#include "client/prometheus.h"
#include "metrics/derive.h"
#include "serve/paced_engine.h"
#include "serve/server.h"
#include "testing/paths.h"

namespace infereng::client {
namespace {

using metrics::ErrorClass;
using metrics::RequestRecord;
using namespace std::chrono_literals;

struct Served {
  explicit Served(serve::ServerOptions opt = {}, serve::PacedEngineOptions eng = {}) {
    opt.port = 0;
    opt.merge_late_tokens = false;  // tests count chunks, whatever the machine's load
    server = std::make_unique<serve::Server>(opt, std::make_unique<serve::PacedEngine>(eng));
    auto p = server->Start();
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    options.base_url = "http://127.0.0.1:" + std::to_string(p.ok() ? *p : 0) + "/v1";
    options.unix_socket = opt.unix_socket;
    if (!opt.unix_socket.empty()) options.base_url = "http://localhost/v1";  // host for the Host header only
    options.request_timeout = 10 * kNanosPerSecond;
    options.stall_timeout = 5 * kNanosPerSecond;
  }

  // Runs `n` identical streams concurrently on one io_context and returns their records.
  std::vector<RequestRecord> Run(int n, Dialect dialect, const std::string& body) {
    boost::asio::io_context io;
    auto client = HttpClient::Create(io, options);
    std::vector<RequestRecord> recs(static_cast<std::size_t>(n));
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return recs;
    std::vector<std::unique_ptr<RecordingHandler>> handlers;
    for (auto& r : recs) {
      handlers.push_back(std::make_unique<RecordingHandler>(&r, nullptr));
      StreamRequest req;
      req.path = std::string(TraitsOf(dialect).default_path);
      req.dialect = dialect;
      req.body = body;
      (*client)->StartStream(std::move(req), handlers.back().get());
    }
    io.run_for(15s);
    return recs;
  }

  std::unique_ptr<serve::Server> server;
  ClientOptions options;
};

const serve::PacedEngineOptions kFast{.ttft_base = 5 * kNanosPerMilli, .prefill_per_token = 0,
                                      .itl = 2 * kNanosPerMilli};

int64_t Tokens(const RequestRecord& r) {
  int64_t sum = 0;
  for (const auto& c : r.chunks) sum += c.tokens;
  return sum;
}

TEST(ServeIntegration, ContinuousUsageWithSeveralTokensPerChunk) {
  serve::ServerOptions opt;
  opt.faults.stream_interval = 3;
  Served s(opt, kFast);
  auto recs = s.Run(16, Dialect::kOpenAiChat,
                    R"({"model":"infereng-twin","messages":[{"role":"user","content":"a b c d"}],"max_tokens":9,)"
                    R"("ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}})");
  for (const RequestRecord& r : recs) {
    ASSERT_EQ(r.error, ErrorClass::kNone) << r.error_message;
    EXPECT_EQ(r.token_source, metrics::TokenSource::kUsageContinuous);
    ASSERT_EQ(r.chunks.size(), 3u);  // the role chunk is not output
    for (const auto& c : r.chunks) EXPECT_EQ(c.tokens, 3);
    EXPECT_EQ(r.completion_tokens, 9);
    EXPECT_EQ(r.prompt_tokens, 4);
    EXPECT_EQ(r.finish_reason, "length");
    EXPECT_GE(r.chunks.front().t - r.t_send, 5 * kNanosPerMilli);  // engine TTFT is a floor
  }
}

TEST(ServeIntegration, CompletionsWithFinalUsageAndMetricsScrape) {
  Served s({}, kFast);
  auto recs = s.Run(12, Dialect::kOpenAiCompletions,
                    R"({"model":"infereng-twin","prompt":"x y","max_tokens":6,"ignore_eos":true,"stream":true,)"
                    R"("stream_options":{"include_usage":true}})");
  for (const RequestRecord& r : recs) {
    ASSERT_EQ(r.error, ErrorClass::kNone) << r.error_message;
    EXPECT_EQ(r.token_source, metrics::TokenSource::kUsageFinal);
    EXPECT_EQ(r.chunks.size(), 6u);
    EXPECT_EQ(Tokens(r), 6);
  }
  ClientOptions root = s.options;
  root.base_url = root.base_url.substr(0, root.base_url.size() - 3);  // drop "/v1"
  auto text = Fetch(root, "GET", "/metrics");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  ASSERT_EQ(text->status, 200);
  auto scrape = ParsePrometheusText(text->body);
  ASSERT_TRUE(scrape.ok()) << scrape.status().ToString();
  EXPECT_EQ(scrape->Value("vllm:generation_tokens_total"), 12 * 6);
  auto ttft = scrape->Histogram("vllm:time_to_first_token_seconds");
  ASSERT_TRUE(ttft.ok()) << ttft.status().ToString();
  EXPECT_EQ(ttft->count, 12);
}

// serve --uds + bench --unix-socket: the same streams over a Unix-domain socket; a missing
// socket is a connect error that names the path.
TEST(ServeIntegration, StreamsOverAUnixSocket) {
  serve::ServerOptions opt;
  opt.unix_socket = infereng::testing::ScratchPath("s.sock");
  Served s(opt, kFast);
  auto recs = s.Run(8, Dialect::kOpenAiCompletions,
                    R"({"model":"infereng-twin","prompt":"x y","max_tokens":5,"ignore_eos":true,"stream":true,)"
                    R"("stream_options":{"include_usage":true}})");
  for (const RequestRecord& r : recs) {
    ASSERT_EQ(r.error, ErrorClass::kNone) << r.error_message;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(Tokens(r), 5);
    EXPECT_EQ(r.completion_tokens, 5);
  }
  s.server->Stop();
  auto gone = s.Run(1, Dialect::kOpenAiCompletions, R"({"prompt":"x","max_tokens":1,"stream":true})");
  EXPECT_EQ(gone[0].error, ErrorClass::kConnect);
  EXPECT_NE(gone[0].error_message.find("via unix:" + opt.unix_socket), std::string::npos) << gone[0].error_message;

  boost::asio::io_context io;
  ClientOptions too_long = s.options;
  too_long.unix_socket = "/tmp/" + std::string(120, 'x') + ".sock";
  auto client = HttpClient::Create(io, too_long);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("--unix-socket"), std::string::npos) << client.status().ToString();
}

// The embedded engine's `timings` reach the record: every request has its phases, queue +
// prefill never exceed the client's TTFT (the engine's part is inside it), and the queue
// grows when more requests arrive than the engine runs at once. PacedEngine's times are
// exact in engine time: prefill 5 ms, decode 3 gaps of 20 ms, 65 ms per request (long
// enough that the burst's arrivals, spread by a loaded machine, still overlap).
TEST(ServeIntegration, ServerPhasesReachTheRecordAndSplitTtft) {
  const std::string body =
      R"({"model":"infereng-twin","messages":[{"role":"user","content":"a b"}],"max_tokens":4,)"
      R"("ignore_eos":true,"stream":true})";
  auto max_queue = [&](int64_t max_running) {
    serve::PacedEngineOptions eng = kFast;
    eng.max_running = max_running;
    eng.itl = 20 * kNanosPerMilli;
    Served s({}, eng);
    Nanos worst = -1;
    for (const RequestRecord& r : s.Run(8, Dialect::kOpenAiChat, body)) {
      EXPECT_EQ(r.error, ErrorClass::kNone) << r.error_message;
      EXPECT_FALSE(r.server_timings_malformed);
      EXPECT_GE(r.server_queue, 0);
      EXPECT_EQ(r.server_prefill, 5 * kNanosPerMilli);
      EXPECT_EQ(r.server_decode, 60 * kNanosPerMilli);
      auto m = metrics::DeriveRequest(r);
      EXPECT_TRUE(m.ttft_ms && m.queue_ms && m.prefill_ms && m.ttft_client_network_ms);
      if (!m.ttft_client_network_ms) continue;
      EXPECT_LE(*m.queue_ms + *m.prefill_ms, *m.ttft_ms) << "request " << r.id;
      EXPECT_GE(*m.ttft_client_network_ms, 0);
      EXPECT_FALSE(m.split_includes_queue);
      worst = std::max(worst, r.server_queue);
    }
    return worst;
  };
  EXPECT_LT(max_queue(16), kNanosPerMilli);       // capacity above the burst: no queue
  EXPECT_GE(max_queue(2), 100 * kNanosPerMilli);  // 8 at once, 2 at a time: the last pair waits 3 x 65 ms
}

TEST(ServeIntegration, InjectedFaultsMapToErrorClasses) {
  struct Case {
    const char* faults;
    ErrorClass expected;
  };
  for (Case c : {Case{"error5xx=1", ErrorClass::kHttp5xx}, Case{"stream_error=1", ErrorClass::kStreamError},
                 Case{"drop=1", ErrorClass::kIncomplete}}) {
    serve::ServerOptions opt;
    auto spec = serve::ParseFaultSpec(c.faults);
    ASSERT_TRUE(spec.ok());
    opt.faults = *spec;
    Served s(opt, kFast);
    auto recs = s.Run(4, Dialect::kOpenAiChat,
                      R"({"model":"infereng-twin","messages":[{"role":"user","content":"hi"}],"max_tokens":8,)"
                      R"("ignore_eos":true,"stream":true})");
    for (const RequestRecord& r : recs) {
      EXPECT_EQ(r.error, c.expected) << c.faults << ": " << r.error_message;
      EXPECT_FALSE(r.error_message.empty());
    }
  }
}

TEST(ServeIntegration, AdmissionControlAnswers429) {
  serve::ServerOptions opt;
  opt.max_waiting = 1;
  serve::PacedEngineOptions eng = kFast;
  eng.max_running = 1;
  eng.itl = 10 * kNanosPerMilli;
  Served s(opt, eng);
  auto recs = s.Run(8, Dialect::kOpenAiChat,
                    R"({"model":"infereng-twin","messages":[{"role":"user","content":"hi"}],"max_tokens":5,)"
                    R"("ignore_eos":true,"stream":true})");
  int ok = 0, rejected = 0;
  for (const RequestRecord& r : recs) {
    if (r.ok()) ++ok;
    if (r.error == ErrorClass::kHttp4xx && r.http_status == 429) ++rejected;
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(rejected, 1);
  EXPECT_EQ(ok + rejected, 8);
}

}  // namespace
}  // namespace infereng::client
