// The traffic section: class, arrival process, concurrency, length distributions and
// shared prefixes. Ranges are checked in card_validate.cc; this file checks shapes.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "card/card_sections.h"
#include "card/limits.h"

namespace infereng::card {
namespace {

constexpr std::size_t kMaxEmpiricalSamples = 10'000'000;
constexpr std::uintmax_t kMaxEmpiricalBytes = 512ull << 20;

Status ParseArrival(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                    ArrivalSpec* a) {
  if (node.IsScalar()) {  // shorthand: `arrival: 20rps` is poisson at 20 req/s
    a->kind = ArrivalSpec::Kind::kPoisson;
    INFERENG_ASSIGN_OR_RETURN(a->rate_rps, r.Rate(node, path));
    return Status::Ok();
  }
  bool has_cv = false, has_on = false, has_period = false, has_file = false, has_rate = false, has_sessions = false;
  const FieldReader::Entry entries[] = {
      {"process", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(std::string s, r.String(n, p));
         using K = ArrivalSpec::Kind;
         static const std::pair<std::string_view, K> kKinds[] = {
             {"constant", K::kConstant}, {"poisson", K::kPoisson}, {"gamma", K::kGamma},
             {"on_off", K::kOnOff},      {"diurnal", K::kDiurnal}, {"trace", K::kTrace}};
         for (const auto& [name, kind] : kKinds) {
           if (s == name) {
             a->kind = kind;
             return Status::Ok();
           }
         }
         return r.Error(n, p, "one of constant, poisson, gamma, on_off, diurnal, trace");
       }},
      {"rate", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_rate = true;
         INFERENG_ASSIGN_OR_RETURN(a->rate_rps, r.Rate(n, p));
         return Status::Ok();
       }},
      {"cv", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_cv = true;
         INFERENG_ASSIGN_OR_RETURN(a->cv, r.Number(n, p));
         return Status::Ok();
       }},
      {"on", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_on = true;
         INFERENG_ASSIGN_OR_RETURN(a->on_s, r.Seconds(n, p));
         return Status::Ok();
       }},
      {"off", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_on = true;
         INFERENG_ASSIGN_OR_RETURN(a->off_s, r.Seconds(n, p));
         return Status::Ok();
       }},
      {"period", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_period = true;
         INFERENG_ASSIGN_OR_RETURN(a->period_s, r.Seconds(n, p));
         return Status::Ok();
       }},
      {"peak_to_trough", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_period = true;
         INFERENG_ASSIGN_OR_RETURN(a->peak_to_trough, r.Number(n, p));
         return Status::Ok();
       }},
      {"file", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_file = true;
         INFERENG_ASSIGN_OR_RETURN(std::string f, r.String(n, p));
         a->trace_file = ResolvePath(base_dir, f);
         return Status::Ok();
       }},
      {"speed", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(a->trace_speed, r.Number(n, p));
         return Status::Ok();
       }},
      {"sessions", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_sessions = true;
         INFERENG_ASSIGN_OR_RETURN(a->trace_sessions, r.String(n, p));
         if (a->trace_sessions == "sessions" || a->trace_sessions == "tasks") return Status::Ok();
         return r.Fail(n, p, "sessions or tasks (the trace's session ids replayed as sessions or agent tasks)");
       }},
      {"parallel_window", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_sessions = true;
         INFERENG_ASSIGN_OR_RETURN(a->trace_parallel_window_s, r.Seconds(n, p));
         return Status::Ok();
       }},
      {"format", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(a->trace_format, r.String(n, p));
         for (const char* f : {"auto", "azure", "mooncake", "burstgpt", "csv", "jsonl"}) {
           if (a->trace_format == f) return Status::Ok();
         }
         return r.Fail(n, p, "one of auto, azure, mooncake, burstgpt, csv, jsonl");
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  using K = ArrivalSpec::Kind;
  const int line = FieldReader::LineOf(node);
  if (has_cv && a->kind != K::kGamma) return r.FailAtLine(line, path + ".cv", "only applies to process: gamma");
  if (has_on && a->kind != K::kOnOff) return r.FailAtLine(line, path + ".on", "on/off only apply to process: on_off");
  if (has_period && a->kind != K::kDiurnal) {
    return r.FailAtLine(line, path + ".period", "period/peak_to_trough only apply to process: diurnal");
  }
  if (a->kind == K::kOnOff && !has_on) return r.FailAtLine(line, path, "process on_off needs `on` and `off` durations");
  if (a->kind == K::kTrace) {
    if (!has_file) return r.FailAtLine(line, path + ".file", "process trace needs a `file` (a trace `characterize` reads)");
    if (has_rate) return r.FailAtLine(line, path + ".rate", "a trace has its own times; use `speed` to replay it faster");
    std::error_code ec;
    if (!std::filesystem::is_regular_file(a->trace_file, ec)) {
      return r.FailAtLine(line, path + ".file", "cannot read trace file " + a->trace_file);
    }
  } else {
    if (has_file) return r.FailAtLine(line, path + ".file", "only applies to process: trace");
    if (has_sessions) return r.FailAtLine(line, path + ".sessions", "sessions/parallel_window only apply to process: trace");
    if (!has_rate) return r.FailAtLine(line, path + ".rate", "missing; expected a rate like 20rps");
  }
  return Status::Ok();
}

Status ParsePrefix(FieldReader& r, const YAML::Node& node, const std::string& path, PrefixSpec* p) {
  const FieldReader::Entry entries[] = {
      {"share", [&](const YAML::Node& n, const std::string& s) -> Status {
         INFERENG_ASSIGN_OR_RETURN(p->share, r.Number(n, s));
         return Status::Ok();
       }},
      {"tokens", [&](const YAML::Node& n, const std::string& s) -> Status {
         INFERENG_ASSIGN_OR_RETURN(p->tokens, r.Integer(n, s));
         return Status::Ok();
       }},
      {"distinct", [&](const YAML::Node& n, const std::string& s) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, s));
         if (v < 1 || v > 1'000'000) return r.Fail(n, s, "must be between 1 and 1000000");
         p->distinct = static_cast<int>(v);
         return Status::Ok();
       }},
      {"tenants", [&](const YAML::Node& n, const std::string& s) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, s));
         if (v < 1 || v > 100'000) return r.Fail(n, s, "must be between 1 and 100000");
         p->tenants = static_cast<int>(v);
         return Status::Ok();
       }},
  };
  return r.Map(node, path, entries);
}

// traffic.sessions: {turns: DIST, think_time: DIST of durations, new_message_tokens: DIST,
// parallel: DIST (calls per step after the first)}.
Status ParseSessions(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                     SessionSpec* s);
// traffic.images: {count: DIST, width: PIXELS, height: PIXELS, share: 0..1}.
Status ParseImages(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                   ImagesSpec* im);
// traffic.audio: {seconds: DIST, transcript_tokens_per_s: N}.
Status ParseAudio(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                  AudioTrafficSpec* a);

}  // namespace

std::string ResolvePath(const std::string& base_dir, const std::string& file) {
  if (base_dir.empty() || file.empty() || file.front() == '/') return file;
  return (std::filesystem::path(base_dir) / file).lexically_normal().string();
}

Result<std::vector<double>> LoadEmpiricalSamples(const std::string& file, const std::string& field) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return Status::NotFound("cannot read " + file);
  if (std::filesystem::file_size(file, ec) > kMaxEmpiricalBytes) {
    return Status::InvalidArgument(file + ": larger than 512MiB");
  }
  std::ifstream in(file);
  if (!in) return Status::NotFound("cannot open " + file);
  std::vector<double> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string_view s = line;
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    if (s.empty() || s.front() == '#') continue;
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    double v = 0;
    if (field.empty()) {
      auto n = units::ParseNumber(s);
      if (!n.ok()) return Status::InvalidArgument(where + "expected a number, got \"" + std::string(s) + "\"");
      v = *n;
    } else {
      auto j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(where + "expected a JSON object");
      auto it = j.find(field);
      if (it == j.end() || !it->is_number()) {
        return Status::InvalidArgument(where + "expected a number in field \"" + field + "\"");
      }
      v = it->get<double>();
    }
    if (!(v > 0)) return Status::InvalidArgument(where + "expected a positive length");
    if (out.size() >= kMaxEmpiricalSamples) return Status::InvalidArgument(file + ": more than 10M samples");
    out.push_back(v);
  }
  if (out.empty()) return Status::InvalidArgument(file + ": no samples");
  return out;
}

Status ParseDistribution(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                         const std::string& default_field, Distribution* d) {
  using K = Distribution::Kind;
  if (node.IsScalar()) {
    d->kind = K::kFixed;
    INFERENG_ASSIGN_OR_RETURN(d->value, r.Number(node, path));
    return Status::Ok();
  }
  if (!node.IsMap()) return r.Error(node, path, "a number or {fixed|uniform|normal|lognormal|empirical: ...}");
  int kinds = 0;
  bool has_clamp = false;
  auto number = [&](double* out) {
    return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
      INFERENG_ASSIGN_OR_RETURN(*out, r.Number(n, p));
      return Status::Ok();
    };
  };
  const FieldReader::Entry entries[] = {
      {"fixed", [&](const YAML::Node& n, const std::string& p) -> Status {
         ++kinds;
         d->kind = K::kFixed;
         INFERENG_ASSIGN_OR_RETURN(d->value, r.Number(n, p));
         return Status::Ok();
       }},
      {"uniform", [&](const YAML::Node& n, const std::string& p) -> Status {
         ++kinds;
         d->kind = K::kUniform;
         if (!n.IsSequence() || n.size() != 2) return r.Error(n, p, "a list [min, max]");
         INFERENG_ASSIGN_OR_RETURN(d->min, r.Number(n[0], p + "[0]"));
         INFERENG_ASSIGN_OR_RETURN(d->max, r.Number(n[1], p + "[1]"));
         return Status::Ok();
       }},
      {"normal", [&](const YAML::Node& n, const std::string& p) -> Status {
         ++kinds;
         d->kind = K::kNormal;
         const FieldReader::Entry sub[] = {{"mean", number(&d->mean)}, {"stddev", number(&d->stddev)}};
         if (!n.IsMap()) return r.Error(n, p, "{mean: N, stddev: N}");
         INFERENG_RETURN_IF_ERROR(r.Map(n, p, sub));
         if (!n["mean"] || !n["stddev"]) return r.Fail(n, p, "needs both mean and stddev");
         return Status::Ok();
       }},
      {"lognormal", [&](const YAML::Node& n, const std::string& p) -> Status {
         ++kinds;
         d->kind = K::kLognormal;
         const FieldReader::Entry sub[] = {{"p50", number(&d->p50)}, {"p99", number(&d->p99)}};
         if (!n.IsMap()) return r.Error(n, p, "{p50: N, p99: N}");
         INFERENG_RETURN_IF_ERROR(r.Map(n, p, sub));
         if (!n["p50"] || !n["p99"]) return r.Fail(n, p, "needs both p50 and p99");
         return Status::Ok();
       }},
      {"empirical", [&](const YAML::Node& n, const std::string& p) -> Status {
         ++kinds;
         d->kind = K::kEmpirical;
         d->field = default_field;
         if (n.IsScalar()) {
           d->file = n.Scalar();
           d->field.clear();  // a bare file name means one number per line
         } else {
           const FieldReader::Entry sub[] = {
               {"file", [&](const YAML::Node& f, const std::string& fp) -> Status {
                  INFERENG_ASSIGN_OR_RETURN(d->file, r.String(f, fp));
                  return Status::Ok();
                }},
               {"field", [&](const YAML::Node& f, const std::string& fp) -> Status {
                  INFERENG_ASSIGN_OR_RETURN(d->field, r.String(f, fp));
                  return Status::Ok();
                }}};
           if (!n.IsMap()) return r.Error(n, p, "a file name or {file: F, field: NAME}");
           INFERENG_RETURN_IF_ERROR(r.Map(n, p, sub));
           if (d->file.empty()) return r.Fail(n, p, "needs a file");
         }
         d->file = ResolvePath(base_dir, d->file);
         auto samples = LoadEmpiricalSamples(d->file, d->field);
         if (!samples.ok()) return r.Fail(n, p, samples.status().message());
         d->samples = std::move(samples).value();
         return Status::Ok();
       }},
      {"min", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_clamp = true;
         INFERENG_ASSIGN_OR_RETURN(d->min, r.Number(n, p));
         return Status::Ok();
       }},
      {"max", [&](const YAML::Node& n, const std::string& p) -> Status {
         has_clamp = true;
         INFERENG_ASSIGN_OR_RETURN(d->max, r.Number(n, p));
         return Status::Ok();
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  if (kinds != 1) return r.Fail(node, path, "expected exactly one of fixed, uniform, normal, lognormal, empirical");
  if (has_clamp && d->kind == K::kUniform) return r.Fail(node, path, "uniform sets its own bounds; drop min/max");
  return Status::Ok();
}

Status ParseTraffic(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                    TrafficSpec* t) {
  const FieldReader::Entry entries[] = {
      {"class", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(std::string s, r.String(n, p));
         if (s == "online") {
           t->cls = TrafficSpec::Class::kOnline;
         } else if (s == "offline") {
           t->cls = TrafficSpec::Class::kOffline;
         } else {
           return r.Error(n, p, "online or offline");
         }
         return Status::Ok();
       }},
      {"arrival", [&](const YAML::Node& n, const std::string& p) { return ParseArrival(r, n, p, base_dir, &t->arrival); }},
      {"concurrency", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
         if (v < 1 || v > kMaxConcurrency) return r.Fail(n, p, "must be between 1 and 1000000");
         t->concurrency = static_cast<int>(v);
         return Status::Ok();
       }},
      {"peak_rate", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double v, r.Rate(n, p));
         t->peak_rate_rps = v;
         return Status::Ok();
       }},
      {"input_tokens", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "input_tokens", &t->input_tokens);
       }},
      {"output_tokens", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "output_tokens", &t->output_tokens);
       }},
      {"batch_size", [&](const YAML::Node& n, const std::string& p) {
         t->batch_size.emplace();
         return ParseDistribution(r, n, p, base_dir, "batch_size", &*t->batch_size);
       }},
      {"documents", [&](const YAML::Node& n, const std::string& p) {
         t->documents.emplace();
         return ParseDistribution(r, n, p, base_dir, "documents", &*t->documents);
       }},
      {"document_tokens", [&](const YAML::Node& n, const std::string& p) {
         t->document_tokens.emplace();
         return ParseDistribution(r, n, p, base_dir, "document_tokens", &*t->document_tokens);
       }},
      {"images", [&](const YAML::Node& n, const std::string& p) -> Status {
         t->images.emplace();
         return ParseImages(r, n, p, base_dir, &*t->images);
       }},
      {"audio", [&](const YAML::Node& n, const std::string& p) -> Status {
         t->audio.emplace();
         return ParseAudio(r, n, p, base_dir, &*t->audio);
       }},
      {"prefix", [&](const YAML::Node& n, const std::string& p) { return ParsePrefix(r, n, p, &t->prefix); }},
      {"agent_steps", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
         if (v < 1 || v > 10'000) return r.Fail(n, p, "must be between 1 and 10000");
         t->agent_steps = static_cast<int>(v);
         return Status::Ok();
       }},
      {"agent_tool_time", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(n, p));
         if (!(ms >= 0) || ms > 86'400'000) return r.Fail(n, p, "must be between 0 and 24h");
         t->agent_tool_ms = ms;
         return Status::Ok();
       }},
      {"agent_parallel", [&](const YAML::Node& n, const std::string& p) -> Status {
         t->agent_parallel.emplace();
         return ParseDistribution(r, n, p, base_dir, "agent_parallel", &*t->agent_parallel);
       }},
      {"sessions", [&](const YAML::Node& n, const std::string& p) -> Status {
         t->sessions.emplace();
         return ParseSessions(r, n, p, base_dir, &*t->sessions);
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  // An agent task is a session: agent_steps calls, agent_tool_time between them.
  if (t->agent_steps) {
    const int line = FieldReader::LineOf(node["agent_steps"]);
    if (t->sessions && node["sessions"]["turns"]) {
      return r.FailAtLine(line, path + ".agent_steps", "and traffic.sessions.turns both set the calls per task; keep one");
    }
    if (t->sessions && node["sessions"]["think_time"] && t->agent_tool_ms) {
      return r.FailAtLine(line, path + ".agent_tool_time", "and traffic.sessions.think_time both set the time between calls; keep one");
    }
    if (!t->sessions) t->sessions.emplace();
    t->sessions->task = true;
    t->sessions->turns = Distribution::Fixed(*t->agent_steps);
    if (t->agent_tool_ms && *t->agent_tool_ms >= 1) t->sessions->think_time_ms = Distribution::Fixed(*t->agent_tool_ms);
  }
  // Parallel calls per step: an agent's fan-out, on a task or any session.
  if (t->agent_parallel) {
    const int line = FieldReader::LineOf(node["agent_parallel"]);
    if (!t->sessions) {
      return r.FailAtLine(line, path + ".agent_parallel", "needs agent_steps or traffic.sessions (the steps it fans out)");
    }
    if (const YAML::Node sessions = node["sessions"]; sessions && sessions.IsMap() && sessions["parallel"]) {
      return r.FailAtLine(line, path + ".agent_parallel", "and traffic.sessions.parallel both set the calls per step; keep one");
    }
    t->sessions->parallel = *t->agent_parallel;
  }
  return Status::Ok();
}

namespace {

Status ParseImages(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                   ImagesSpec* im) {
  if (!node.IsMap()) return r.Error(node, path, "{count: DIST, width: PIXELS, height: PIXELS, share: 0..1}");
  auto side = [&r](int64_t* out) {
    return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
      INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
      if (v < 1 || v > kMaxImageSide) return r.Fail(n, p, "must be between 1 and " + std::to_string(kMaxImageSide) + " pixels");
      *out = v;
      return Status::Ok();
    };
  };
  const FieldReader::Entry entries[] = {
      {"count", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "count", &im->count);
       }},
      {"width", side(&im->width)},
      {"height", side(&im->height)},
      {"share", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(im->share, r.Number(n, p));
         if (!(im->share >= 0 && im->share <= 1)) return r.Fail(n, p, "must be between 0 and 1");
         return Status::Ok();
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  for (const char* key : {"width", "height"}) {
    if (!node[key]) return r.Fail(node, path, std::string("needs ") + key + " (pixels of every image)");
  }
  return Status::Ok();
}

Status ParseAudio(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                  AudioTrafficSpec* a) {
  if (!node.IsMap()) return r.Error(node, path, "{seconds: DIST, transcript_tokens_per_s: N}");
  const FieldReader::Entry entries[] = {
      {"seconds", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "seconds", &a->seconds);
       }},
      {"transcript_tokens_per_s", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(a->transcript_tokens_per_s, r.Number(n, p));
         if (!(a->transcript_tokens_per_s > 0 && a->transcript_tokens_per_s <= 100)) {
           return r.Fail(n, p, "must be above 0 and at most 100 tokens per second of audio");
         }
         return Status::Ok();
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  if (!node["seconds"]) return r.Fail(node, path, "needs seconds (each clip's length, e.g. {p50: 8, p99: 45})");
  return Status::Ok();
}

Status ParseSessions(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                     SessionSpec* s) {
  if (!node.IsMap()) {
    return r.Error(node, path, "{turns: DIST, think_time: DIST, new_message_tokens: DIST, parallel: DIST}");
  }
  const FieldReader::Entry entries[] = {
      {"turns", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "turns", &s->turns);
       }},
      {"think_time", [&](const YAML::Node& n, const std::string& p) -> Status {
         // Durations: a scalar like 5s, or a distribution whose numbers are milliseconds.
         s->think_time_ms.emplace();
         if (n.IsScalar()) {
           INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(n, p, "ms"));
           if (!(ms >= 0) || ms > 86'400'000) return r.Fail(n, p, "must be between 0 and 24h");
           if (ms < 1) {
             s->think_time_ms.reset();  // 0: the next call goes as soon as the last one ends
           } else {
             *s->think_time_ms = Distribution::Fixed(ms);
           }
           return Status::Ok();
         }
         return ParseDistribution(r, n, p, base_dir, "think_time_ms", &*s->think_time_ms);
       }},
      {"new_message_tokens", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "new_message_tokens", &s->new_message_tokens);
       }},
      {"parallel", [&](const YAML::Node& n, const std::string& p) {
         return ParseDistribution(r, n, p, base_dir, "parallel", &s->parallel);
       }},
  };
  return r.Map(node, path, entries);
}

}  // namespace

}  // namespace infereng::card
