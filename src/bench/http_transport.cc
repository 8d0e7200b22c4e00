#include "bench/http_transport.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <future>

#include <boost/asio/post.hpp>

#include "client/embeddings_response.h"
#include "client/rerank_response.h"
#include "client/whole_answer.h"

namespace infereng::bench {

struct HttpTransport::Stream {
  metrics::RequestRecord record;
  std::unique_ptr<client::RecordingHandler> handler;
  // Wraps `handler` on /v1/embeddings and /v1/rerank: checks the one JSON answer.
  std::unique_ptr<client::StreamHandler> answer;
  DoneFn done;
  int quality_item = -1;
};

int DefaultIoThreads(unsigned hardware_threads) {
  if (hardware_threads <= 4) return 1;
  return static_cast<int>(std::min(8u, hardware_threads / 4));
}

HttpTransport::HttpTransport(HttpTransportOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<HttpTransport>> HttpTransport::Create(HttpTransportOptions options) {
  if (options.io_threads < 1) {
    return Status::InvalidArgument("--io-threads " + std::to_string(options.io_threads) + ": at least 1");
  }
  std::unique_ptr<HttpTransport> t(new HttpTransport(std::move(options)));
  for (int i = 0; i < t->options_.io_threads; ++i) {
    auto lane = std::make_unique<Lane>();
    // The descriptor limit is process-wide: every lane asks for the total (idempotent).
    INFERENG_ASSIGN_OR_RETURN(lane->client, client::HttpClient::Create(lane->io, t->options_.client));
    t->lanes_.push_back(std::move(lane));
  }
  for (auto& lane : t->lanes_) lane->thread = std::thread([raw = lane.get()] { raw->io.run(); });
  return t;
}

HttpTransport::~HttpTransport() {
  for (auto& lane : lanes_) {
    if (lane->client) lane->client->CancelAll();
    lane->work.reset();
    // Give cancelled streams a moment to report, then stop the loop regardless.
    boost::asio::post(lane->io, [raw = lane.get()] { raw->io.stop(); });
  }
  for (auto& lane : lanes_) {
    if (lane->thread.joinable()) lane->thread.join();
    lane->client.reset();
  }
}

HttpTransport::Lane& HttpTransport::NextLane() {
  return *lanes_[next_lane_.fetch_add(1, std::memory_order_relaxed) % lanes_.size()];
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
  if (!req.content_type.empty()) sr.headers.push_back({"Content-Type", std::move(req.content_type)});
  sr.dialect = options_.endpoint == ApiEndpoint::kChat             ? client::Dialect::kOpenAiChat
               : options_.endpoint == ApiEndpoint::kTranscriptions ? client::Dialect::kOpenAiTranscription
                                                                   : client::Dialect::kOpenAiCompletions;
  // One JSON answer, checked by EmbeddingsHandler, RerankHandler or WholeAnswerHandler.
  sr.sse = options_.stream && !PrefillOnly(options_.endpoint);
  const client::Dialect dialect = sr.dialect;
  const bool keep_text = req.keep_text;
  Lane& lane = NextLane();
  boost::asio::post(lane.io, [this, &lane, s = std::move(s), sr = std::move(sr), keep_text, dialect]() mutable {
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
    client::StreamHandler* handler = raw->handler.get();
    if (options_.endpoint == ApiEndpoint::kEmbeddings) {
      raw->answer = std::make_unique<client::EmbeddingsHandler>(raw->handler.get(), raw->record.items);
      handler = raw->answer.get();
    } else if (options_.endpoint == ApiEndpoint::kRerank) {
      // bench sends no top_n: every document must come back scored.
      raw->answer = std::make_unique<client::RerankHandler>(raw->handler.get(), raw->record.items, raw->record.items);
      handler = raw->answer.get();
    } else if (!options_.stream) {
      raw->answer = std::make_unique<client::WholeAnswerHandler>(raw->handler.get(), dialect);
      handler = raw->answer.get();
    }
    lane.client->StartStream(std::move(sr), handler);
    lane.connections_opened.store(lane.client->connections_opened(), std::memory_order_relaxed);
    lane.stale_dropped.store(lane.client->stale_connections_dropped(), std::memory_order_relaxed);
  });
}

void HttpTransport::CancelAll() {
  cancelling_.store(true);
  for (auto& lane : lanes_) {
    if (lane->client) lane->client->CancelAll();
  }
}

std::vector<Nanos> HttpTransport::IoThreadCpus() const {
  std::vector<Nanos> out;
  for (const auto& lane : lanes_) {
    clockid_t cid;
    timespec ts{};
    auto& th = const_cast<std::thread&>(lane->thread);
    if (!th.joinable() || pthread_getcpuclockid(th.native_handle(), &cid) != 0 || clock_gettime(cid, &ts) != 0) {
      out.push_back(0);
      continue;
    }
    out.push_back(static_cast<Nanos>(ts.tv_sec) * kNanosPerSecond + ts.tv_nsec);
  }
  return out;
}

Nanos HttpTransport::IoThreadCpu() const {
  Nanos sum = 0;
  for (Nanos n : IoThreadCpus()) sum += n;
  return sum;
}

client::PreconnectResult HttpTransport::Preconnect(std::size_t n) {
  // Each lane opens its share (the requests are dealt round-robin, so the shares match).
  const std::size_t lanes = lanes_.size();
  std::vector<std::promise<client::PreconnectResult>> got(lanes);
  for (std::size_t i = 0; i < lanes; ++i) {
    Lane& lane = *lanes_[i];
    const std::size_t share = n / lanes + (i < n % lanes ? 1 : 0);
    boost::asio::post(lane.io, [&lane, share, p = &got[i]] {
      lane.client->Preconnect(share, [&lane, p](const client::PreconnectResult& r) {
        lane.connections_opened.store(lane.client->connections_opened(), std::memory_order_relaxed);
        p->set_value(r);
      });
    });
  }
  client::PreconnectResult all;
  for (auto& p : got) {
    client::PreconnectResult r = p.get_future().get();  // bounded: every open ends by the connect timeout
    all.requested += r.requested;
    all.opened += r.opened;
    all.failed += r.failed;
    all.elapsed = std::max(all.elapsed, r.elapsed);
    all.connect_times.insert(all.connect_times.end(), r.connect_times.begin(), r.connect_times.end());
    if (all.first_error.empty()) all.first_error = r.first_error;
  }
  return all;
}

client::RxStampStats HttpTransport::TakeRxStampStats() {
  client::RxStampStats all;
  for (auto& lane : lanes_) {
    std::promise<client::RxStampStats> got;
    std::future<client::RxStampStats> result = got.get_future();
    boost::asio::post(lane->io, [&got] { got.set_value(client::TakeThreadRxStampStats()); });
    all.Merge(result.get());  // the io threads run until the transport is destroyed
  }
  return all;
}

std::size_t HttpTransport::ConnectionsOpened() const {
  std::size_t n = 0;
  for (const auto& lane : lanes_) n += lane->connections_opened.load();
  return n;
}

std::size_t HttpTransport::StaleConnectionsDropped() const {
  std::size_t n = 0;
  for (const auto& lane : lanes_) n += lane->stale_dropped.load();
  return n;
}

}  // namespace infereng::bench
