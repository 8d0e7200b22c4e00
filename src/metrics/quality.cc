#include "metrics/quality.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace infereng::metrics {
namespace {

using nlohmann::json;

std::string Pct(double x) { return fmt::format("{:.1f}%", x * 100); }

std::string PassFailWord(bool pass, bool color) {
  if (!color) return pass ? "PASS" : "FAIL";
  return pass ? "\x1b[32mPASS\x1b[0m" : "\x1b[31mFAIL\x1b[0m";
}

// Length of the UTF-8 sequence starting with byte `c` (1 for a stray continuation byte).
size_t Utf8Len(unsigned char c) {
  if (c >= 0xf0 && c < 0xf8) return 4;
  if (c >= 0xe0) return c < 0xf0 ? 3 : 1;
  if (c >= 0xc0) return 2;
  return 1;
}

template <typename T>
Status Read(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return Status::InvalidArgument(std::string("quality.") + key + ": wrong type");
  }
  return Status::Ok();
}

}  // namespace

ProportionCi WilsonInterval(int64_t successes, int64_t n, double z) {
  if (n <= 0) return {};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(std::clamp<int64_t>(successes, 0, n)) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double centre = (p + z2 / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
  // At p = 0 (or 1) the bound is exactly 0 (or 1); rounding must not put it just outside.
  return {std::max(0.0, successes <= 0 ? 0.0 : centre - half), std::min(1.0, successes >= n ? 1.0 : centre + half)};
}

bool QualityMeetsThreshold(int64_t passed, int64_t checked, double threshold) {
  if (threshold <= 0 || checked <= 0) return true;
  return static_cast<double>(passed) / static_cast<double>(checked) >= threshold;
}

std::string QualityExcerpt(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes) + 3);
  bool space = false;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == ' ') {
      space = !out.empty();
      ++i;
      continue;
    }
    const size_t len = std::min(Utf8Len(c), s.size() - i);
    if (out.size() + (space ? 1 : 0) + len > max_bytes) {
      out += "...";
      return out;
    }
    if (space) out += ' ';
    space = false;
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

std::optional<double> QualityReport::PassRate() const {
  if (checked <= 0) return std::nullopt;
  return static_cast<double>(passed) / static_cast<double>(checked);
}

QualityReport BuildQualityReport(const std::vector<QualityOutcome>& outcomes, const QualityWindow& w,
                                 double pass_threshold) {
  QualityReport q;
  q.pass_threshold = pass_threshold;
  std::vector<const QualityOutcome*> in;
  for (const QualityOutcome& o : outcomes) {
    if (o.t_sched < w.start || (w.end && o.t_sched > *w.end)) continue;
    in.push_back(&o);
  }
  std::stable_sort(in.begin(), in.end(), [](const QualityOutcome* a, const QualityOutcome* b) { return a->t_done < b->t_done; });
  Nanos last = 0;
  for (const QualityOutcome* o : in) {
    ++q.checked;
    q.passed += o->pass ? 1 : 0;
    QualityTally& t = q.by_check[o->check];
    ++t.checked;
    t.passed += o->pass ? 1 : 0;
    last = std::max(last, o->t_done - w.t0);
    if (!o->pass && q.failures.size() < kMaxQualityFailures) {
      q.failures.push_back({.request_id = o->request_id, .item = o->item, .check = o->check,
                            .t_s = NanosToSeconds(o->t_done - w.t0), .prompt = o->prompt,
                            .expected = o->expected, .got = o->got, .why = o->why});
    }
  }
  if (in.empty()) return q;
  double width = w.bucket_s > 0 ? w.bucket_s : 1;
  const double span = NanosToSeconds(last);
  while (span / width >= static_cast<double>(std::max<size_t>(w.max_buckets, 1))) width *= 2;
  const auto n = static_cast<size_t>(span / width) + 1;
  q.timeseries.resize(n);
  for (size_t i = 0; i < n; ++i) q.timeseries[i] = {.start_s = static_cast<double>(i) * width, .width_s = width};
  for (const QualityOutcome* o : in) {
    const double t = std::max(0.0, NanosToSeconds(o->t_done - w.t0));
    QualityBucket& b = q.timeseries[std::min(n - 1, static_cast<size_t>(t / width))];
    ++b.checked;
    b.passed += o->pass ? 1 : 0;
  }
  // Leading buckets before the first check carry nothing: drop them.
  size_t first = 0;
  while (first < q.timeseries.size() && q.timeseries[first].checked == 0) ++first;
  q.timeseries.erase(q.timeseries.begin(), q.timeseries.begin() + static_cast<std::ptrdiff_t>(first));
  return q;
}

json QualityReportToJson(const QualityReport& q) {
  const ProportionCi ci = q.Interval();
  const std::optional<double> rate = q.PassRate();
  json by = json::object();
  for (const auto& [kind, t] : q.by_check) {
    by[kind] = {{"checked", t.checked},
                {"passed", t.passed},
                {"pass_rate", t.checked > 0 ? json(static_cast<double>(t.passed) / static_cast<double>(t.checked)) : json(nullptr)}};
  }
  json ts = json::array();
  for (const QualityBucket& b : q.timeseries) {
    ts.push_back({{"start_s", b.start_s}, {"width_s", b.width_s}, {"checked", b.checked}, {"passed", b.passed}});
  }
  json fails = json::array();
  for (const QualityFailure& f : q.failures) {
    fails.push_back({{"request_id", f.request_id}, {"item", f.item}, {"check", f.check}, {"t_s", f.t_s},
                     {"prompt", f.prompt}, {"expected", f.expected}, {"got", f.got}, {"why", f.why}});
  }
  return {{"checked", q.checked},
          {"passed", q.passed},
          {"pass_rate", rate ? json(*rate) : json(nullptr)},
          {"ci_low", rate ? json(ci.low) : json(nullptr)},
          {"ci_high", rate ? json(ci.high) : json(nullptr)},
          {"confidence", 0.95},
          {"interval", "wilson"},
          {"pass_threshold", q.pass_threshold},
          {"pass", q.Pass()},
          {"by_check", std::move(by)},
          {"timeseries", std::move(ts)},
          {"failures", std::move(fails)},
          {"failures_shown", q.failures.size()}};
}

Result<QualityReport> QualityReportFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("quality: expected an object");
  QualityReport q;
  INFERENG_RETURN_IF_ERROR(Read(j, "checked", &q.checked));
  INFERENG_RETURN_IF_ERROR(Read(j, "passed", &q.passed));
  INFERENG_RETURN_IF_ERROR(Read(j, "pass_threshold", &q.pass_threshold));
  if (auto by = j.find("by_check"); by != j.end() && by->is_object()) {
    for (auto it = by->begin(); it != by->end(); ++it) {
      QualityTally t;
      INFERENG_RETURN_IF_ERROR(Read(it.value(), "checked", &t.checked));
      INFERENG_RETURN_IF_ERROR(Read(it.value(), "passed", &t.passed));
      q.by_check[it.key()] = t;
    }
  }
  if (auto ts = j.find("timeseries"); ts != j.end() && ts->is_array()) {
    for (const json& b : *ts) {
      if (!b.is_object()) return Status::InvalidArgument("quality.timeseries: expected objects");
      QualityBucket qb;
      INFERENG_RETURN_IF_ERROR(Read(b, "start_s", &qb.start_s));
      INFERENG_RETURN_IF_ERROR(Read(b, "width_s", &qb.width_s));
      INFERENG_RETURN_IF_ERROR(Read(b, "checked", &qb.checked));
      INFERENG_RETURN_IF_ERROR(Read(b, "passed", &qb.passed));
      q.timeseries.push_back(qb);
    }
  }
  if (auto fs = j.find("failures"); fs != j.end() && fs->is_array()) {
    for (const json& f : *fs) {
      if (!f.is_object()) return Status::InvalidArgument("quality.failures: expected objects");
      QualityFailure qf;
      INFERENG_RETURN_IF_ERROR(Read(f, "request_id", &qf.request_id));
      INFERENG_RETURN_IF_ERROR(Read(f, "item", &qf.item));
      INFERENG_RETURN_IF_ERROR(Read(f, "check", &qf.check));
      INFERENG_RETURN_IF_ERROR(Read(f, "t_s", &qf.t_s));
      INFERENG_RETURN_IF_ERROR(Read(f, "prompt", &qf.prompt));
      INFERENG_RETURN_IF_ERROR(Read(f, "expected", &qf.expected));
      INFERENG_RETURN_IF_ERROR(Read(f, "got", &qf.got));
      INFERENG_RETURN_IF_ERROR(Read(f, "why", &qf.why));
      q.failures.push_back(std::move(qf));
    }
  }
  return q;
}

std::string FormatQualityLines(const QualityReport& q, size_t max_failures, bool color) {
  std::string out;
  const std::optional<double> rate = q.PassRate();
  const std::string floor = q.pass_threshold > 0 ? "threshold " + Pct(q.pass_threshold) : "no threshold";
  if (!rate) {
    out += fmt::format("quality: nothing checked in the window ({})\n", floor);
    return out;
  }
  const ProportionCi ci = q.Interval();
  out += fmt::format("quality: {} of {} passed ({}, 95% CI [{}, {}]), {}{}\n", q.passed, q.checked, Pct(*rate),
                     Pct(ci.low), Pct(ci.high), floor,
                     q.pass_threshold > 0 ? " " + PassFailWord(q.Pass(), color) : std::string());
  if (q.by_check.size() > 1) {
    std::string by;
    for (const auto& [kind, t] : q.by_check) {
      by += fmt::format("{}{} {}/{}", by.empty() ? "" : ", ", kind, t.passed, t.checked);
    }
    out += "  by check: " + by + "\n";
  }
  const size_t shown = std::min(max_failures, q.failures.size());
  for (size_t i = 0; i < shown; ++i) {
    const QualityFailure& f = q.failures[i];
    out += fmt::format("  failed item {} ({}): {}\n    expected {}; got \"{}\"\n", f.item, f.check,
                       QualityExcerpt(f.prompt, 80), QualityExcerpt(f.expected, 60), QualityExcerpt(f.got, 80));
  }
  const int64_t failed = q.checked - q.passed;
  if (failed > static_cast<int64_t>(shown) && shown > 0) {
    out += fmt::format("  ... {} more failing case(s) (summary.json quality.failures keeps the first {}; the report shows them)\n",
                       failed - static_cast<int64_t>(shown), kMaxQualityFailures);
  }
  return out;
}

std::string QualityFailureReason(const QualityReport& q) {
  if (q.Pass()) return "";
  const ProportionCi ci = q.Interval();
  return fmt::format("quality pass rate {} ({} of {}, 95% CI [{}, {}]) is below the threshold {}",
                     Pct(q.PassRate().value_or(0)), q.passed, q.checked, Pct(ci.low), Pct(ci.high),
                     Pct(q.pass_threshold));
}

}  // namespace infereng::metrics
