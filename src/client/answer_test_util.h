// Test-only: one JSON answer driven through an answer handler (EmbeddingsHandler,
// RerankHandler, WholeAnswerHandler) wrapping a RecordingHandler, as the transport drives
// it: sent at `t.send`, status line at `t.first_byte`, last byte at `t.end` (an HTTP error
// status arrives as the client reports it: kHttp4xx "HTTP 400").
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "client/http_client.h"

namespace infereng::client::testing {

struct AnswerTimes {
  Nanos send = 100, first_byte = 250, end = 400;
};

// `make(inner)` builds the handler under test around the recording handler.
template <typename Make>
metrics::RequestRecord RecordAnswer(Make make, const std::string& body, int status = 200, AnswerTimes t = {},
                                    metrics::RequestRecord rec = {}) {
  bool done = false;
  RecordingHandler inner(&rec, [&done](RecordingHandler&) { done = true; });
  auto h = make(&inner);
  h.OnSend(t.send);
  h.OnFirstByte(t.first_byte, status);
  StreamEnd end;
  end.t_end = t.end;
  end.http_status = status;
  end.body = body;
  if (status >= 400) {
    end.error = metrics::ErrorClass::kHttp4xx;
    end.error_message = "HTTP 400";
  }
  h.OnEnd(end);
  EXPECT_TRUE(done);
  return rec;
}

}  // namespace infereng::client::testing
