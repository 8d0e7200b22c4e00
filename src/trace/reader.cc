// One streaming reader for CSV and JSONL traces; the format decides the column names.
#include "trace/reader.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "trace/datetime.h"

namespace infereng::trace {
namespace {

constexpr std::size_t kMaxLineBytes = 4 << 20;  // a Mooncake line with ~8k hash ids is ~60KB

// Splits one CSV line (RFC 4180 quoting, no embedded newlines) into `cells`.
bool SplitCsv(const std::string& line, std::vector<std::string>* cells) {
  cells->clear();
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty()) {
      quoted = true;
    } else if (c == ',') {
      cells->push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  cells->push_back(std::move(cur));
  return !quoted;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

int IndexOf(const std::vector<std::string>& names, const std::string& want) {
  if (want.empty()) return -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == want) return static_cast<int>(i);
  }
  return -1;
}

std::optional<double> ParseNumber(const std::string& text) {
  double v = 0;
  const std::string t = Trim(text);
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size() || t.empty() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string Quote(const std::string& s) {
  return "\"" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "\"";
}

}  // namespace

Result<std::unique_ptr<TraceReader>> TraceReader::Open(const std::string& path, const ReaderOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Status::NotFound(path + ": no such file");
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->path_ = path;
  r->in_ = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*r->in_) return Status::NotFound(path + ": cannot open");
  INFERENG_RETURN_IF_ERROR(r->Init(options));
  return r;
}

std::string TraceReader::Where() const { return path_ + ":" + std::to_string(line_) + ": "; }

bool TraceReader::ReadLine(std::string* line) {
  while (std::getline(*in_, *line)) {
    ++line_;
    if (!line->empty() && line->back() == '\r') line->pop_back();
    if (line->find_first_not_of(" \t") != std::string::npos) return true;
  }
  return false;
}

Status TraceReader::Init(const ReaderOptions& options) {
  std::string first;
  if (!ReadLine(&first)) return Status::InvalidArgument(path_ + ": empty trace");
  if (first.size() > kMaxLineBytes) return Status::InvalidArgument(Where() + "line longer than 4MiB");
  const std::optional<Preset> preset = PresetFor(options.format);
  jsonl_ = preset ? preset->jsonl
                  : options.format == Format::kJsonl ||
                        (options.format == Format::kAuto && Trim(first).starts_with("{"));
  if (jsonl_) {
    pending_ = first;
    has_pending_ = true;
    return ResolveJsonKeys(first, options);
  }
  return ResolveCsvHeader(first, options);
}

namespace {

// The preset's names (or auto-detected ones) under the user's --columns.
ColumnMap Resolve(Format* format, bool jsonl, const std::vector<std::string>& names, const ReaderOptions& options,
                  TimeUnit* unit) {
  if (*format == Format::kAuto) *format = DetectFormat(jsonl, names);
  ColumnMap map = options.columns;
  *unit = options.time_unit;
  if (const std::optional<Preset> p = PresetFor(*format)) {
    auto fill = [](std::string& dst, const std::string& src) {
      if (dst.empty()) dst = src;
    };
    fill(map.time, p->columns.time);
    fill(map.input, p->columns.input);
    fill(map.output, p->columns.output);
    fill(map.tenant, p->columns.tenant);
    fill(map.session, p->columns.session);
    fill(map.hashes, p->columns.hashes);
    fill(map.category, p->columns.category);
    fill(map.items, p->columns.items);
    if (*unit == TimeUnit::kAuto && options.columns.time.empty()) *unit = p->unit;
  }
  AutoDetectColumns(names, &map);
  return map;
}

Status Require(const std::string& where, const std::string& field, const std::string& column,
               const std::vector<std::string>& names, bool given) {
  if (!column.empty() && IndexOf(names, column) >= 0) return Status::Ok();
  std::string have;
  for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
  if (!column.empty() && given) {
    return Status::InvalidArgument(where + "no column \"" + column + "\" for " + field + " (columns: " + have + ")");
  }
  if (!column.empty()) {
    return Status::InvalidArgument(where + "expected column \"" + column + "\" for " + field + " (columns: " + have +
                                   "); pass --format or --columns " + field + "=NAME");
  }
  return Status::InvalidArgument(where + "no " + field + " column (looked for " + CandidateNames(field) +
                                 "; columns: " + have + "); name it with --columns " + field + "=NAME");
}

}  // namespace

Status TraceReader::ResolveCsvHeader(const std::string& header, const ReaderOptions& options) {
  if (!SplitCsv(header, &header_)) return Status::InvalidArgument(Where() + "unterminated quote in the header");
  for (auto& h : header_) h = Trim(h);
  format_ = options.format;
  columns_ = Resolve(&format_, false, header_, options, &unit_);
  const std::string where = Where();
  INFERENG_RETURN_IF_ERROR(Require(where, "time", columns_.time, header_, !options.columns.time.empty()));
  INFERENG_RETURN_IF_ERROR(Require(where, "input", columns_.input, header_, !options.columns.input.empty()));
  INFERENG_RETURN_IF_ERROR(Require(where, "output", columns_.output, header_, !options.columns.output.empty()));
  for (auto [col, idx, given] : {std::tuple{&columns_.tenant, &col_tenant_, &options.columns.tenant},
                                 std::tuple{&columns_.session, &col_session_, &options.columns.session},
                                 std::tuple{&columns_.hashes, &col_hashes_, &options.columns.hashes},
                                 std::tuple{&columns_.category, &col_category_, &options.columns.category},
                                 std::tuple{&columns_.items, &col_items_, &options.columns.items}}) {
    *idx = IndexOf(header_, *col);
    if (*idx < 0 && !given->empty()) return Require(where, "optional", *col, header_, true);
    if (*idx < 0) col->clear();
  }
  col_time_ = IndexOf(header_, columns_.time);
  col_input_ = IndexOf(header_, columns_.input);
  col_output_ = IndexOf(header_, columns_.output);
  fields_ = header_.size();
  return Status::Ok();
}

Status TraceReader::ResolveJsonKeys(const std::string& first_line, const ReaderOptions& options) {
  auto j = nlohmann::json::parse(first_line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(Where() + "expected a JSON object");
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  format_ = options.format;
  columns_ = Resolve(&format_, true, keys, options, &unit_);
  const std::string where = Where();
  INFERENG_RETURN_IF_ERROR(Require(where, "time", columns_.time, keys, !options.columns.time.empty()));
  INFERENG_RETURN_IF_ERROR(Require(where, "input", columns_.input, keys, !options.columns.input.empty()));
  INFERENG_RETURN_IF_ERROR(Require(where, "output", columns_.output, keys, !options.columns.output.empty()));
  return Status::Ok();
}

Status TraceReader::SetTime(const std::string& column, double number, const std::string* text, TraceRecord* out) {
  const std::string where = Where() + "column \"" + column + "\": ";
  if (unit_ == TimeUnit::kAuto) {
    const bool ms = column.ends_with("_ms") || column.ends_with("Ms");
    unit_ = text != nullptr && !ParseNumber(*text) ? TimeUnit::kDatetime
            : ms                                   ? TimeUnit::kMillis
                                                   : TimeUnit::kSeconds;
  }
  double t = 0;
  if (unit_ == TimeUnit::kDatetime) {
    if (text == nullptr) return Status::InvalidArgument(where + "expected a date-time string like \"2023-11-16 18:15:46.68\"");
    auto dt = ParseDateTime(Trim(*text));
    if (!dt) {
      return Status::InvalidArgument(where + "expected a date-time like \"2023-11-16 18:15:46.68\", got " + Quote(*text));
    }
    t = *dt;
  } else {
    if (text != nullptr) {
      auto n = ParseNumber(*text);
      if (!n) return Status::InvalidArgument(where + "expected a number (" + std::string(TimeUnitName(unit_)) + "), got " + Quote(*text));
      number = *n;
    }
    t = unit_ == TimeUnit::kMillis ? number / 1e3 : unit_ == TimeUnit::kMicros ? number / 1e6 : number;
  }
  if (t < last_t_) {
    return Status::InvalidArgument(where + "time goes backwards (" + std::to_string(t - last_t_) +
                                   " s after the previous line); sort the trace by time");
  }
  last_t_ = t;
  out->t_s = t;
  return Status::Ok();
}

namespace {

// A whole number in [lo, hi] from a cell; the error names the column and says what it expected.
Result<int64_t> WholeNumber(const std::string& where, const std::string& column, std::optional<double> v,
                            const std::string& shown, double lo, double hi, const char* expected) {
  if (!v || *v < lo || *v > hi || std::floor(*v) != *v) {
    return Status::InvalidArgument(where + "column \"" + column + "\": expected " + expected + ", got " + shown);
  }
  return static_cast<int64_t>(*v);
}

Result<int64_t> Tokens(const std::string& where, const std::string& column, std::optional<double> v,
                       const std::string& shown) {
  return WholeNumber(where, column, v, shown, 0, 1e9, "a whole number of tokens >= 0");
}

// An items (batch size) cell.
Result<int64_t> Items(const std::string& where, const std::string& column, std::optional<double> v,
                      const std::string& shown) {
  return WholeNumber(where, column, v, shown, 1, 1e6, "a whole number of inputs in [1, 1000000]");
}

}  // namespace

Status TraceReader::ParseCsv(const std::string& line, TraceRecord* out) {
  if (!SplitCsv(line, &cells_)) return Status::InvalidArgument(Where() + "unterminated quote");
  if (cells_.size() != fields_) {
    return Status::InvalidArgument(Where() + "expected " + std::to_string(fields_) + " fields as in the header, got " +
                                   std::to_string(cells_.size()));
  }
  INFERENG_RETURN_IF_ERROR(SetTime(columns_.time, 0, &cells_[static_cast<std::size_t>(col_time_)], out));
  const std::string& in = cells_[static_cast<std::size_t>(col_input_)];
  const std::string& outc = cells_[static_cast<std::size_t>(col_output_)];
  INFERENG_ASSIGN_OR_RETURN(out->input_tokens, Tokens(Where(), columns_.input, ParseNumber(in), Quote(in)));
  INFERENG_ASSIGN_OR_RETURN(out->output_tokens, Tokens(Where(), columns_.output, ParseNumber(outc), Quote(outc)));
  auto cell = [&](int idx) { return idx < 0 ? std::string() : Trim(cells_[static_cast<std::size_t>(idx)]); };
  out->tenant = cell(col_tenant_);
  out->session = cell(col_session_);
  out->category = cell(col_category_);
  out->items = 0;
  if (const std::string c = cell(col_items_); !c.empty()) {  // an empty cell: not given
    INFERENG_ASSIGN_OR_RETURN(out->items, Items(Where(), columns_.items, ParseNumber(c), Quote(c)));
  }
  out->hash_ids.clear();
  if (col_hashes_ >= 0) {
    // A CSV cell of hashes: ids separated by spaces, ';' or '|' (optionally in [ ]).
    std::string s = cell(col_hashes_);
    for (char& c : s) {
      if (c == '[' || c == ']' || c == ';' || c == '|' || c == ',') c = ' ';
    }
    std::size_t p = 0;
    while ((p = s.find_first_not_of(' ', p)) != std::string::npos) {
      const std::size_t e = std::min(s.find(' ', p), s.size());
      uint64_t v = 0;
      auto [ptr, ec] = std::from_chars(s.data() + p, s.data() + e, v);
      if (ec != std::errc() || ptr != s.data() + e) {
        return Status::InvalidArgument(Where() + "column \"" + columns_.hashes + "\": expected integer block hashes, got " +
                                       Quote(s.substr(p, e - p)));
      }
      out->hash_ids.push_back(v);
      p = e;
    }
  }
  return Status::Ok();
}

Status TraceReader::ParseJson(const std::string& line, TraceRecord* out) {
  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(Where() + "expected a JSON object");
  auto field = [&](const std::string& key) -> const nlohmann::json* {
    if (key.empty()) return nullptr;
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  };
  const nlohmann::json* t = field(columns_.time);
  if (t == nullptr) return Status::InvalidArgument(Where() + "missing \"" + columns_.time + "\"");
  if (t->is_string()) {
    const std::string s = t->get<std::string>();
    INFERENG_RETURN_IF_ERROR(SetTime(columns_.time, 0, &s, out));
  } else if (t->is_number()) {
    INFERENG_RETURN_IF_ERROR(SetTime(columns_.time, t->get<double>(), nullptr, out));
  } else {
    return Status::InvalidArgument(Where() + "column \"" + columns_.time + "\": expected a number or a date-time, got " +
                                   t->dump());
  }
  auto tokens = [&](const std::string& key, int64_t* dst) -> Status {
    const nlohmann::json* v = field(key);
    if (v == nullptr) return Status::InvalidArgument(Where() + "missing \"" + key + "\"");
    std::optional<double> n;
    if (v->is_number()) n = v->get<double>();
    INFERENG_ASSIGN_OR_RETURN(*dst, Tokens(Where(), key, n, v->dump()));
    return Status::Ok();
  };
  INFERENG_RETURN_IF_ERROR(tokens(columns_.input, &out->input_tokens));
  INFERENG_RETURN_IF_ERROR(tokens(columns_.output, &out->output_tokens));
  auto text = [&](const std::string& key) -> std::string {
    const nlohmann::json* v = field(key);
    if (v == nullptr) return "";
    return v->is_string() ? v->get<std::string>() : v->dump();
  };
  out->tenant = text(columns_.tenant);
  out->session = text(columns_.session);
  out->category = text(columns_.category);
  out->items = 0;
  if (const nlohmann::json* v = field(columns_.items)) {
    std::optional<double> n;
    if (v->is_number()) n = v->get<double>();
    INFERENG_ASSIGN_OR_RETURN(out->items, Items(Where(), columns_.items, n, v->dump()));
  }
  out->hash_ids.clear();
  if (const nlohmann::json* h = field(columns_.hashes)) {
    if (!h->is_array()) return Status::InvalidArgument(Where() + "\"" + columns_.hashes + "\": expected an array of integers");
    out->hash_ids.reserve(h->size());
    for (const auto& v : *h) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        return Status::InvalidArgument(Where() + "\"" + columns_.hashes + "\": expected non-negative integers, got " +
                                       v.dump());
      }
      out->hash_ids.push_back(v.get<uint64_t>());
    }
  }
  return Status::Ok();
}

Result<bool> TraceReader::Next(TraceRecord* out) {
  std::string line;
  if (has_pending_) {
    line = std::move(pending_);
    has_pending_ = false;
  } else if (!ReadLine(&line)) {
    if (in_->bad()) return Status::IoError(path_ + ": read error");
    return false;
  }
  if (line.size() > kMaxLineBytes) return Status::InvalidArgument(Where() + "line longer than 4MiB");
  out->line = line_;
  INFERENG_RETURN_IF_ERROR(jsonl_ ? ParseJson(line, out) : ParseCsv(line, out));
  return true;
}

}  // namespace infereng::trace
