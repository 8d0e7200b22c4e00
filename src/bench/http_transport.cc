#include "bench/http_transport.h"

#include <pthread.h>
#include <time.h>

#include <future>

#include <boost/asio/post.hpp>

namespace infereng::bench {

struct HttpTransport::Stream {
  metrics::RequestRecord record;
  std::unique_ptr<client::RecordingHandler> handler;
  DoneFn done;
  int quality_item = -1;
};

HttpTransport::HttpTransport(HttpTransportOptions options)
    : options_(std::move(options)), work_(boost::asio::make_work_guard(io_)) {}

Result<std::unique_ptr<HttpTransport>> HttpTransport::Create(HttpTransportOptions options) {
  std::unique_ptr<HttpTransport> t(new HttpTransport(std::move(options)));
  INFERENG_ASSIGN_OR_RETURN(t->client_, client::HttpClient::Create(t->io_, t->options_.client));
  t->thread_ = std::thread([raw = t.get()] { raw->io_.run(); });
  return t;
}

HttpTransport::~HttpTransport() {
  if (client_) client_->CancelAll();
  work_.reset();
  // Give cancelled streams a moment to report, then stop the loop regardless.
  boost::asio::post(io_, [this] { io_.stop(); });
  if (thread_.joinable()) thread_.join();
  client_.reset();
}

void HttpTransport::Start(PreparedRequest req, DoneFn done) {
  auto s = std::make_unique<Stream>();
  s->record = std::move(req.record);
  s->done = std::move(done);
  s->quality_item = req.quality_item;
  client::StreamRequest sr;
  sr.path = std::move(req.path);
  sr.body = std::move(req.body);
  if (!req.request_id.empty()) sr.headers.push_back({"x-request-id", std::move(req.request_id)});
  sr.dialect = options_.endpoint == ApiEndpoint::kChat ? client::Dialect::kOpenAiChat
                                                       : client::Dialect::kOpenAiCompletions;
  const bool keep_text = req.keep_text;
  boost::asio::post(io_, [this, s = std::move(s), sr = std::move(sr), keep_text]() mutable {
    Stream* raw = s.release();  // owned by the handler's completion from here on
    raw->handler = std::make_unique<client::RecordingHandler>(&raw->record, [raw](client::RecordingHandler& h) {
      std::unique_ptr<Stream> own(raw);
      Finished f{std::move(own->record), h.output_text(), own->quality_item};
      DoneFn finish = std::move(own->done);
      // The handler is destroyed with `own` after this lambda returns to the client:
      // RecordingHandler allows on_done to destroy it.
      own.reset();
      finish(std::move(f));
    });
    raw->handler->keep_text(keep_text);
    if (cancelling_.load()) {
      client::StreamEnd end;
      end.error = metrics::ErrorClass::kCancelled;
      end.error_message = "cancelled before it was sent";
      raw->handler->OnEnd(end);
      return;
    }
    client_->StartStream(std::move(sr), raw->handler.get());
    connections_opened_.store(client_->connections_opened(), std::memory_order_relaxed);
    stale_dropped_.store(client_->stale_connections_dropped(), std::memory_order_relaxed);
  });
}

void HttpTransport::CancelAll() {
  cancelling_.store(true);
  if (client_) client_->CancelAll();
}

Nanos HttpTransport::IoThreadCpu() const {
  clockid_t cid;
  if (!thread_.joinable()) return 0;
  if (pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(), &cid) != 0) return 0;
  timespec ts{};
  if (clock_gettime(cid, &ts) != 0) return 0;
  return static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec;
}

client::PreconnectResult HttpTransport::Preconnect(std::size_t n) {
  std::promise<client::PreconnectResult> got;
  std::future<client::PreconnectResult> result = got.get_future();
  boost::asio::post(io_, [this, n, &got] {
    client_->Preconnect(n, [this, &got](const client::PreconnectResult& r) {
      connections_opened_.store(client_->connections_opened(), std::memory_order_relaxed);
      got.set_value(r);
    });
  });
  return result.get();  // bounded: every open ends by the client's connect timeout
}

std::size_t HttpTransport::ConnectionsOpened() const { return connections_opened_.load(); }
std::size_t HttpTransport::StaleConnectionsDropped() const { return stale_dropped_.load(); }

}  // namespace infereng::bench
