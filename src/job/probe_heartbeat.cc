// The heartbeat probe (streaming integrity on long prompts): one stream with a long prompt,
// so the server spends a long prefill before its first token. Does it send anything in the
// meantime — SSE comment lines (": keep-alive", as TGI does), a role chunk — and how long is
// the connection silent? A proxy or load balancer with an idle timeout (nginx
// proxy_read_timeout and AWS ALB default to 60 s) cuts a connection silent for longer, and
// the client sees a dropped stream for a request the engine is still computing.
//
// The product client parses SSE into events and drops comments, so this probe reads the
// raw bytes itself (plain HTTP over TCP; https and Unix sockets: n/a) and stamps each read.
// Verdict: pass when the longest silence before the first token stayed under the threshold
// and the server sent something before it (heartbeats seen), or the silence stayed under
// the threshold during a prefill that outlasted it; warn when a silence reached the
// threshold; n/a when the prefill was shorter than the threshold and nothing came before
// the first token (nothing to tell from), or the stream failed.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "client/url.h"
#include "job/probe.h"

namespace infereng::job {

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

struct RawStream {
  int status = 0;
  Nanos t_send = -1, t_headers = -1, t_first_token = -1, t_end = -1;
  std::vector<Nanos> reads;          // arrival of each read before the first token
  std::vector<Nanos> comments;       // ":" lines before the first token
  std::vector<Nanos> events;         // non-output "data:" events before the first token (role chunk)
  std::string error;
};

// Is this SSE data payload an output token (non-empty content or text)?
bool CarriesOutput(std::string_view payload) {
  auto j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return false;
  const auto& c = j["choices"][0];
  for (const char* path : {"/delta/content", "/text", "/delta/reasoning_content"}) {
    const nlohmann::json::json_pointer p(path);
    if (c.contains(p) && c.at(p).is_string() && !c.at(p).get<std::string>().empty()) return true;
  }
  return false;
}

// Reads the response line by line (chunk-size lines of the chunked encoding are skipped as
// noise) until the first output token, the end, or the deadline.
class RawReader {
 public:
  explicit RawReader(RawStream* out) : out_(out) {}
  // Returns true when the stream is done (first token seen).
  bool Feed(std::string_view bytes, Nanos t) {
    if (out_->t_first_token < 0) out_->reads.push_back(t);
    buf_.append(bytes);
    if (out_->t_headers < 0) {
      const std::size_t end = buf_.find("\r\n\r\n");
      if (end == std::string::npos) return false;
      out_->t_headers = t;
      if (buf_.starts_with("HTTP/1.")) out_->status = std::atoi(buf_.c_str() + 9);
      buf_.erase(0, end + 4);
    }
    std::size_t nl;
    while ((nl = buf_.find('\n')) != std::string::npos) {
      std::string_view line(buf_.data(), nl);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.starts_with(':')) {
        out_->comments.push_back(t);
      } else if (line.starts_with("data:")) {
        std::string_view payload = line.substr(5);
        if (!payload.empty() && payload.front() == ' ') payload.remove_prefix(1);
        if (payload != "[DONE]" && CarriesOutput(payload)) {
          out_->t_first_token = t;
          return true;
        }
        out_->events.push_back(t);
      }
      buf_.erase(0, nl + 1);
    }
    return false;
  }

 private:
  RawStream* out_;
  std::string buf_;
};

RawStream RawCall(const client::ClientOptions& co, const client::Url& url, const std::string& body, Nanos timeout) {
  RawStream out;
  asio::io_context io;
  tcp::socket sock(io);
  asio::steady_timer deadline(io, std::chrono::nanoseconds(timeout));
  deadline.async_wait([&](boost::system::error_code ec) {
    if (ec) return;
    if (out.error.empty()) out.error = "timed out";
    boost::system::error_code ignore;
    sock.close(ignore);
  });
  std::string req = fmt::format("POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n"
                                "Accept: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
                                url.Target("/v1/chat/completions"), url.HostHeader(), body.size());
  for (const client::Header& h : co.headers) req += h.name + ": " + h.value + "\r\n";
  req += "\r\n" + body;
  std::array<char, 16384> buf{};
  RawReader reader(&out);
  std::function<void()> read = [&] {
    sock.async_read_some(asio::buffer(buf), [&](boost::system::error_code ec, std::size_t n) {
      const Nanos t = ProbeClient::SteadyNowNs();
      if (n > 0 && reader.Feed(std::string_view(buf.data(), n), t)) {
        out.t_end = t;
        deadline.cancel();
        boost::system::error_code ignore;
        sock.close(ignore);
        return;
      }
      if (ec) {
        out.t_end = t;
        if (out.error.empty() && ec != asio::error::eof) out.error = ec.message();
        deadline.cancel();
        return;
      }
      read();
    });
  };
  tcp::resolver resolver(io);
  boost::system::error_code resolve_ec;
  auto endpoints = resolver.resolve(url.host, std::to_string(url.port), resolve_ec);
  if (resolve_ec) {
    out.error = "resolve " + url.host + ": " + resolve_ec.message();
    return out;
  }
  asio::async_connect(sock, endpoints, [&](boost::system::error_code cec, const tcp::endpoint&) {
    if (cec) {
      out.error = "connect: " + cec.message();
      deadline.cancel();
      return;
    }
    asio::async_write(sock, asio::buffer(req), [&](boost::system::error_code wec, std::size_t) {
      out.t_send = ProbeClient::SteadyNowNs();
      if (wec) {
        out.error = "write: " + wec.message();
        deadline.cancel();
        return;
      }
      read();
    });
  });
  io.run();
  return out;
}

}  // namespace

ProbeResult RunHeartbeatProbe(ProbeContext& ctx) {
  ProbeResult res;
  const double threshold_ms = NanosToMillis(ctx.settings.heartbeat_silence);
  Result<client::Url> url = client::ParseUrl(ctx.client.options().base_url);
  if (!url.ok() || url->tls || !ctx.client.options().unix_socket.empty()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "reads raw bytes over plain HTTP only (the target is https or a Unix socket)";
    return res;
  }
  const int64_t tokens = std::max<int64_t>(
      16, std::min<int64_t>(ctx.settings.heartbeat_prompt_tokens, ctx.max_model_len * 9 / 10 - 32));
  if (!ctx.client.Charge(1).ok()) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = "no budget left for the long-prompt stream";
    return res;
  }
  const std::string body = ctx.ChatBody(ProbeContext::Words(static_cast<int32_t>(tokens), ctx.settings.seed + 77), 4, true);
  // Long enough to see a silence past the threshold, within the probe's time.
  const Nanos timeout = std::max<Nanos>(kNanosPerMilli, ctx.client.time_left() - kNanosPerSecond);
  RawStream s = RawCall(ctx.client.options(), *url, body, timeout);
  res.Add("prompt_words", static_cast<double>(tokens), "tokens");
  res.Add("silence_threshold_ms", threshold_ms, "ms");
  if (s.t_send < 0 || (s.status != 0 && s.status != 200) || (s.t_first_token < 0 && s.error.empty())) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = s.status != 0 && s.status != 200
                      ? fmt::format("the long-prompt stream was refused (HTTP {})", s.status)
                      : "the long-prompt stream did not start: " + (s.error.empty() ? std::string("no answer") : s.error);
    return res;
  }
  // The longest silence: from the request's send to the first token (or to the end when none
  // came), between the reads that arrived before it.
  const Nanos until = s.t_first_token >= 0 ? s.t_first_token : s.t_end;
  // Only what arrived in an earlier read than the first token kept the connection alive (the
  // role chunk written together with the first token does not).
  std::erase_if(s.comments, [&](Nanos t) { return t >= until; });
  std::erase_if(s.events, [&](Nanos t) { return t >= until; });
  Nanos prev = s.t_send, longest = 0;
  for (Nanos t : s.reads) {
    if (t > until) break;
    longest = std::max(longest, t - prev);
    prev = t;
  }
  longest = std::max(longest, until - prev);
  const double ttft_ms = s.t_first_token >= 0 ? NanosToMillis(s.t_first_token - s.t_send) : -1;
  const double first_byte_ms = s.t_headers >= 0 ? NanosToMillis(s.t_headers - s.t_send) : -1;
  res.Add("first_token_ms", ttft_ms, "ms");
  res.Add("headers_ms", first_byte_ms, "ms");
  res.Add("comments_before_first_token", static_cast<double>(s.comments.size()), "lines");
  res.Add("events_before_first_token", static_cast<double>(s.events.size()), "events");
  res.Add("longest_silence_ms", NanosToMillis(longest), "ms");
  auto ms = [&](Nanos t) { return ctx.MsSinceStart(t); };
  res.timeline.push_back({ms(s.t_send), fmt::format("long prompt sent ({} words)", tokens)});
  if (s.t_headers >= 0) res.timeline.push_back({ms(s.t_headers), "response headers"});
  if (!s.comments.empty()) {
    res.timeline.push_back({ms(s.comments.front()), fmt::format("first SSE comment (of {})", s.comments.size())});
  }
  if (s.t_first_token >= 0) res.timeline.push_back({ms(s.t_first_token), "first token"});
  const bool sent_something = !s.comments.empty() || !s.events.empty();
  const double silence_ms = NanosToMillis(longest);
  if (silence_ms >= threshold_ms) {
    res.verdict = Verdict::kWarn;
    res.finding = fmt::format("silent for {:.0f} ms before the first token{} ({} SSE comments): a proxy idle timeout "
                              "under that cuts long prompts (threshold {:.0f} ms)",
                              silence_ms, s.t_first_token < 0 ? " (none came: " + s.error + ")" : "",
                              s.comments.size(), threshold_ms);
  } else if (s.t_first_token < 0) {
    res.verdict = Verdict::kNotApplicable;
    res.finding = fmt::format("no first token within the budget ({}); longest silence {:.0f} ms", s.error, silence_ms);
  } else if (sent_something) {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("keeps the connection alive during prefill: {} SSE comments and {} events before the first "
                              "token at {:.0f} ms, longest silence {:.0f} ms (threshold {:.0f} ms)",
                              s.comments.size(), s.events.size(), ttft_ms, silence_ms, threshold_ms);
  } else if (ttft_ms >= threshold_ms) {
    res.verdict = Verdict::kPass;
    res.finding = fmt::format("first token after {:.0f} ms with no silence over {:.0f} ms", ttft_ms, threshold_ms);
  } else {
    res.verdict = Verdict::kNotApplicable;
    res.finding = fmt::format("the prefill ({:.0f} ms to the first token) was shorter than the {:.0f} ms threshold and "
                              "nothing came before the token: whether it sends keep-alives cannot be told (a longer "
                              "prompt, --heartbeat-prompt-tokens, would)",
                              ttft_ms, threshold_ms);
  }
  return res;
}

}  // namespace infereng::job
