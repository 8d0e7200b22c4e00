// A minimal blocking HTTP/1.1 client for serve's tests (not the product client, which is
// src/client/): sends one request on a fresh or kept connection and reads the response
// with Beast, stamping the arrival of every body chunk with steady_clock. Test-only:
// included by *_test.cc files, never by the library.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace infereng::serve::testing {

struct TestResponse {
  int status = 0;
  std::string body;                         // de-chunked
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::pair<int64_t, std::string>> chunks;  // steady ns, chunk data (streams)
  bool complete = false;                    // the message ended properly
  std::string error;
  std::string Header(const std::string& name) const {
    for (auto& [k, v] : headers) {
      if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
    }
    return "";
  }
  // The SSE "data: " payloads in order.
  std::vector<std::string> Events() const {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < body.size()) {
      std::size_t end = body.find("\n\n", pos);
      if (end == std::string::npos) break;
      std::string ev = body.substr(pos, end - pos);
      if (ev.rfind("data: ", 0) == 0) out.push_back(ev.substr(6));
      pos = end + 2;
    }
    return out;
  }
};

inline int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class TestClient {
 public:
  explicit TestClient(uint16_t port) : sock_(ioc_) {
    boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"), port);
    sock_.connect(ep);
  }
  // Over a Unix-domain socket (serve --uds).
  explicit TestClient(const std::string& unix_path) : sock_(ioc_) {
    sock_.connect(boost::asio::local::stream_protocol::endpoint(unix_path));
  }
  boost::asio::generic::stream_protocol::socket& socket() { return sock_; }

  void SendRaw(const std::string& raw) { boost::asio::write(sock_, boost::asio::buffer(raw)); }

  // Sends a request; extra_headers lines end with \r\n.
  void SendRequest(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& extra_headers = "") {
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") {
      // JSON unless extra_headers names the type (a multipart/form-data transcription).
      if (extra_headers.find("Content-Type:") == std::string::npos) req += "Content-Type: application/json\r\n";
      req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n" + body;
    SendRaw(req);
  }

  // Reads one response. `max_chunks` > 0 stops after that many body chunks (for tests
  // that disconnect mid-stream).
  TestResponse Read(std::size_t max_chunks = 0) {
    namespace http = boost::beast::http;
    TestResponse r;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    std::string chunk_acc;
    bool stop_early = false;
    auto on_chunk = [&](std::uint64_t remain, boost::beast::string_view body, boost::beast::error_code& ec) -> std::size_t {
      chunk_acc.append(body.data(), body.size());
      if (remain == body.size()) {
        r.chunks.emplace_back(SteadyNs(), chunk_acc);
        r.body += chunk_acc;
        chunk_acc.clear();
        if (max_chunks && r.chunks.size() >= max_chunks) {
          stop_early = true;
          ec = http::error::end_of_chunk;
        }
      }
      return body.size();
    };
    parser.on_chunk_body(on_chunk);
    boost::beast::error_code ec;
    http::read_header(sock_, buf_, parser, ec);
    if (ec) {
      r.error = ec.message();
      return r;
    }
    r.status = static_cast<int>(parser.get().result_int());
    for (auto& f : parser.get()) r.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    while (!parser.is_done()) {
      http::read_some(sock_, buf_, parser, ec);
      if (stop_early) return r;
      if (ec) {
        r.error = ec.message();
        return r;
      }
    }
    if (!parser.chunked()) r.body = parser.get().body();
    r.complete = true;
    return r;
  }

  TestResponse Call(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& extra_headers = "") {
    SendRequest(method, path, body, extra_headers);
    return Read();
  }

 private:
  boost::asio::io_context ioc_;
  boost::asio::generic::stream_protocol::socket sock_;
  boost::beast::flat_buffer buf_;
};

}  // namespace infereng::serve::testing
