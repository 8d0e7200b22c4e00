// HttpClient: the public API (create, start, cancel, pool counters).
#include "client/http_client.h"

#include <sys/un.h>

#include <boost/asio/local/stream_protocol.hpp>

#include <boost/asio/post.hpp>

#include "client/http_error.h"
#include "client/stream_state.h"

namespace infereng::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using metrics::ErrorClass;

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpClient::~HttpClient() {
  for (auto& [id, s] : impl_->active) {
    s->finished = true;
    s->timer.cancel();
    if (s->conn) s->conn->Close();
  }
  for (auto& c : impl_->idle) c->Close();
}

StreamId HttpClient::StartStream(StreamRequest request, StreamHandler* handler) {
  Impl& im = *impl_;
  auto s = std::make_shared<StreamState>(im.io);
  s->id = im.next_id++;
  s->handler = handler;
  s->request = std::move(request);
  if (s->request.request_timeout < 0) s->request.request_timeout = im.options.request_timeout;
  const Nanos now = SteadyNow();
  s->last_activity = now;
  if (s->request.request_timeout > 0) s->deadline = now + s->request.request_timeout;

  auto& req = s->http_request;
  req.version(11);
  req.method_string(s->request.method);
  req.target(im.url.Target(s->request.path));
  req.set(http::field::host, im.url.HostHeader());
  req.set(http::field::user_agent, "infereng");
  if (s->request.sse) req.set(http::field::accept, "text/event-stream");
  for (const std::vector<Header>* list : {&im.options.headers, &s->request.headers}) {
    for (const Header& h : *list) req.set(h.name, h.value);
  }
  if (!s->request.body.empty() || s->request.method == "POST") {
    if (req.find(http::field::content_type) == req.end()) req.set(http::field::content_type, "application/json");
    req.body() = s->request.body;
  }
  req.keep_alive(true);
  req.prepare_payload();

  im.active.emplace(s->id, s);
  for (const std::vector<Header>* list : {&im.options.headers, &s->request.headers}) {
    for (const Header& h : *list) {
      if (!HeaderIsValid(h)) {
        asio::post(im.io, [&im, s, name = h.name] {
          im.Fail(s, ErrorClass::kProtocol, "invalid request header \"" + name.substr(0, 64) + "\"");
        });
        return s->id;
      }
    }
  }
  if (im.options.max_connections > 0 && im.idle.empty() && im.open >= im.options.max_connections) {
    im.waiting.push_back(s);
  } else {
    im.Begin(s);
  }
  return s->id;
}

void HttpClient::Cancel(StreamId id) {
  auto it = impl_->active.find(id);
  if (it == impl_->active.end()) return;
  std::shared_ptr<StreamState> s = it->second;
  impl_->Fail(s, ErrorClass::kCancelled, "cancelled by the client");
}

void HttpClient::CancelAll() {
  Impl* im = impl_.get();
  asio::post(im->io, [im] {
    std::vector<std::shared_ptr<StreamState>> all;
    for (auto& [id, s] : im->active) all.push_back(s);
    im->waiting.clear();
    for (auto& s : all) im->Fail(s, ErrorClass::kCancelled, "cancelled by the client");
    for (auto& c : im->idle) c->Close();
    im->open -= std::min(im->open, im->idle.size());
    im->idle.clear();
  });
}

std::size_t HttpClient::active_streams() const { return impl_->active.size(); }
std::size_t HttpClient::open_connections() const { return impl_->open; }
std::size_t HttpClient::connections_opened() const { return impl_->opened_total; }
std::size_t HttpClient::stale_connections_dropped() const { return impl_->stale_dropped; }
const Url& HttpClient::url() const { return impl_->url; }

Result<std::unique_ptr<HttpClient>> HttpClient::Create(asio::io_context& io, ClientOptions options) {
  auto impl = std::make_unique<Impl>(io);
  INFERENG_ASSIGN_OR_RETURN(impl->url, ParseUrl(options.base_url));
  for (const Header& h : options.headers) {
    if (!HeaderIsValid(h)) {
      return Status::InvalidArgument("header \"" + h.name.substr(0, 64) +
                                     "\": invalid name or a line break in the value");
    }
  }
  if (options.expected_concurrency > 0) {
    INFERENG_RETURN_IF_ERROR(EnsureFileDescriptors(options.expected_concurrency));
  }
  if (impl->url.tls) {
    impl->tls.emplace(ssl::context::tls_client);
    beast::error_code ec;
    if (options.insecure) {
      impl->tls->set_verify_mode(ssl::verify_none, ec);
    } else {
      impl->tls->set_verify_mode(ssl::verify_peer, ec);
      if (!options.ca_file.empty()) {
        impl->tls->load_verify_file(options.ca_file, ec);
        if (ec) return Status::InvalidArgument("CA file \"" + options.ca_file + "\": " + ec.message());
      } else {
        impl->tls->set_default_verify_paths(ec);
        if (ec) return Status::Unavailable("cannot load the system CA certificates: " + ec.message());
      }
    }
  }
  if (!options.unix_socket.empty()) {
    // The URL still gives the scheme, Host header and path prefix (as curl --unix-socket).
    if (options.unix_socket.size() >= sizeof(sockaddr_un::sun_path)) {
      return Status::InvalidArgument("--unix-socket: \"" + options.unix_socket + "\" is longer than a Unix socket path may be");
    }
    impl->endpoints.emplace_back(asio::local::stream_protocol::endpoint(options.unix_socket));
  } else {
    beast::error_code ec;
    tcp::resolver resolver(io);
    auto resolved = resolver.resolve(impl->url.host, std::to_string(impl->url.port), ec);
    if (ec) return Status::Unavailable("cannot resolve host \"" + impl->url.host + "\": " + ec.message());
    for (const auto& e : resolved) impl->endpoints.emplace_back(e.endpoint());
  }
  impl->options = std::move(options);
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

}  // namespace infereng::client
