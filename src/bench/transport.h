// Transport: the seam between the load runner and the wire.
//
// The runner hands a fully prepared request (body bytes, raw-fact record with t_sched
// already set) to Start(); the transport sends it, stamps t_send / t_first_byte / chunks /
// t_end on the steady clock, classifies any failure, and calls `done` exactly once, from
// any thread. The real implementation (http_transport.h) drives the async HTTP client on
// an io_context; tests use in-memory fakes, so scheduling is testable without a socket.
//
// Thread-safety: Start() and CancelAll() may be called from any thread concurrently with
// completions. Start() must not block on the network.
#pragma once

#include <functional>
#include <string>

#include "metrics/record.h"

namespace infereng::bench {

struct PreparedRequest {
  metrics::RequestRecord record;  // id, tenant, t_sched, targets, cold: filled by the runner
  std::string path;               // "/v1/chat/completions" or "/v1/completions"
  std::string body;               // JSON body, ready to send (or content_type's)
  std::string content_type;       // "" = application/json; a transcription's multipart/form-data
  std::string request_id;         // sent as x-request-id ("" = none): joins server-side logs
  bool keep_text = false;         // collect the output text (quality checks)
  int quality_item = -1;          // eval-set item this request carries, -1 none
};

// A finished request: the raw facts, plus the output text when keep_text was asked.
struct Finished {
  metrics::RequestRecord record;
  std::string text;
  int quality_item = -1;
};

using DoneFn = std::function<void(Finished&&)>;

class Transport {
 public:
  virtual ~Transport() = default;
  // Starts one request; `done` is called exactly once when it finishes, fails or is cancelled.
  virtual void Start(PreparedRequest req, DoneFn done) = 0;
  // Cancels everything in flight; each still gets its `done` (error class kCancelled).
  virtual void CancelAll() = 0;
};

}  // namespace infereng::bench
