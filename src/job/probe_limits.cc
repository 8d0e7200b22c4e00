// The limits-and-errors probe: requests a server must refuse — a prompt over the context
// window, max_tokens far too large, malformed JSON, an unknown model — each expected to get
// a 4xx with a message, in time; a 5xx, a 2xx or a hang fails.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "job/probe.h"

namespace infereng::job {

ProbeResult RunLimitsProbe(ProbeContext& ctx) {
  ProbeResult res;
  struct Case {
    std::string name;
    std::string body;
    int cancel_after = 0;
  };
  nlohmann::json unknown = nlohmann::json::parse(ctx.ChatBody("hello", 4, false));
  unknown["model"] = "infereng-probe-no-such-model";
  // Over the context by 64 tokens of "a" (one token each on common tokenizers, 2 bytes),
  // capped at 400k tokens so the body stays under 1 MiB: a server refusing the body for its
  // size (413) might close before reading it all, and the client would see a reset.
  const auto over = static_cast<std::size_t>(std::min<int64_t>(ctx.max_model_len + 64, 400000));
  std::string long_prompt;
  long_prompt.reserve(2 * over);
  for (std::size_t i = 0; i < over; ++i) long_prompt += i ? " a" : "a";
  std::vector<Case> cases = {
      {"over_context", ctx.ChatBody(long_prompt, 4, false)},
      {"huge_max_tokens", ctx.ChatBody("hello", int64_t{1} << 40, true), 1},
      {"malformed_json", R"({"messages": [{"role": "user", "content": "hi"})"},
      {"unknown_model", unknown.dump()},
  };
  int good = 0;
  std::string bad;
  for (Case& c : cases) {
    auto r = ctx.client.Call(CallSpec{.body = std::move(c.body), .sse = true, .cancel_after_chunks = c.cancel_after,
                                      .timeout = 10 * kNanosPerSecond});
    if (!r.ok()) {
      bad += (bad.empty() ? "" : "; ") + c.name + ": not sent (" + r.status().message() + ")";
      continue;
    }
    const bool is4xx = r->status >= 400 && r->status < 500;
    // The client's message is "HTTP 400 Bad Request: <the server's message>".
    const auto colon = r->error_message.find(": ");
    const bool has_message = colon != std::string::npos && r->error_message.size() > colon + 2;
    res.Add(c.name + "_status", r->status);
    res.Add(c.name + "_ms", NanosToMillis(r->latency()), "ms");
    res.timeline.push_back({ctx.MsSinceStart(r->t_end), fmt::format("{}: HTTP {} {}", c.name, r->status,
                                                                    r->error_message.substr(0, 160))});
    if (is4xx && has_message) {
      ++good;
    } else {
      const std::string what = r->error == metrics::ErrorClass::kTimeout ? "no answer within 10 s"
                               : r->status >= 200 && r->status < 300 ? fmt::format("accepted (HTTP {})", r->status)
                               : r->status == 0                      ? r->error_message
                               : is4xx                               ? fmt::format("HTTP {} without a message", r->status)
                                                                     : fmt::format("HTTP {}", r->status);
      bad += (bad.empty() ? "" : "; ") + c.name + ": " + what;
    }
  }
  res.Add("answered_4xx_with_message", good, "cases");
  if (good == static_cast<int>(cases.size())) {
    res.verdict = Verdict::kPass;
    res.finding = "every bad request got a 4xx with a message";
  } else {
    res.verdict = Verdict::kFail;
    res.finding = bad;
  }
  return res;
}

}  // namespace infereng::job
