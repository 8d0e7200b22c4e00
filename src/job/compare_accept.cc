// Parsing of acceptance expressions (grammar in compare_accept.h).
#include "job/compare_accept.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace infereng::job {
namespace {

constexpr std::array<const char*, 6> kLatencyMetrics = {"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "ttft_incl_queue_ms",
                                                        "e2e_incl_queue_ms"};
constexpr std::array<const char*, 5> kScalarMetrics = {"output_tokens_per_s", "requests_per_s", "goodput_rps",
                                                       "error_rate", "quality_pass_rate"};
constexpr std::array<const char*, 5> kStats = {"p50", "p90", "p95", "p99", "mean"};

template <std::size_t N>
bool In(const std::array<const char*, N>& set, std::string_view s) {
  for (const char* x : set) {
    if (s == x) return true;
  }
  return false;
}

bool IsProportion(std::string_view m) { return m == "error_rate" || m == "quality_pass_rate"; }

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Result<AcceptExpr> Parse() {
    AcceptExpr e;
    e.text = s_;
    Skip();
    const std::size_t name_at = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    const std::string metric = s_.substr(name_at, i_ - name_at);
    if (metric.empty()) return Error(name_at, "expected a metric name (e.g. ttft_ms.p99, goodput_rps)");
    const bool latency = In(kLatencyMetrics, metric);
    if (!latency && !In(kScalarMetrics, metric)) {
      return Error(name_at, fmt::format("unknown metric '{}' (latencies: ttft_ms, itl_ms, tpot_ms, e2e_ms, "
                                        "ttft_incl_queue_ms, e2e_incl_queue_ms with .p50/.p90/.p95/.p99/.mean; rates: "
                                        "output_tokens_per_s, requests_per_s, goodput_rps, error_rate, quality_pass_rate)",
                                        metric));
    }
    e.metric = metric;
    if (i_ < s_.size() && s_[i_] == '.') {
      const std::size_t stat_at = ++i_;
      while (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_]))) ++i_;
      const std::string stat = s_.substr(stat_at, i_ - stat_at);
      if (!latency) return Error(stat_at, fmt::format("'{}' is a single figure: it takes no .{}", metric, stat));
      if (!In(kStats, stat)) return Error(stat_at, fmt::format("unknown statistic '{}' (p50, p90, p95, p99 or mean)", stat));
      e.metric += "." + stat;
    } else if (latency) {
      return Error(i_, fmt::format("'{}' needs a statistic: {}.p99, .p50, .p90, .p95 or .mean", metric, metric));
    }
    Skip();
    const std::size_t op_at = i_;
    if (Take("<=")) e.op = AcceptExpr::Op::kLe;
    else if (Take(">=")) e.op = AcceptExpr::Op::kGe;
    else if (Take("<")) e.op = AcceptExpr::Op::kLt;
    else if (Take(">")) e.op = AcceptExpr::Op::kGt;
    else return Error(op_at, "expected <=, <, >= or >");
    Skip();
    const std::size_t num_at = i_;
    double sign = 1;
    if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) {
      sign = s_[i_] == '-' ? -1 : 1;
      ++i_;
    }
    const char* begin = s_.data() + i_;
    double v = 0;
    if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) return Error(i_, "expected a number (one sign at most)");
    auto [ptr, ec] = std::from_chars(begin, s_.data() + s_.size(), v);
    if (ec != std::errc() || !std::isfinite(v)) return Error(num_at, "expected a number (e.g. -10%, +20ms, 0)");
    i_ += static_cast<std::size_t>(ptr - begin);
    v *= sign;
    const std::size_t unit_at = i_;
    while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    const std::string unit = s_.substr(unit_at, i_ - unit_at);
    if (unit == "%") {
      e.relative = true;
      v /= 100;
    } else if (unit == "ms" || unit == "s") {
      if (!latency) return Error(unit_at, fmt::format("'{}' is not a latency: use %, or its own unit", metric));
      if (unit == "s") v *= 1000;
    } else if (unit == "pp") {
      if (!IsProportion(metric)) return Error(unit_at, "pp (percentage points) is for error_rate and quality_pass_rate");
      v /= 100;
    } else if (!unit.empty()) {
      return Error(unit_at, fmt::format("unknown unit '{}' (%, ms, s, pp, or none)", unit));
    }
    e.value = v;
    Skip();
    if (i_ != s_.size()) return Error(i_, "unexpected text after the value");
    return e;
  }

 private:
  void Skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Take(std::string_view t) {
    if (s_.compare(i_, t.size(), t) != 0) return false;
    i_ += t.size();
    return true;
  }
  Status Error(std::size_t at, const std::string& what) const {
    return Status::InvalidArgument(fmt::format("--accept '{}': column {}: {}", s_, at + 1, what));
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

}  // namespace

Result<AcceptExpr> ParseAcceptExpr(const std::string& text) { return Parser(text).Parse(); }

Result<std::vector<AcceptExpr>> ParseAcceptExprs(const std::vector<std::string>& texts) {
  std::vector<AcceptExpr> out;
  for (const std::string& t : texts) {
    INFERENG_ASSIGN_OR_RETURN(AcceptExpr e, ParseAcceptExpr(t));
    out.push_back(std::move(e));
  }
  return out;
}

bool Holds(AcceptExpr::Op op, double x, double value) {
  switch (op) {
    case AcceptExpr::Op::kLe: return x <= value;
    case AcceptExpr::Op::kLt: return x < value;
    case AcceptExpr::Op::kGe: return x >= value;
    case AcceptExpr::Op::kGt: return x > value;
  }
  return false;
}

const char* OpText(AcceptExpr::Op op) {
  switch (op) {
    case AcceptExpr::Op::kLe: return "<=";
    case AcceptExpr::Op::kLt: return "<";
    case AcceptExpr::Op::kGe: return ">=";
    case AcceptExpr::Op::kGt: return ">";
  }
  return "?";
}

}  // namespace infereng::job
