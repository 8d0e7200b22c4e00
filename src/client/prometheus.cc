// Prometheus text-format parser and helpers: see prometheus.h.
#include "client/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace infereng::client {
namespace {

constexpr std::size_t kMaxLabels = 256;

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return out;
}

class LineParser {
 public:
  LineParser(std::string_view line, int number) : s_(line), number_(number) {}

  Status Error(const std::string& what) const {
    return Status::InvalidArgument("metrics line " + std::to_string(number_) + ": " + what);
  }
  void SkipSpaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  std::string_view Rest() const { return s_.substr(std::min(pos_, s_.size())); }

  Result<std::string> Name() {
    std::size_t start = pos_;
    if (AtEnd() || !IsNameStart(s_[pos_])) return Error("expected a metric or label name, got \"" + Shown(Rest()) + "\"");
    while (pos_ < s_.size() && IsNameChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  Status Labels(std::vector<Label>& out) {
    ++pos_;  // '{'
    while (true) {
      SkipSpaces();
      if (AtEnd()) return Error("unterminated label set");
      if (s_[pos_] == '}') {
        ++pos_;
        return Status::Ok();
      }
      if (out.size() >= kMaxLabels) return Error("more than " + std::to_string(kMaxLabels) + " labels");
      INFERENG_ASSIGN_OR_RETURN(std::string name, Name());
      SkipSpaces();
      if (AtEnd() || s_[pos_] != '=') return Error("expected '=' after label " + Shown(name));
      ++pos_;
      SkipSpaces();
      if (AtEnd() || s_[pos_] != '"') return Error("expected a quoted value for label " + Shown(name));
      ++pos_;
      std::string value;
      while (true) {
        if (AtEnd()) return Error("unterminated value of label " + Shown(name));
        char c = s_[pos_++];
        if (c == '"') break;
        if (c == '\\') {
          if (AtEnd()) return Error("dangling escape in label " + Shown(name));
          char e = s_[pos_++];
          value.push_back(e == 'n' ? '\n' : e);
        } else {
          value.push_back(c);
        }
      }
      out.push_back(Label{std::move(name), std::move(value)});
      SkipSpaces();
      if (!AtEnd() && s_[pos_] == ',') {
        ++pos_;
      } else if (!AtEnd() && s_[pos_] != '}') {
        return Error("expected ',' or '}' after the value of label " + Shown(out.back().name));
      }
    }
  }

  Result<double> Number() {
    std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ' ' && s_[pos_] != '\t') ++pos_;
    std::string_view tok = s_.substr(start, pos_ - start);
    if (tok == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (tok == "+Inf" || tok == "Inf") return std::numeric_limits<double>::infinity();
    if (tok == "-Inf") return -std::numeric_limits<double>::infinity();
    double v = 0;
    const char* begin = tok.data();
    if (!tok.empty() && tok.front() == '+') ++begin;
    auto [end, ec] = std::from_chars(begin, tok.data() + tok.size(), v);
    if (tok.empty() || ec != std::errc() || end != tok.data() + tok.size()) {
      return Error("expected a number, got \"" + Shown(tok) + "\"");
    }
    return v;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  int number_;
};

MetricType ParseType(std::string_view t) {
  if (t == "counter") return MetricType::kCounter;
  if (t == "gauge") return MetricType::kGauge;
  if (t == "histogram") return MetricType::kHistogram;
  if (t == "summary") return MetricType::kSummary;
  return MetricType::kUntyped;
}

Status ParseComment(std::string_view line, int number, std::map<std::string, MetricFamily, std::less<>>& families) {
  LineParser p(line, number);
  p.pos_ = 1;  // '#'
  p.SkipSpaces();
  std::string_view rest = p.Rest();
  const bool help = rest.starts_with("HELP ") || rest.starts_with("HELP\t");
  const bool type = rest.starts_with("TYPE ") || rest.starts_with("TYPE\t");
  if (!help && !type) return Status::Ok();  // free comment
  p.pos_ += 5;
  p.SkipSpaces();
  INFERENG_ASSIGN_OR_RETURN(std::string name, p.Name());
  p.SkipSpaces();
  MetricFamily& f = families[name];
  f.name = name;
  if (help) {
    f.help = std::string(p.Rest());
  } else {
    f.type = ParseType(p.Rest());
  }
  return Status::Ok();
}

}  // namespace

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter: return "counter";
    case MetricType::kGauge: return "gauge";
    case MetricType::kHistogram: return "histogram";
    case MetricType::kSummary: return "summary";
    case MetricType::kUntyped: break;
  }
  return "untyped";
}

std::optional<std::string_view> Sample::LabelValue(std::string_view label) const {
  for (const Label& l : labels) {
    if (l.name == label) return std::string_view(l.value);
  }
  return std::nullopt;
}

bool Sample::Matches(const std::vector<Label>& match) const {
  for (const Label& m : match) {
    auto v = LabelValue(m.name);
    if (!v || *v != m.value) return false;
  }
  return true;
}

Result<Scrape> ParsePrometheusText(std::string_view text) {
  Scrape scrape;
  int number = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    if (line.front() == '#') {
      INFERENG_RETURN_IF_ERROR(ParseComment(line, number, scrape.families_));
      continue;
    }
    LineParser p(line, number);
    Sample sample;
    INFERENG_ASSIGN_OR_RETURN(sample.name, p.Name());
    p.SkipSpaces();
    if (!p.AtEnd() && line[p.pos_] == '{') INFERENG_RETURN_IF_ERROR(p.Labels(sample.labels));
    p.SkipSpaces();
    if (p.AtEnd()) return p.Error("missing value for " + Shown(sample.name));
    INFERENG_ASSIGN_OR_RETURN(sample.value, p.Number());
    p.SkipSpaces();
    if (!p.AtEnd()) {
      int64_t ts = 0;
      std::string_view tok = p.Rest();
      auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), ts);
      if (ec != std::errc() || end != tok.data() + tok.size()) {
        return p.Error("unexpected text after the value: \"" + Shown(tok) + "\"");
      }
      sample.timestamp_ms = ts;
    }
    scrape.samples_.push_back(std::move(sample));
  }
  return scrape;
}

std::optional<double> Scrape::Value(std::string_view name, const std::vector<Label>& match) const {
  std::optional<double> sum;
  for (const Sample& s : samples_) {
    if (s.name == name && s.Matches(match)) sum = sum.value_or(0) + s.value;
  }
  return sum;
}

std::optional<double> Scrape::FirstValue(const std::vector<std::string_view>& names,
                                         const std::vector<Label>& match) const {
  for (std::string_view n : names) {
    if (auto v = Value(n, match)) return v;
  }
  return std::nullopt;
}

MetricType Scrape::TypeOf(std::string_view sample_name) const {
  if (auto it = families_.find(sample_name); it != families_.end()) return it->second.type;
  for (std::string_view suffix : {"_bucket", "_sum", "_count", "_total", "_created"}) {
    if (sample_name.ends_with(suffix)) {
      auto it = families_.find(sample_name.substr(0, sample_name.size() - suffix.size()));
      if (it != families_.end()) return it->second.type;
    }
  }
  return MetricType::kUntyped;
}

Result<HistogramData> Scrape::Histogram(std::string_view family, const std::vector<Label>& match) const {
  const std::string bucket = std::string(family) + "_bucket";
  const std::string sum = std::string(family) + "_sum";
  const std::string count = std::string(family) + "_count";
  std::map<double, double> by_le;
  HistogramData h;
  bool found = false;
  for (const Sample& s : samples_) {
    if (!s.Matches(match)) continue;
    if (s.name == bucket) {
      auto le = s.LabelValue("le");
      if (!le) return Status::InvalidArgument("histogram " + Shown(family) + ": bucket without an le label");
      double bound = 0;
      std::string le_text(*le);
      if (le_text == "+Inf" || le_text == "Inf") {
        bound = std::numeric_limits<double>::infinity();
      } else {
        char* end = nullptr;
        bound = std::strtod(le_text.c_str(), &end);
        if (end == le_text.c_str() || *end != '\0') {
          return Status::InvalidArgument("histogram " + Shown(family) + ": bad le \"" + Shown(le_text) + "\"");
        }
      }
      by_le[bound] += s.value;
      found = true;
    } else if (s.name == sum) {
      h.sum += s.value;
    } else if (s.name == count) {
      h.count += s.value;
    }
  }
  if (!found) return Status::NotFound("no histogram named " + Shown(family) + " in the scrape");
  h.buckets.assign(by_le.begin(), by_le.end());
  if (h.count == 0 && !h.buckets.empty()) h.count = h.buckets.back().second;
  return h;
}

double HistogramData::Quantile(double q) const {
  if (buckets.empty() || !(q >= 0 && q <= 1)) return std::numeric_limits<double>::quiet_NaN();
  const double total = buckets.back().second;
  if (!(total > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double rank = q * total;
  double lower = 0;
  double below = 0;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    auto [le, cum] = buckets[i];
    if (cum >= rank) {
      if (std::isinf(le)) return i == 0 ? std::numeric_limits<double>::quiet_NaN() : lower;
      if (i == 0 && le <= 0) return le;
      const double in_bucket = cum - below;
      if (in_bucket <= 0) return le;
      return lower + (le - lower) * (rank - below) / in_bucket;
    }
    lower = le;
    below = cum;
  }
  return lower;
}

HistogramData HistogramData::Delta(const HistogramData& after, const HistogramData& before) {
  HistogramData d;
  d.sum = after.sum - before.sum;
  d.count = after.count - before.count;
  for (auto [le, cum] : after.buckets) {
    double prev = 0;
    for (auto [ble, bcum] : before.buckets) {
      if (ble == le) prev = bcum;
    }
    d.buckets.emplace_back(le, cum - prev);
  }
  return d;
}

std::optional<double> CounterDelta(const Scrape& before, const Scrape& after, std::string_view name,
                                   const std::vector<Label>& match) {
  auto b = before.Value(name, match);
  auto a = after.Value(name, match);
  if (!a || !b) return std::nullopt;
  return *a >= *b ? *a - *b : *a;
}

}  // namespace infereng::client
