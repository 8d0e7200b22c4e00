// Test-only: a tiny scripted HTTP/1.1 server on 127.0.0.1 (port 0) for client tests.
//
// Each accepted connection gets its own thread that reads requests (Beast, blocking) and
// hands each to the test's script, which writes raw bytes, pauses and/or closes — enough
// to replay captured responses verbatim and to misbehave on purpose (stall, disconnect).
// Optional TLS with a self-signed certificate generated in memory (MakeSelfSignedCert).
//
// Stop() (and the destructor) shut every socket down and join all threads, so a test
// never leaves a thread behind; Pause() sleeps in small steps and returns early on stop.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

namespace infereng::client::testing {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

struct CertPem {
  std::string cert;
  std::string key;
};

// A self-signed EC P-256 certificate for IP 127.0.0.1 (CN and subjectAltName).
inline CertPem MakeSelfSignedCert() {
  CertPem out;
  EVP_PKEY* pkey = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, "IP:127.0.0.1"},
                            std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(x, pkey, EVP_sha256());
  auto to_string = [](BIO* bio) {
    char* data = nullptr;
    long n = BIO_get_mem_data(bio, &data);
    std::string s(data, static_cast<std::size_t>(n));
    BIO_free(bio);
    return s;
  };
  BIO* cb = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(cb, x);
  out.cert = to_string(cb);
  BIO* kb = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(kb, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  out.key = to_string(kb);
  X509_free(x);
  EVP_PKEY_free(pkey);
  return out;
}

class ScriptedServer;

// What a script can do with one request's connection.
class Exchange {
 public:
  Exchange(ScriptedServer& server, std::function<void(std::string_view)> write)
      : server_(server), write_(std::move(write)) {}
  void Write(std::string_view bytes) { write_(bytes); }
  void Pause(std::chrono::milliseconds ms);
  void Close() { close_ = true; }  // close after the script returns
  bool closing() const { return close_; }

 private:
  ScriptedServer& server_;
  std::function<void(std::string_view)> write_;
  bool close_ = false;
};

using Script = std::function<void(const http::request<http::string_body>&, Exchange&)>;

class ScriptedServer {
 public:
  explicit ScriptedServer(Script script, const CertPem* tls = nullptr)
      : script_(std::move(script)), acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    if (tls) {
      tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
      tls_->use_certificate_chain(asio::buffer(tls->cert));
      tls_->use_private_key(asio::buffer(tls->key), asio::ssl::context::pem);
    }
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~ScriptedServer() { Stop(); }

  uint16_t port() const { return port_; }
  std::string url() const { return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }
  bool stopping() const { return stopping_.load(); }

  void Stop() {
    if (stopping_.exchange(true)) return;
    {  // wake the blocking accept with a throwaway connection
      boost::system::error_code ec;
      tcp::socket s(io_);
      s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    }
    accept_thread_.join();
    boost::system::error_code ignored;
    acceptor_.close(ignored);  // later connects are refused
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : threads_) t.join();
  }

 private:
  void AcceptLoop() {
    while (!stopping_) {
      auto sock = std::make_shared<tcp::socket>(io_);
      boost::system::error_code ec;
      acceptor_.accept(*sock, ec);
      if (ec || stopping_) break;
      ++connections_;
      std::lock_guard<std::mutex> lock(mu_);
      fds_.push_back(sock->native_handle());
      threads_.emplace_back([this, sock] { Serve(sock); });
    }
  }

  void Serve(std::shared_ptr<tcp::socket> sock) {
    boost::system::error_code ec;
    if (tls_) {
      asio::ssl::stream<tcp::socket&> stream(*sock, *tls_);
      stream.handshake(asio::ssl::stream_base::server, ec);
      if (!ec) Loop(stream);
    } else {
      Loop(*sock);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::erase(fds_, sock->native_handle());
    }
    sock->close(ec);
  }

  template <typename Stream>
  void Loop(Stream& stream) {
    boost::beast::flat_buffer buffer;
    while (!stopping_) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(stream, buffer, req, ec);
      if (ec) return;
      ++requests_;
      Exchange ex(*this, [&stream](std::string_view bytes) {
        boost::system::error_code wec;
        asio::write(stream, asio::buffer(bytes.data(), bytes.size()), wec);
      });
      script_(req, ex);
      if (ex.closing()) return;
    }
  }

  Script script_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::unique_ptr<asio::ssl::context> tls_;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread accept_thread_;
  std::mutex mu_;
  std::vector<std::thread> threads_;
  std::vector<int> fds_;
};

inline void Exchange::Pause(std::chrono::milliseconds ms) {
  auto until = std::chrono::steady_clock::now() + ms;
  while (!server_.stopping() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A response whose body is sent with Content-Length (replaces chunked framing).
inline std::string PlainResponse(int status, std::string_view reason, std::string_view content_type,
                                 std::string_view body, bool close = false) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  out += body;
  return out;
}

// Head of a chunked SSE response, and one chunk.
inline std::string SseHead() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
}
inline std::string Chunk(std::string_view payload) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", payload.size());
  return std::string(size) + std::string(payload) + "\r\n";
}
inline std::string LastChunk() { return "0\r\n\r\n"; }

}  // namespace infereng::client::testing
