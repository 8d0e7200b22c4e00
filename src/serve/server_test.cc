// End-to-end tests of serve::Server over real HTTP on 127.0.0.1, with PacedEngine (a
// fixed-cost engine whose schedule is easy to predict) behind it.
#include "serve/server.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "serve/http_test_client.h"
#include "serve/paced_engine.h"
#include "testing/paths.h"

namespace infereng::serve {
namespace {

using nlohmann::json;
using testing::TestClient;
using testing::TestResponse;

struct Fixture {
  explicit Fixture(ServerOptions opt = {}, PacedEngineOptions eng = {.ttft_base = 5 * kNanosPerMilli,
                                                                       .prefill_per_token = 0,
                                                                       .itl = 2 * kNanosPerMilli}) {
    opt.port = 0;
    server = std::make_unique<Server>(opt, std::make_unique<PacedEngine>(eng));
    auto p = server->Start();
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    port = p.ok() ? *p : 0;
  }
  TestResponse Post(const std::string& path, const json& body, const std::string& headers = "") {
    TestClient c(port);
    return c.Call("POST", path, body.dump(), headers);
  }
  TestResponse Get(const std::string& path) {
    TestClient c(port);
    return c.Call("GET", path);
  }
  std::unique_ptr<Server> server;
  uint16_t port = 0;
};

json ChatBody(int max_tokens, bool stream) {
  return {{"model", "infereng-twin"},
          {"messages", {{{"role", "user"}, {"content", "one two three four five"}}}},
          {"max_tokens", max_tokens},
          {"stream", stream}};
}

// Exact framing (one chunk per token) whatever the machine's load.
ServerOptions Strict() {
  ServerOptions o;
  o.merge_late_tokens = false;
  return o;
}

// Reads a metric's value (first sample line starting with `name{` or `name `).
double Metric(const std::string& text, const std::string& name) {
  std::size_t pos = 0;
  while ((pos = text.find(name, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      char next = text[pos + name.size()];
      if (next == '{' || next == ' ') {
        std::size_t eol = text.find('\n', pos);
        std::string line = text.substr(pos, eol - pos);
        return std::stod(line.substr(line.rfind(' ') + 1));
      }
    }
    pos += name.size();
  }
  return -1;
}

TEST(ServeServer, ChatStreamWithUsageFollowsVllmFraming) {
  Fixture f(Strict());
  json body = ChatBody(5, true);
  body["stream_options"] = {{"include_usage", true}};
  TestResponse r = f.Post("/v1/chat/completions", body, "x-request-id: abc-1\r\n");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("content-type").rfind("text/event-stream", 0), 0u);
  EXPECT_EQ(r.Header("x-request-id"), "abc-1");
  auto ev = r.Events();
  ASSERT_EQ(ev.size(), 1u + 5u + 1u + 1u);  // role, 5 content (last carries finish), usage, [DONE]
  json role = json::parse(ev[0]);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(role["choices"][0]["delta"]["content"], "");
  std::string text;
  for (int i = 1; i <= 5; ++i) {
    json c = json::parse(ev[i]);
    EXPECT_EQ(c["id"], role["id"]);
    text += c["choices"][0]["delta"]["content"].get<std::string>();
    EXPECT_EQ(c["choices"][0]["finish_reason"], i == 5 ? json("length") : json(nullptr));
  }
  EXPECT_FALSE(text.empty());
  json usage = json::parse(ev[6]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
  EXPECT_EQ(usage["usage"]["total_tokens"], 10);
  EXPECT_EQ(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(ev[7], "[DONE]");
  // The chunk with finish_reason carries the request's phases (docs/serve.md): PacedEngine
  // admits at once (queue 0), prefill = ttft_base 5 ms, decode = 4 gaps of 2 ms.
  json last = json::parse(ev[5]);
  ASSERT_TRUE(last.contains("timings")) << ev[5];
  const json& t = last["timings"];
  EXPECT_DOUBLE_EQ(t["queue_ms"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(t["prompt_ms"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(t["predicted_ms"].get<double>(), 8);
  EXPECT_EQ(t["prompt_n"], 5);
  EXPECT_EQ(t["cache_n"], 0);
  EXPECT_EQ(t["predicted_n"], 5);
  for (int i = 1; i <= 4; ++i) EXPECT_FALSE(json::parse(ev[i]).contains("timings")) << ev[i];
}

TEST(ServeServer, CompletionsStreamHasNoRoleChunkAndContinuousUsage) {
  Fixture f(Strict());
  json body = {{"prompt", "a b c"}, {"max_tokens", 4}, {"stream", true},
               {"stream_options", {{"include_usage", false}, {"continuous_usage_stats", true}}}};
  TestResponse r = f.Post("/v1/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  auto ev = r.Events();
  ASSERT_EQ(ev.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    json c = json::parse(ev[i]);
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_TRUE(c["choices"][0].contains("text"));
    EXPECT_EQ(c["usage"]["completion_tokens"], i + 1);
    EXPECT_EQ(c["usage"]["prompt_tokens"], 3);
  }
  EXPECT_EQ(ev[4], "[DONE]");
}

// Tokens 1 µs apart: no timer wakes that often (10 µs was not enough on a quiet AMD EPYC
// host: 276 of 300 chunks), so each engine advance finds several
// tokens of the stream due. Merged, they go out in fewer chunks carrying every token in
// order; strict, one chunk per token however late.
TEST(ServeServer, TokensDueTogetherAreMergedUnlessStrict) {
  const PacedEngineOptions fast{.ttft_base = kNanosPerMilli, .prefill_per_token = 0, .itl = kNanosPerMicro};
  const int kTokens = 300;
  json stream = {{"prompt", "a b c"}, {"max_tokens", kTokens}, {"ignore_eos", true}, {"seed", 7}, {"stream", true},
                 {"stream_options", {{"continuous_usage_stats", true}}}};
  json whole = stream;
  whole["stream"] = false;
  whole.erase("stream_options");
  for (bool merge : {true, false}) {
    SCOPED_TRACE(merge ? "merge" : "strict");
    ServerOptions opt;
    opt.merge_late_tokens = merge;
    Fixture f(opt, fast);
    TestResponse r = f.Post("/v1/completions", stream);
    ASSERT_EQ(r.status, 200) << r.body;
    auto ev = r.Events();
    ASSERT_GE(ev.size(), 2u);
    EXPECT_EQ(ev.back(), "[DONE]");
    std::string text;
    int last_completion = 0;
    for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
      json c = json::parse(ev[i]);
      text += c["choices"][0]["text"].get<std::string>();
      int completion = c["usage"]["completion_tokens"];
      EXPECT_GT(completion, last_completion) << "chunk " << i;  // every chunk carries >= 1 token
      last_completion = completion;
    }
    EXPECT_EQ(last_completion, kTokens);
    const std::size_t content_chunks = ev.size() - 1;
    if (merge) {
      EXPECT_LT(content_chunks, static_cast<std::size_t>(kTokens) * 9 / 10);
    } else {
      EXPECT_EQ(content_chunks, static_cast<std::size_t>(kTokens));
    }
    TestResponse w = f.Post("/v1/completions", whole);
    ASSERT_EQ(w.status, 200) << w.body;
    EXPECT_EQ(text, json::parse(w.body)["choices"][0]["text"].get<std::string>());  // same tokens, same order
  }
}

// --uds: the same API over a Unix-domain socket; a stale socket file is replaced, any
// other file refused, and the socket file is gone after Stop.
TEST(ServeServer, ServesOverAUnixSocket) {
  const std::string path = infereng::testing::ScratchPath("s.sock");
  ::unlink(path.c_str());
  for (int round = 0; round < 2; ++round) {  // twice: Stop leaves the path free for the next
    ServerOptions opt = Strict();
    opt.unix_socket = path;
    Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{.ttft_base = kNanosPerMilli, .prefill_per_token = 0,
                                                                        .itl = kNanosPerMilli}));
    auto port = server.Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    EXPECT_EQ(*port, 0);
    TestClient c(path);
    TestResponse r = c.Call("POST", "/v1/completions",
                            json({{"prompt", "a b"}, {"max_tokens", 3}, {"stream", true}}).dump());
    ASSERT_EQ(r.status, 200) << r.body << r.error;
    auto ev = r.Events();
    ASSERT_EQ(ev.size(), 4u);  // 3 content chunks + [DONE]
    EXPECT_EQ(ev.back(), "[DONE]");
    TestResponse h = c.Call("GET", "/health");  // keep-alive on the same socket
    EXPECT_EQ(h.status, 200);
    server.Stop();
    struct stat st {};
    EXPECT_NE(::lstat(path.c_str(), &st), 0) << "socket file left behind";
  }
  {  // a stale socket file (a crashed server) is replaced
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
    ServerOptions opt;
    opt.unix_socket = path;
    Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
    EXPECT_TRUE(server.Start().ok());
  }
  {  // a path longer than sockaddr_un allows: a clear error, nothing created
    ServerOptions opt;
    opt.unix_socket = ::testing::TempDir() + "/" + std::string(120, 'x') + ".sock";
    Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
    auto port = server.Start();
    ASSERT_FALSE(port.ok());
    EXPECT_NE(port.status().message().find("longer than a Unix socket path may be"), std::string::npos)
        << port.status().ToString();
  }
  {  // any other file is not touched
    std::ofstream(path) << "precious";
    ServerOptions opt;
    opt.unix_socket = path;
    Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
    auto port = server.Start();
    ASSERT_FALSE(port.ok());
    EXPECT_NE(port.status().message().find("exists and is not a socket"), std::string::npos) << port.status().ToString();
    std::ifstream in(path);
    std::string content;
    in >> content;
    EXPECT_EQ(content, "precious");
    ::unlink(path.c_str());
  }
}

// --uds on a path where a live server answers is refused, as TCP refuses a port in use
// (issue 10: the second server used to take the socket over and delete it on exit, leaving
// the first unreachable). The first server keeps answering, and its socket file stays.
TEST(ServeServer, UnixSocketOfALiveServerIsNotTakenOver) {
  const std::string path = infereng::testing::ScratchPath("s.sock");
  ::unlink(path.c_str());
  ServerOptions opt = Strict();
  opt.unix_socket = path;
  Server first(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
  ASSERT_TRUE(first.Start().ok());
  {
    Server second(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
    auto port = second.Start();
    ASSERT_FALSE(port.ok()) << "a second server took over a live socket";
    EXPECT_EQ(port.status().code(), Status::Code::kUnavailable);
    EXPECT_NE(port.status().message().find("Address already in use"), std::string::npos) << port.status().ToString();
  }  // the second server's destructor must not remove the first one's socket
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0) << "the live server's socket file was removed";
  TestClient c(path);
  EXPECT_EQ(c.Call("GET", "/health").status, 200);
  first.Stop();
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << "socket file left behind";
}

// `serve --host localhost` listens (a host name is resolved, not refused as "not an IP").
TEST(ServeServer, ListensOnAHostName) {
  ServerOptions opt;
  opt.host = "localhost";
  opt.port = 0;
  Server server(opt, std::make_unique<PacedEngine>(PacedEngineOptions{}));
  auto port = server.Start();
  ASSERT_TRUE(port.ok()) << port.status().ToString();
  TestClient c(*port);  // 127.0.0.1: localhost resolves to IPv4 first
  EXPECT_EQ(c.Call("GET", "/health").status, 200);
  server.Stop();
}

TEST(ServeServer, NonStreamingBothEndpoints) {
  Fixture f;
  TestResponse chat = f.Post("/v1/chat/completions", ChatBody(7, false));
  ASSERT_EQ(chat.status, 200) << chat.body;
  json j = json::parse(chat.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["usage"]["completion_tokens"], 7);
  std::string content = j["choices"][0]["message"]["content"];
  EXPECT_EQ(std::count(content.begin(), content.end(), ' '), 6);  // 7 words
  // The OpenAI shapes exactly: a chat choice has a message and no `text`, no reasoning here.
  EXPECT_FALSE(j["choices"][0].contains("text")) << chat.body;
  EXPECT_FALSE(j["choices"][0]["message"].contains("reasoning_content")) << chat.body;
  TestResponse comp = f.Post("/v1/completions", {{"prompt", "x y"}});
  ASSERT_EQ(comp.status, 200) << comp.body;
  json k = json::parse(comp.body);
  EXPECT_EQ(k["usage"]["completion_tokens"], 16);  // the completions default max_tokens
  EXPECT_EQ(k["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(k["choices"][0]["text"].is_string()) << comp.body;
  EXPECT_FALSE(k["choices"][0].contains("message")) << comp.body;
  // Non-streamed answers carry the same `timings` object.
  ASSERT_TRUE(j.contains("timings")) << chat.body;
  EXPECT_DOUBLE_EQ(j["timings"]["prompt_ms"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(j["timings"]["predicted_ms"].get<double>(), 12);  // 6 gaps of 2 ms
  EXPECT_EQ(j["timings"]["predicted_n"], 7);
  EXPECT_DOUBLE_EQ(k["timings"]["queue_ms"].get<double>(), 0);
}

TEST(ServeServer, PrefixCacheReportsCachedTokens) {
  Fixture f;
  std::string system;
  for (int i = 0; i < 40; ++i) system += "sys" + std::to_string(i) + " ";
  json a = {{"prompt", system + "question one"}, {"max_tokens", 2}};
  json b = {{"prompt", system + "another question"}, {"max_tokens", 2}};
  ASSERT_EQ(f.Post("/v1/completions", a).status, 200);
  json r = json::parse(f.Post("/v1/completions", b).body);
  EXPECT_EQ(r["usage"]["prompt_tokens_details"]["cached_tokens"], 32);  // two full 16-token blocks
}

TEST(ServeServer, StopStringCutsTheText) {
  Fixture f;
  json body = ChatBody(10, false);
  body["seed"] = 11;
  json full = json::parse(f.Post("/v1/chat/completions", body).body);
  std::string text = full["choices"][0]["message"]["content"];
  std::size_t s1 = text.find(' '), s2 = text.find(' ', s1 + 1), s3 = text.find(' ', s2 + 1);
  std::string third = text.substr(s2, s3 - s2);  // " word3"
  body["stop"] = third;
  json cut = json::parse(f.Post("/v1/chat/completions", body).body);
  if (text.find(third) == s2) {  // the third word does not occur earlier
    EXPECT_EQ(cut["choices"][0]["message"]["content"], text.substr(0, s2));
    EXPECT_EQ(cut["choices"][0]["finish_reason"], "stop");
    EXPECT_EQ(cut["choices"][0]["stop_reason"], third);
    EXPECT_EQ(cut["usage"]["completion_tokens"], 3);
  }
}

TEST(ServeServer, InfoEndpoints) {
  Fixture f;
  EXPECT_EQ(f.Get("/health").status, 200);
  json models = json::parse(f.Get("/v1/models").body);
  EXPECT_EQ(models["data"][0]["id"], "infereng-twin");
  EXPECT_GT(models["data"][0]["max_model_len"], 0);
  EXPECT_NE(f.Get("/version").body.find("infereng"), std::string::npos);
  json tok = json::parse(f.Post("/tokenize", {{"prompt", "The quick  brown fox"}}).body);
  EXPECT_EQ(tok["count"], 4);
  EXPECT_EQ(tok["tokens"].size(), 4u);
  ASSERT_EQ(f.Post("/v1/completions", {{"prompt", "a b c"}, {"max_tokens", 3}}).status, 200);
  std::string m = f.Get("/metrics").body;
  for (const char* name : {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                           "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
                           "vllm:num_preemptions_total", "vllm:time_to_first_token_seconds_bucket",
                           "vllm:inter_token_latency_seconds_count", "vllm:e2e_request_latency_seconds_sum",
                           "vllm:request_queue_time_seconds_count", "infereng:emission_lateness_seconds_count"}) {
    EXPECT_NE(m.find(name), std::string::npos) << name;
  }
  EXPECT_EQ(Metric(m, "vllm:prompt_tokens_total"), 3);
  EXPECT_EQ(Metric(m, "vllm:generation_tokens_total"), 3);
  EXPECT_NE(m.find("model_name=\"infereng-twin\""), std::string::npos);
}

TEST(ServeServer, UnsupportedParametersAre400InOpenAiShape) {
  Fixture f;
  for (auto [key, value] : std::vector<std::pair<std::string, json>>{
           {"n", 2}, {"tools", json::array({{{"type", "function"}}})}, {"logprobs", true}, {"max_tokens", "ten"}}) {
    json body = ChatBody(3, false);
    body[key] = value;
    TestResponse r = f.Post("/v1/chat/completions", body);
    EXPECT_EQ(r.status, 400) << key;
    json e = json::parse(r.body);
    EXPECT_EQ(e["error"]["param"], key);
    EXPECT_EQ(e["error"]["type"], "invalid_request_error");
    EXPECT_NE(e["error"]["message"].get<std::string>().find(key), std::string::npos);
    EXPECT_TRUE(e["error"].contains("code"));
  }
  TestResponse wrong_model = f.Post("/v1/chat/completions", {{"model", "gpt-9"}, {"messages", json::array()}});
  EXPECT_EQ(wrong_model.status, 404);
}

TEST(ServeServer, MalformedInputGetsClear4xx) {
  ServerOptions opt;
  opt.max_body_bytes = 1000;
  Fixture f(opt);
  {
    TestClient c(f.port);
    TestResponse r = c.Call("POST", "/v1/chat/completions", "{\"messages\": [");
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("not valid JSON"), std::string::npos);
  }
  {
    TestClient c(f.port);
    TestResponse r = c.Call("POST", "/v1/completions", std::string(5000, 'x'));
    EXPECT_EQ(r.status, 413);
  }
  {
    TestClient c(f.port);
    c.SendRaw("THIS IS NOT HTTP\r\n\r\n");
    TestResponse r = c.Read();
    EXPECT_EQ(r.status, 400);
  }
  EXPECT_EQ(f.Get("/v1/nothing").status, 404);
  EXPECT_EQ(f.Get("/v1/chat/completions").status, 405);
  {
    // Half-closed socket with a partial request: a clean close, and the server lives on.
    TestClient c(f.port);
    c.SendRaw("POST /v1/completions HTTP/1.1\r\nContent-Length: 50\r\n\r\n{\"pro");
    c.socket().shutdown(boost::asio::socket_base::shutdown_send);
    TestResponse r = c.Read();
    EXPECT_EQ(r.status, 0);
  }
  EXPECT_EQ(f.Get("/health").status, 200);
}

TEST(ServeServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  Fixture f;
  TestClient c(f.port);
  for (int i = 0; i < 3; ++i) {
    TestResponse r = c.Call("POST", "/v1/chat/completions", ChatBody(2, i % 2 == 0).dump());
    ASSERT_EQ(r.status, 200);
    ASSERT_TRUE(r.complete);
  }
}

TEST(ServeServer, PipelinedRequestsAreAnsweredInOrder) {
  Fixture f;
  TestClient c(f.port);
  std::string one = ChatBody(3, true).dump(), two = json({{"prompt", "z"}, {"max_tokens", 2}}).dump();
  c.SendRaw("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: " + std::to_string(one.size()) + "\r\n\r\n" + one +
            "POST /v1/completions HTTP/1.1\r\nContent-Length: " + std::to_string(two.size()) + "\r\n\r\n" + two);
  TestResponse a = c.Read();
  TestResponse b = c.Read();
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.Events().back(), "[DONE]");
  ASSERT_EQ(b.status, 200);
  EXPECT_EQ(json::parse(b.body)["usage"]["completion_tokens"], 2);
}

TEST(ServeServer, HeadHasHeadersOnly) {
  Fixture f;
  TestClient c(f.port);
  c.SendRequest("HEAD", "/v1/models");
  std::string raw(512, '\0');
  std::size_t n = c.socket().read_some(boost::asio::buffer(raw));
  raw.resize(n);
  EXPECT_EQ(raw.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(raw.find("\"object\""), std::string::npos);
}

TEST(ServeServer, QueueFullAnswers429) {
  ServerOptions opt;
  opt.max_waiting = 1;
  Fixture f(opt, {.ttft_base = kNanosPerMilli, .prefill_per_token = 0, .itl = 5 * kNanosPerMilli, .max_running = 1});
  TestClient a(f.port), b(f.port), c(f.port);
  a.SendRequest("POST", "/v1/chat/completions", ChatBody(200, true).dump());
  a.Read(2);  // a is running
  b.SendRequest("POST", "/v1/chat/completions", ChatBody(2, true).dump());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // b is waiting
  TestResponse r = c.Call("POST", "/v1/chat/completions", ChatBody(2, true).dump());
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(json::parse(r.body)["error"]["type"], "overloaded_error");
  EXPECT_EQ(f.server->Snapshot().requests_rejected, 1);
}

TEST(ServeServer, DisconnectFreesTheSlotAtOnce) {
  Fixture f({}, {.ttft_base = kNanosPerMilli, .prefill_per_token = 0, .itl = 5 * kNanosPerMilli, .max_running = 1});
  {
    TestClient a(f.port);
    a.SendRequest("POST", "/v1/chat/completions", ChatBody(10000, true).dump());
    a.Read(3);
    std::string m = f.Get("/metrics").body;
    EXPECT_EQ(Metric(m, "vllm:num_requests_running"), 1);
  }  // closes the socket mid-stream
  double running = -1;
  for (int i = 0; i < 100 && running != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    running = Metric(f.Get("/metrics").body, "vllm:num_requests_running");
  }
  EXPECT_EQ(running, 0);
  EXPECT_EQ(f.server->Snapshot().requests_aborted, 1);
  EXPECT_EQ(f.Post("/v1/chat/completions", ChatBody(2, false)).status, 200);  // the slot is free
}

TEST(ServeServer, RequestTimeoutEndsTheStreamWithAnError) {
  ServerOptions opt;
  opt.request_timeout = 100 * kNanosPerMilli;
  Fixture f(opt);
  TestResponse r = f.Post("/v1/chat/completions", ChatBody(100000, true));
  ASSERT_EQ(r.status, 200);
  auto ev = r.Events();
  ASSERT_GE(ev.size(), 2u);
  EXPECT_NE(ev[ev.size() - 2].find("\"error\""), std::string::npos);
  EXPECT_EQ(ev.back(), "[DONE]");
}

}  // namespace
}  // namespace infereng::serve
