// Status and Result<T>: the one error mechanism of infereng.
//
// Library code never exits or prints: it returns a Status (or a Result<T>, which holds
// either a value or a non-ok Status). Only the CLI's main maps errors to exit codes
// (see cli/exit_codes.h). The ok case is cheap: no allocation.
//
// Messages name what was wrong and where ("examples/chat.yaml:12: slo.ttft_ms.p99: ...").
// They must never contain secrets (API keys): callers pass redacted text.
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace infereng {

class [[nodiscard]] Status {
 public:
  // A small closed set of codes. Keep in sync with CodeName() and cli::ExitCodeFor().
  enum class Code {
    kOk = 0,
    kInvalidArgument,     // bad input: flags, files, request bodies (exit 2)
    kNotFound,            // unknown name, missing file (exit 2)
    kFailedPrecondition,  // valid input, but the state forbids it (exit 2)
    kOutOfRange,          // value outside the allowed range (exit 2)
    kUnavailable,         // target unreachable, connection refused (exit 3)
    kDeadlineExceeded,    // timed out (exit 3)
    kCancelled,           // interrupted by the user or a peer (exit 3)
    kResourceExhausted,   // queue full, fd limit, memory cap (exit 3)
    kIoError,             // file system or socket error (exit 3)
    kProtocolError,       // peer spoke something we cannot parse (exit 3)
    kInternal,            // a bug in infereng (exit 3)
  };

  Status() = default;  // ok

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status FailedPrecondition(std::string msg) { return Status(Code::kFailedPrecondition, std::move(msg)); }
  static Status OutOfRange(std::string msg) { return Status(Code::kOutOfRange, std::move(msg)); }
  static Status Unavailable(std::string msg) { return Status(Code::kUnavailable, std::move(msg)); }
  static Status DeadlineExceeded(std::string msg) { return Status(Code::kDeadlineExceeded, std::move(msg)); }
  static Status Cancelled(std::string msg) { return Status(Code::kCancelled, std::move(msg)); }
  static Status ResourceExhausted(std::string msg) { return Status(Code::kResourceExhausted, std::move(msg)); }
  static Status IoError(std::string msg) { return Status(Code::kIoError, std::move(msg)); }
  static Status ProtocolError(std::string msg) { return Status(Code::kProtocolError, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }

  bool ok() const { return state_ == nullptr; }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  const std::string& message() const {
    static const std::string kEmpty;
    return state_ ? state_->message : kEmpty;
  }

  // "invalid argument: <message>"
  std::string ToString() const;
  static std::string_view CodeName(Code code);

  // Returns a copy whose message is "<prefix>: <message>" (same code). Ok stays ok.
  Status WithContext(std::string_view prefix) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct State {
    Code code;
    std::string message;
  };
  Status(Code code, std::string msg) : state_(std::make_shared<const State>(State{code, std::move(msg)})) {}

  std::shared_ptr<const State> state_;  // null when ok
};

// Either a T or a non-ok Status. GCC 12 has no std::expected in C++20, hence this.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result constructed from an ok Status");
    if (std::get<Status>(v_).ok()) v_ = Status::Internal("Result constructed from an ok Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace infereng

// Propagates a non-ok Status from an expression returning Status.
#define INFERENG_RETURN_IF_ERROR(expr)                      \
  do {                                                      \
    ::infereng::Status _infereng_st = (expr);               \
    if (!_infereng_st.ok()) return _infereng_st;            \
  } while (0)

#define INFERENG_CONCAT_INNER(a, b) a##b
#define INFERENG_CONCAT(a, b) INFERENG_CONCAT_INNER(a, b)

// Declares `lhs` from a Result<T> expression, or returns its Status.
//   INFERENG_ASSIGN_OR_RETURN(auto card, LoadCard(path));
#define INFERENG_ASSIGN_OR_RETURN(lhs, expr)                                       \
  auto INFERENG_CONCAT(_infereng_r_, __LINE__) = (expr);                           \
  if (!INFERENG_CONCAT(_infereng_r_, __LINE__).ok())                               \
    return INFERENG_CONCAT(_infereng_r_, __LINE__).status();                       \
  lhs = std::move(INFERENG_CONCAT(_infereng_r_, __LINE__)).value()
