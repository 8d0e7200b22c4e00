#include "core/status.h"

namespace infereng {

std::string_view Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotFound: return "not found";
    case Code::kFailedPrecondition: return "failed precondition";
    case Code::kOutOfRange: return "out of range";
    case Code::kUnavailable: return "unavailable";
    case Code::kDeadlineExceeded: return "deadline exceeded";
    case Code::kCancelled: return "cancelled";
    case Code::kResourceExhausted: return "resource exhausted";
    case Code::kIoError: return "I/O error";
    case Code::kProtocolError: return "protocol error";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(CodeName(code()));
  s += ": ";
  s += message();
  return s;
}

Status Status::WithContext(std::string_view prefix) const {
  if (ok()) return *this;
  std::string msg(prefix);
  msg += ": ";
  msg += message();
  return Status(code(), std::move(msg));
}

}  // namespace infereng
