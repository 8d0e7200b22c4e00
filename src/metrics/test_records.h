// Hand-made RequestRecords for metrics tests (times given in milliseconds).
#pragma once

#include <initializer_list>
#include <tuple>

#include "core/clock.h"
#include "metrics/record.h"

namespace infereng::metrics::testdata {

struct C {
  double t_ms;
  int32_t tokens = 1;
  bool reasoning = false;
};

inline RequestRecord Rec(uint64_t id, double sched_ms, double send_ms, std::initializer_list<C> chunks,
                         double end_ms, ErrorClass error = ErrorClass::kNone) {
  RequestRecord r;
  r.id = id;
  r.t_sched = MillisToNanos(sched_ms);
  r.t_send = send_ms < 0 ? -1 : MillisToNanos(send_ms);
  for (const C& c : chunks) r.chunks.push_back(Chunk{MillisToNanos(c.t_ms), c.tokens, c.reasoning});
  r.t_end = end_ms < 0 ? -1 : MillisToNanos(end_ms);
  r.error = error;
  r.http_status = error == ErrorClass::kNone ? 200 : 0;
  r.finish_reason = error == ErrorClass::kNone ? "stop" : "";
  return r;
}

}  // namespace infereng::metrics::testdata
