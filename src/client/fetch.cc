// Fetch (blocking control-plane request) and EnsureFileDescriptors: see http_client.h.
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <boost/asio/io_context.hpp>

#include "client/http_client.h"

namespace infereng::client {
namespace {

class FetchHandler final : public StreamHandler {
 public:
  void OnSend(Nanos t) override { t_send = t; }
  void OnEnd(const StreamEnd& e) override { end = e; }
  Nanos t_send = -1;
  std::optional<StreamEnd> end;
};

}  // namespace

Result<FetchResponse> Fetch(const ClientOptions& options, std::string_view method, std::string_view path,
                            std::string_view body, Nanos timeout) {
  boost::asio::io_context io;
  ClientOptions opts = options;
  opts.request_timeout = timeout;
  opts.expected_concurrency = 0;
  if (opts.connect_timeout > timeout && timeout > 0) opts.connect_timeout = timeout;
  INFERENG_ASSIGN_OR_RETURN(auto client, HttpClient::Create(io, std::move(opts)));
  FetchHandler handler;
  StreamRequest request;
  request.method = std::string(method);
  request.path = std::string(path);
  request.body = std::string(body);
  request.sse = false;
  client->StartStream(std::move(request), &handler);
  io.run();
  if (!handler.end) return Status::Internal("fetch ended without a result");
  StreamEnd& end = *handler.end;
  const std::string where = std::string(method) + " " + client->url().Target(path);
  using metrics::ErrorClass;
  switch (end.error) {
    case ErrorClass::kNone:
    case ErrorClass::kHttp4xx:
    case ErrorClass::kHttp5xx:
      break;
    case ErrorClass::kConnect:
      return Status::Unavailable(where + ": " + end.error_message);
    case ErrorClass::kTimeout:
      return Status::DeadlineExceeded(where + ": " + end.error_message);
    case ErrorClass::kCancelled:
      return Status::Cancelled(where + ": " + end.error_message);
    case ErrorClass::kIncomplete:
      return Status::IoError(where + ": " + end.error_message);
    default:
      return Status::ProtocolError(where + ": " + end.error_message);
  }
  FetchResponse out;
  out.status = end.http_status;
  out.body = std::move(end.body);
  out.latency = handler.t_send >= 0 ? end.t_end - handler.t_send : 0;
  return out;
}

Status EnsureFileDescriptors(std::size_t sockets) {
  constexpr rlim_t kHeadroom = 128;  // files, the listening socket of serve, logs, ...
  const rlim_t need = static_cast<rlim_t>(sockets) + kHeadroom;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return Status::IoError(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur >= need) return Status::Ok();
  if (lim.rlim_cur == RLIM_INFINITY) return Status::Ok();
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need) {
    return Status::ResourceExhausted(
        std::to_string(sockets) + " concurrent connections need about " + std::to_string(need) +
        " file descriptors, but the hard limit (ulimit -Hn) is " + std::to_string(lim.rlim_max) +
        "; raise it (ulimit -n, LimitNOFILE=) or lower the concurrency");
  }
  lim.rlim_cur = need;
  if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
    return Status::ResourceExhausted(std::string("cannot raise the file-descriptor limit to ") +
                                     std::to_string(need) + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace infereng::client
