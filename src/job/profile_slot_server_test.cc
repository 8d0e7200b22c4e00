// profile against a llama.cpp-like slot server (a scripted one, FakeSlotServer): the
// occupancy phase measures the step over the cells idle slots hold, a refused slot pin or a
// server that does not erase its slots is a note, and two profiles of one server share no
// prompt (a real llama-server answers a repeated prompt from its cache).
#include "job/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/test_server.h"
#include "twin/llamacpp_kv.h"
#include "twin/measured_cost.h"
#include "twin/profile_file.h"

namespace infereng::job {
namespace {
// A llama.cpp-like server for the profile's occupancy phase: 4 slots of 512 cells in one
// cache whose cells it places as llama.cpp b4748 does (twin::LlamaCppKvCells); every step
// costs 2 ms + 1 ms per 25 cells its attention spans (up to the highest used cell, idle
// slots' cells and holes included); a request runs in its `id_slot` (else the slots in
// turn), first frees its slot's old cells (cache_prompt off) and leaves its own there;
// POST /slots/N?action=erase empties slot N when `erase` is on (--slot-save-path).
class FakeSlotServer {
 public:
  static constexpr int kSlots = 4;
  // `reject_pinned`: answer a request carrying `id_slot` with 400 (a server without slots
  // that refuses unknown fields).
  explicit FakeSlotServer(bool reject_pinned = false, bool erase = true)
      : reject_pinned_(reject_pinned), erase_(erase),
        server_([this](const auto& req, client::testing::Exchange& ex) { Handle(req, ex); }) {}
  std::string url() const { return server_.url(); }
  static double StepMs(int64_t span) { return 2.0 + static_cast<double>(span) / 25.0; }
  std::array<int64_t, kSlots> cells() {
    std::lock_guard<std::mutex> lock(mu_);
    std::array<int64_t, kSlots> out{};
    for (int i = 0; i < kSlots; ++i) out[static_cast<std::size_t>(i)] = kv_.CellsOf(i);
    return out;
  }
  // Spans of the steps of pinned requests (the ones the occupancy phase measures).
  std::vector<int64_t> pinned_spans() {
    std::lock_guard<std::mutex> lock(mu_);
    return pinned_spans_;
  }
  int measured_in_filled_slot() {
    std::lock_guard<std::mutex> lock(mu_);
    return streams_in_low_slots_;
  }
  // Every prompt sent to /v1/chat/completions, in order.
  std::vector<std::string> prompts() {
    std::lock_guard<std::mutex> lock(mu_);
    return prompts_;
  }

 private:
  static void Sleep(double ms) { std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(ms * 1000))); }
  static std::string Chunk(const std::string& data) {
    const std::string event = "data: " + data + "\n\n";
    char len[16];
    std::snprintf(len, sizeof len, "%zx\r\n", event.size());
    return len + event + "\r\n";
  }
  void Handle(const boost::beast::http::request<boost::beast::http::string_body>& req, client::testing::Exchange& ex) {
    auto json_reply = [&](const nlohmann::json& j) {
      const std::string body = j.dump();
      ex.Write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body);
    };
    const std::string target(req.target());
    if (target == "/v1/models") return json_reply({{"data", {{{"id", "fake-slots"}, {"owned_by", "llamacpp"}}}}});
    if (target == "/props") {
      return json_reply({{"default_generation_settings", {{"n_ctx", 512}}}, {"total_slots", kSlots}});
    }
    if (target.starts_with("/slots/") && target.ends_with("?action=erase")) {
      if (!erase_) {
        const std::string err = R"({"error":{"code":501,"message":"This server does not support slots action.","type":"not_supported_error"}})";
        ex.Write("HTTP/1.1 501 Not Implemented\r\nContent-Type: application/json\r\nContent-Length: " +
                 std::to_string(err.size()) + "\r\n\r\n" + err);
        return;
      }
      const int slot = std::stoi(target.substr(7));
      std::lock_guard<std::mutex> lock(mu_);
      const int32_t n = kv_.CellsOf(slot);
      kv_.SeqRm(slot, 0, -1);
      return json_reply({{"id_slot", slot}, {"n_erased", n}});
    }
    if (target != "/v1/chat/completions") {
      ex.Write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const nlohmann::json body = nlohmann::json::parse(req.body());
    if (reject_pinned_ && body.contains("id_slot")) {
      const std::string err = R"({"error":{"message":"unknown field id_slot","type":"invalid_request_error"}})";
      ex.Write("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(err.size()) + "\r\n\r\n" + err);
      return;
    }
    const std::string content = body["messages"][0]["content"];
    {
      std::lock_guard<std::mutex> lock(mu_);
      prompts_.push_back(content);
    }
    const int64_t prompt = static_cast<int64_t>(std::count(content.begin(), content.end(), ' ')) + 1 + 3;
    const int64_t out = body.value("max_tokens", 1);
    const bool stream = body.value("stream", false);
    int64_t span = 0;
    int slot = body.value("id_slot", -1);
    const bool pinned = body.contains("id_slot");
    // One step of `n` cells of the request's slot from position `pos`: its span.
    auto place = [&](int64_t pos, int64_t n) {
      std::lock_guard<std::mutex> lock(mu_);
      const twin::LlamaCppKvCells::Run run{slot, static_cast<int32_t>(pos), static_cast<int32_t>(n)};
      const int64_t sp = kv_.Decode({&run, 1});
      kv_.EndBatch();
      if (pinned) pinned_spans_.push_back(sp);
      return sp;
    };
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (slot < 0 || slot >= kSlots) slot = next_++ % kSlots;
      if (stream && slot < kSlots - 1 && pinned) ++streams_in_low_slots_;
      kv_.SeqRm(slot, 0, -1);
    }
    span = place(0, prompt);
    Sleep(0.02 * static_cast<double>(prompt) + static_cast<double>(span) / 100.0);  // the prefill step
    if (!stream) {
      json_reply({{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", "x"}}}}}},
                  {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", 1}}}});
      return;
    }
    ex.Write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string token = R"({"choices":[{"index":0,"delta":{"content":"x"}}]})";
    ex.Write(Chunk(token));
    for (int64_t i = 1; i < out; ++i) {
      Sleep(StepMs(place(prompt + i - 1, 1)));
      ex.Write(Chunk(token));
    }
    ex.Write(Chunk(nlohmann::json{{"choices", nlohmann::json::array()},
                                  {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", out}}}}
                       .dump()));
    ex.Write(Chunk("[DONE]") + "0\r\n\r\n");
  }

  const bool reject_pinned_;
  const bool erase_;
  std::mutex mu_;
  twin::LlamaCppKvCells kv_{kSlots * 512};
  std::vector<int64_t> pinned_spans_;
  int next_ = 0;
  int streams_in_low_slots_ = 0;
  std::vector<std::string> prompts_;
  client::testing::ScriptedServer server_;
};

// A short profile of `url`: two streams at most, prompts of 64 words, one repeat.
ProfileOptions ShortProfile(const std::string& url, int decode_tokens) {
  ProfileOptions o;
  o.target = o.client.base_url = url;
  o.max_batch = 2;
  o.max_prompt_words = 64;
  o.decode_tokens = decode_tokens;
  o.repeats = 1;
  return o;
}

// llama-server b11669 keeps earlier prompts in host memory: a second profile with the same
// seed sent the first one's prompts again and measured a 472-token prefill in 9 ms (539 ms on
// a fresh server). Prompts are salted afresh each run. (One-word prompts are left out: two
// random words may meet by chance, one in a million.)
TEST(ProfilePrompts, TwoProfilesOfOneServerShareNoPrompt) {
  FakeSlotServer fake;
  ProfileOptions o = ShortProfile(fake.url(), 4);
  o.occupancy = false;
  ASSERT_TRUE(RunProfile(o).ok());
  const std::vector<std::string> first = fake.prompts();
  ASSERT_TRUE(RunProfile(o).ok());
  const std::vector<std::string> all = fake.prompts();
  const std::set<std::string> seen(first.begin(), first.end());
  int compared = 0;
  for (std::size_t i = first.size(); i < all.size(); ++i) {
    if (all[i].find(' ') == std::string::npos) continue;
    ++compared;
    EXPECT_EQ(seen.count(all[i]), 0u) << "the second profile sent a prompt of the first: " << all[i].substr(0, 40);
  }
  EXPECT_GT(compared, 0);
}

TEST(ProfileOccupancy, MeasuresTheStepOverTheCellsIdleSlotsHold) {
  FakeSlotServer fake;
  ProfileOptions o;
  o.target = fake.url();
  o.client.base_url = fake.url();
  o.max_batch = 2;
  o.max_prompt_words = 256;
  o.decode_tokens = 12;
  o.repeats = 2;
  o.budget = 60 * kNanosPerSecond;
  auto p = RunProfile(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const std::string& n : p->notes) {
    EXPECT_EQ(n.find("occupancy"), std::string::npos) << n;
  }
  const twin::OccupancyTable& g = p->table.occupancy;
  ASSERT_FALSE(g.empty());
  ASSERT_EQ(g.kv_occupied.size(), 4u);  // 0 to 3 of the three other slots filled
  ASSERT_EQ(g.batch_tokens.size(), 3u);  // a decode step, 64- and 256-word prefills
  EXPECT_EQ(g.batch_tokens[0], 1);
  // Filled slots hold three quarters of a slot's 512 cells: each row's span is ~380 wider.
  for (std::size_t i = 1; i < g.kv_occupied.size(); ++i) EXPECT_GT(g.kv_occupied[i] - g.kv_occupied[i - 1], 150) << i;
  // The profile's replay of the server's cell allocation (from the erased cache) gives the
  // spans the server itself attended over, up to one pad of 32 cells: the erase leaves the
  // head at most two prompts' length from cell 0 (llamacpp_kv.h's head reset).
  const std::vector<int64_t> served = fake.pinned_spans();
  for (const twin::ProfilePoint& q : p->points) {
    if (q.kind != "occupancy") continue;
    int64_t nearest = 1 << 20;
    for (int64_t sp : served) nearest = std::min(nearest, std::abs(sp - q.kv_occupied_tokens));
    EXPECT_LE(nearest, 32) << q.new_tokens << " tokens at a span of " << q.kv_occupied_tokens;
    EXPECT_EQ(q.kv_occupied_tokens % 32, 0) << q.kv_occupied_tokens;
  }
  // Each measured decode step is the server's step at its span (sleeps only run late on a
  // loaded machine or under a sanitizer: the bound above is wider). The grid's rows are the
  // column's least-squares line, so they are checked for their order and their growth only.
  int decode_points = 0;
  for (const twin::ProfilePoint& q : p->points) {
    if (q.kind != "occupancy" || q.new_tokens != 1) continue;
    ++decode_points;
    const double want = FakeSlotServer::StepMs(q.kv_occupied_tokens) / 1e3;
    EXPECT_GE(q.seconds, 0.9 * want) << "at a span of " << q.kv_occupied_tokens << " cells";
    // 5 ms of slack: a short sleep overran by a few ms with both cores compiling; the rows
    // are ~15 ms apart, so a point measured at the wrong span still fails.
    EXPECT_LE(q.seconds, 1.4 * want + 0.005) << "at a span of " << q.kv_occupied_tokens << " cells";
  }
  EXPECT_EQ(decode_points, 4);
  for (std::size_t i = 1; i < g.kv_occupied.size(); ++i) {
    for (std::size_t j = 0; j < g.batch_tokens.size(); ++j) EXPECT_GE(g.seconds[i][j], g.seconds[i - 1][j]);
  }
  EXPECT_GT(g.seconds[3][0], 2 * g.seconds[0][0]);  // the idle slots' cells slow the step
  // Measured streams ran in the last slot only: the filled slots kept their prompts.
  EXPECT_EQ(fake.measured_in_filled_slot(), 0);
  const auto cells = fake.cells();
  EXPECT_GT(cells[0], 150);
  EXPECT_GT(cells[1], 150);
  // The twin prices a step by the grid.
  auto cost = twin::MakeMeasuredCost(*p);
  fit::StepShape decode{.decode_seqs = 1, .decode_context = 20, .kv_occupied_tokens = static_cast<int64_t>(g.kv_occupied[2])};
  EXPECT_NEAR(cost->StepSeconds(decode), g.seconds[2][0], 1e-9);
}

// A server that refuses the slot pin: the profile still ends with its other points and a
// note naming the failed request; --no-occupancy sends no pinned request at all.
TEST(ProfileOccupancy, ARefusedPinIsANoteAndNoOccupancyIsOptional) {
  FakeSlotServer refusing(/*reject_pinned=*/true);
  ProfileOptions o = ShortProfile(refusing.url(), 8);
  auto p = RunProfile(o);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->table.occupancy.empty());
  EXPECT_THAT(p->notes, ::testing::Contains(::testing::HasSubstr("occupancy: filling slot 0: HTTP 400")));

  FakeSlotServer fake;
  o.target = o.client.base_url = fake.url();
  o.occupancy = false;
  auto off = RunProfile(o);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_TRUE(off->table.occupancy.empty());
  for (const twin::ProfilePoint& q : off->points) EXPECT_NE(q.kind, "occupancy");
  EXPECT_EQ(fake.measured_in_filled_slot(), 0);

  // A server that does not erase its slots (llama-server without --slot-save-path): the
  // grid is still measured, with a note that its spans assume an empty cache.
  FakeSlotServer no_erase(/*reject_pinned=*/false, /*erase=*/false);
  o.target = o.client.base_url = no_erase.url();
  o.occupancy = true;
  auto kept = RunProfile(o);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_FALSE(kept->table.occupancy.empty());
  EXPECT_THAT(kept->notes, ::testing::Contains(::testing::HasSubstr("did not erase its slots")));
}

}  // namespace
}  // namespace infereng::job
