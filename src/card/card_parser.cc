// ParseCard / LoadCardFile: the top level and the non-traffic sections of a workload card.
#include "card/card_parser.h"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "card/card_sections.h"

namespace infereng::card {
namespace {

constexpr std::size_t kMaxCardBytes = 1 << 20;
constexpr int kMaxEngineDepth = 8;

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// Handler factories for the common field shapes.
FieldReader::Handler Str(FieldReader& r, std::string* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(*out, r.String(n, p));
    return Status::Ok();
  };
}
FieldReader::Handler OneOf(FieldReader& r, std::string* out, std::vector<std::string> allowed) {
  return [&r, out, allowed = std::move(allowed)](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(std::string s, r.String(n, p));
    std::string list;
    for (const auto& a : allowed) {
      if (a == s) {
        *out = s;
        return Status::Ok();
      }
      list += (list.empty() ? "" : ", ") + a;
    }
    return r.Error(n, p, "one of " + list);
  };
}
FieldReader::Handler Num(FieldReader& r, double* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(*out, r.Number(n, p));
    return Status::Ok();
  };
}
FieldReader::Handler OptNum(FieldReader& r, std::optional<double>* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(double v, r.Number(n, p));
    *out = v;
    return Status::Ok();
  };
}
template <typename Int>
FieldReader::Handler IntIn(FieldReader& r, Int* out, int64_t lo, int64_t hi) {
  return [&r, out, lo, hi](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
    if (v < lo || v > hi) {
      return r.Fail(n, p, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                              std::to_string(v));
    }
    *out = static_cast<Int>(v);
    return Status::Ok();
  };
}
FieldReader::Handler Secs(FieldReader& r, double* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(*out, r.Seconds(n, p));
    return Status::Ok();
  };
}
FieldReader::Handler OptMillis(FieldReader& r, std::optional<double>* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(double v, r.Millis(n, p));
    *out = v;
    return Status::Ok();
  };
}
FieldReader::Handler Flag(FieldReader& r, bool* out) {
  return [&r, out](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(*out, r.Bool(n, p));
    return Status::Ok();
  };
}

Status ParseProduct(FieldReader& r, const YAML::Node& node, const std::string& path, ProductSpec* p) {
  const FieldReader::Entry entries[] = {
      {"task", Str(r, &p->task)},
      {"modality", [&r, p](const YAML::Node& n, const std::string& at) -> Status {
         // Only what bench, serve and the twin implement end to end (issue 14 §4).
         INFERENG_ASSIGN_OR_RETURN(std::string m, r.String(n, at));
         if (m == "text" || m == "embeddings" || m == "rerank" || m == "transcription") {
           p->modality = m;
           return Status::Ok();
         }
         if (m == "embedding") return r.Fail(n, at, "is spelled \"embeddings\" (the /v1/embeddings API)");
         if (m == "reranking" || m == "reranker" || m == "rerankers") {
           return r.Fail(n, at, "is spelled \"rerank\" (the /v1/rerank API)");
         }
         if (m == "vision" || m == "image") {
           return r.Fail(n, at, "\"" + m + "\": images on chat requests are traffic.images on a text card, with "
                                 "model.vision for the image-token rule (docs/workload-card.md)");
         }
         if (m == "audio" || m == "speech" || m == "asr" || m == "stt" || m == "transcriptions") {
           return r.Fail(n, at, "\"" + m + "\": speech to text is \"transcription\" (the /v1/audio/transcriptions API)");
         }
         if (m == "video") return r.Fail(n, at, "\"video\" is not supported yet (text, embeddings, rerank or transcription)");
         return r.Error(n, at, "text, embeddings, rerank or transcription");
       }},
      {"max_context_tokens", IntIn(r, &p->max_context_tokens, 1, 100'000'000)},
      {"max_input_tokens", IntIn(r, &p->max_input_tokens, 1, 100'000'000)},
      {"max_output_tokens", IntIn(r, &p->max_output_tokens, 1, 100'000'000)},
      {"format", OneOf(r, &p->format, {"text", "json", "tool_calls"})},
      {"streaming", Flag(r, &p->streaming)},
      {"timeout", Secs(r, &p->timeout_s)},
      {"overload_response", Str(r, &p->overload_response)},
      {"unit_of_work", OneOf(r, &p->unit_of_work, {"request", "task"})},
      {"network", OptMillis(r, &p->network_ms)},
      {"preprocess", OptMillis(r, &p->preprocess_ms)},
      {"postprocess", OptMillis(r, &p->postprocess_ms)},
  };
  return r.Map(node, path, entries);
}

// "p99" -> 99, "p99.9" -> 99.9.
Result<double> ParsePercentileKey(FieldReader& r, const YAML::Node& at, const std::string& key,
                                  const std::string& path) {
  auto v = key.size() > 1 && (key[0] == 'p' || key[0] == 'P') ? units::ParseNumber(key.substr(1))
                                                              : Result<double>(Status::InvalidArgument(""));
  if (!v.ok() || !(*v > 0 && *v < 100)) {
    return r.Fail(at, path, "expected a percentile key like p50, p95, p99 or p99.9 (between 0 and 100), got \"" + key + "\"");
  }
  return *v;
}

Status ParseSlo(FieldReader& r, const YAML::Node& node, const std::string& path, SloSpec* s) {
  // Latency objectives: `ttft: {p99: 500ms}`; the *_ms spellings also accept plain numbers
  // as milliseconds. Metrics are stored as "ttft_ms", "ttft_visible_ms", "itl_ms", "tpot_ms",
  // "e2e_ms" (ttft_visible: the first non-reasoning token, docs/metrics.md).
  auto latency = [&](std::string metric, std::string_view default_unit) {
    return [&r, s, metric, default_unit](const YAML::Node& n, const std::string& p) -> Status {
      if (!n.IsMap()) return r.Error(n, p, "percentile targets like {p99: 500ms, p50: 200ms}");
      return r.FreeMap(n, p, [&](const std::string& key, const YAML::Node& v, const std::string& sub) -> Status {
        INFERENG_ASSIGN_OR_RETURN(double pct, ParsePercentileKey(r, v, key, sub));
        INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(v, sub, default_unit));
        if (!(ms > 0)) return r.Fail(v, sub, "must be > 0");
        s->latency.push_back(SloTarget{metric, pct, ms});
        return Status::Ok();
      });
    };
  };
  // Per-request thresholds for goodput and attainment: `goodput: {ttft: 500ms, tpot: 50ms}`.
  auto threshold = [&](std::string metric, std::string_view default_unit) {
    return [&r, s, metric, default_unit](const YAML::Node& n, const std::string& p) -> Status {
      INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(n, p, default_unit));
      if (!(ms > 0)) return r.Fail(n, p, "must be > 0");
      for (const RequestThreshold& t : s->goodput) {
        if (t.metric == metric) return r.Fail(n, p, "is given twice (" + metric.substr(0, metric.size() - 3) +
                                                        " and " + metric + " are the same metric)");
      }
      s->goodput.push_back(RequestThreshold{metric, ms, 99, "slo.goodput"});
      return Status::Ok();
    };
  };
  const FieldReader::Entry goodput_entries[] = {
      {"ttft", threshold("ttft_ms", "")}, {"ttft_ms", threshold("ttft_ms", "ms")},
      {"ttft_visible", threshold("ttft_visible_ms", "")}, {"ttft_visible_ms", threshold("ttft_visible_ms", "ms")},
      {"itl", threshold("itl_ms", "")},   {"itl_ms", threshold("itl_ms", "ms")},
      {"tpot", threshold("tpot_ms", "")}, {"tpot_ms", threshold("tpot_ms", "ms")},
      {"e2e", threshold("e2e_ms", "")},   {"e2e_ms", threshold("e2e_ms", "ms")},
  };
  const FieldReader::Entry entries[] = {
      {"goodput", [&](const YAML::Node& n, const std::string& p) -> Status {
         if (!n.IsMap()) return r.Error(n, p, "per-request thresholds like {ttft: 500ms, tpot: 50ms}");
         return r.Map(n, p, goodput_entries);
       }},
      {"ttft", latency("ttft_ms", "")},        {"ttft_ms", latency("ttft_ms", "ms")},
      {"ttft_visible", latency("ttft_visible_ms", "")}, {"ttft_visible_ms", latency("ttft_visible_ms", "ms")},
      {"itl", latency("itl_ms", "")},          {"itl_ms", latency("itl_ms", "ms")},
      {"tpot", latency("tpot_ms", "")},        {"tpot_ms", latency("tpot_ms", "ms")},
      {"e2e", latency("e2e_ms", "")},          {"e2e_ms", latency("e2e_ms", "ms")},
      {"attainment", Num(r, &s->attainment)},
      {"availability", OptNum(r, &s->availability)},
      {"min_output_tokens_per_s", OptNum(r, &s->min_output_tokens_per_s)},
      {"recovery", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double v, r.Seconds(n, p));
         s->recovery_s = v;
         return Status::Ok();
       }},
      {"task", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(n, p));
         if (!(ms > 0)) return r.Fail(n, p, "must be > 0");
         s->task_ms = ms;
         return Status::Ok();
       }},
      {"task_ms", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double ms, r.Millis(n, p, "ms"));
         if (!(ms > 0)) return r.Fail(n, p, "must be > 0");
         s->task_ms = ms;
         return Status::Ok();
       }},
  };
  return r.Map(node, path, entries);
}

Status ParseConstraints(FieldReader& r, const YAML::Node& node, const std::string& path, ConstraintsSpec* c) {
  auto budget_one = [&](const YAML::Node& n, const std::string& p) -> Status {
    INFERENG_ASSIGN_OR_RETURN(units::Money m, r.Money(n, p));
    switch (m.per) {
      case units::Money::Per::kHour: c->budget_per_hour_usd = m.usd; break;
      case units::Money::Per::kMillionTokens: c->budget_per_1m_tokens_usd = m.usd; break;
      case units::Money::Per::kNone: return r.Error(n, p, "a budget per hour ($40/h) or per 1M tokens ($0.50/1M)");
    }
    return Status::Ok();
  };
  const FieldReader::Entry entries[] = {
      {"budget", [&](const YAML::Node& n, const std::string& p) -> Status {
         if (!n.IsSequence()) return budget_one(n, p);
         for (std::size_t i = 0; i < n.size(); ++i) INFERENG_RETURN_IF_ERROR(budget_one(n[i], p + "[" + std::to_string(i) + "]"));
         return Status::Ok();
       }},
      {"region", Str(r, &c->region)},
      {"data_residency", Str(r, &c->data_residency)},
      {"privacy", Str(r, &c->privacy)},
      {"licence", Str(r, &c->licence)},
      {"accelerators", [&](const YAML::Node& n, const std::string& p) -> Status {
         if (n.IsScalar()) {
           c->accelerators = {n.Scalar()};
           return Status::Ok();
         }
         if (!n.IsSequence()) return r.Error(n, p, "a list of accelerator names");
         for (std::size_t i = 0; i < n.size(); ++i) {
           INFERENG_ASSIGN_OR_RETURN(std::string a, r.String(n[i], p + "[" + std::to_string(i) + "]"));
           c->accelerators.push_back(a);
         }
         return Status::Ok();
       }},
      {"operations", Str(r, &c->operations)},
  };
  return r.Map(node, path, entries);
}

Status ParseVision(FieldReader& r, const YAML::Node& node, const std::string& path, VisionSpec* v);
Status ParseAudioModel(FieldReader& r, const YAML::Node& node, const std::string& path, AudioModelSpec* a);

Status ParseModel(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& base_dir,
                  ModelRef* m) {
  const FieldReader::Entry entries[] = {
      {"id", Str(r, &m->id)},
      {"revision", Str(r, &m->revision)},
      {"precision", OneOf(r, &m->precision, {"bf16", "fp16", "fp8", "int8", "int4", "fp4"})},
      {"kv_precision", OneOf(r, &m->kv_precision, {"bf16", "fp16", "fp8"})},  // what fit and the twin model
      // A config.json path is relative to the card, like every file a card names.
      {"vision", [&r, m](const YAML::Node& n, const std::string& p) -> Status {
         m->vision.emplace();
         return ParseVision(r, n, p, &*m->vision);
       }},
      {"audio", [&r, m](const YAML::Node& n, const std::string& p) -> Status {
         m->audio.emplace();
         return ParseAudioModel(r, n, p, &*m->audio);
       }},
      {"architecture", [&r, m, &base_dir](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(std::string a, r.String(n, p));
         m->architecture = a.ends_with(".json") ? ResolvePath(base_dir, a) : a;
         return Status::Ok();
       }},
  };
  return r.Map(node, path, entries);
}

// model.vision: the fixed rule {tokens_per_image: N} or the patch rule {patch_size,
// merge_size, min_pixels, max_pixels} (card/vision.h), and the encoder's size.
Status ParseVision(FieldReader& r, const YAML::Node& node, const std::string& path, VisionSpec* v) {
  if (!node.IsMap()) {
    return r.Error(node, path, "a map like {tokens_per_image: 576} or {patch_size: 14, merge_size: 2, max_pixels: 1003520}");
  }
  const FieldReader::Entry entries[] = {
      {"tokens_per_image", IntIn(r, &v->tokens_per_image, 1, 1'000'000)},
      {"patch_size", IntIn(r, &v->patch_size, 1, 1024)},
      {"merge_size", IntIn(r, &v->merge_size, 1, 64)},
      {"min_pixels", IntIn(r, &v->min_pixels, 1, kMaxImageSide * kMaxImageSide)},
      {"max_pixels", IntIn(r, &v->max_pixels, 1, kMaxImageSide * kMaxImageSide)},
      {"encoder_params", [&r, v](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double params, r.Number(n, p));
         if (!(params >= 0 && params <= 1e13)) return r.Fail(n, p, "must be between 0 and 1e13 parameters (e.g. 3.04e8)");
         v->encoder_params = params;
         return Status::Ok();
       }},
  };
  INFERENG_RETURN_IF_ERROR(r.Map(node, path, entries));
  if (node["tokens_per_image"]) {
    for (const char* key : {"patch_size", "merge_size", "min_pixels", "max_pixels"}) {
      if (node[key]) {
        return r.FailAtLine(FieldReader::LineOf(node[key]), path + "." + key,
                            "belongs to the patch rule; tokens_per_image already fixes the tokens per image (keep one rule)");
      }
    }
  }
  return Status::Ok();
}

// model.audio: {tokens_per_second, encoder_positions_per_second, window_s, prompt_tokens,
// encoder_params} (card/audio.h).
Status ParseAudioModel(FieldReader& r, const YAML::Node& node, const std::string& path, AudioModelSpec* a) {
  if (!node.IsMap()) return r.Error(node, path, "a map like {tokens_per_second: 50, window_s: 30} (Whisper)");
  auto rate = [&r](double* out, double lo) {
    return [&r, out, lo](const YAML::Node& n, const std::string& p) -> Status {
      INFERENG_ASSIGN_OR_RETURN(double v, r.Number(n, p));
      if (!(v >= lo && v <= 1000)) return r.Fail(n, p, lo > 0 ? "must be above 0 and at most 1000 per second" : "must be between 0 and 1000 per second");
      *out = v;
      return Status::Ok();
    };
  };
  const FieldReader::Entry entries[] = {
      {"tokens_per_second", rate(&a->tokens_per_second, 1e-3)},
      {"encoder_positions_per_second", rate(&a->encoder_positions_per_second, 0)},
      {"window_s", [&r, a](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double v, r.Number(n, p));
         if (!(v == 0 || (v >= 1 && v <= 3600))) return r.Fail(n, p, "must be 0 (no padding) or between 1 and 3600 seconds");
         a->window_s = v;
         return Status::Ok();
       }},
      {"prompt_tokens", IntIn(r, &a->prompt_tokens, 0, 100'000)},
      {"encoder_params", [&r, a](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(double params, r.Number(n, p));
         if (!(params >= 0 && params <= 1e13)) return r.Fail(n, p, "must be between 0 and 1e13 parameters (e.g. 6.35e8)");
         a->encoder_params = params;
         return Status::Ok();
       }},
  };
  return r.Map(node, path, entries);
}

Status ParseDeployment(FieldReader& r, const YAML::Node& node, const std::string& path, DeploymentSpec* d) {
  const FieldReader::Entry entries[] = {
      {"accelerator", Str(r, &d->accelerator)},
      {"count", IntIn(r, &d->count, 1, 4096)},
      {"tp", IntIn(r, &d->tp, 1, 1024)},
      {"ep", IntIn(r, &d->ep, 1, 1024)},
      {"replicas", IntIn(r, &d->replicas, 1, 100'000)},
      {"price", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(units::Money m, r.Money(n, p));
         if (m.per != units::Money::Per::kHour) return r.Error(n, p, "a price per accelerator-hour like $2.50/h");
         d->price_per_hour_usd = m.usd;
         return Status::Ok();
       }},
  };
  return r.Map(node, path, entries);
}

// Engine knobs are free: nested maps flatten to dotted keys, lists to comma-joined values.
Status FlattenEngine(FieldReader& r, const YAML::Node& node, const std::string& path, const std::string& prefix,
                     int depth, std::map<std::string, std::string>* out) {
  if (depth > kMaxEngineDepth) return r.Fail(node, path, "nested too deeply");
  if (!node.IsMap()) return r.Error(node, path, "a map of engine settings");
  return r.FreeMap(node, path, [&](const std::string& key, const YAML::Node& v, const std::string& sub) -> Status {
    const std::string k = prefix.empty() ? key : prefix + "." + key;
    if (v.IsMap()) return FlattenEngine(r, v, sub, k, depth + 1, out);
    if (v.IsSequence()) {
      std::string joined;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].IsScalar()) return r.Error(v[i], sub, "a list of plain values");
        joined += (i ? "," : "") + v[i].Scalar();
      }
      (*out)[k] = joined;
      return Status::Ok();
    }
    if (!v.IsScalar()) return r.Error(v, sub, "a value");
    (*out)[k] = v.Scalar();
    return Status::Ok();
  });
}

Status ParseBench(FieldReader& r, const YAML::Node& node, const std::string& path, BenchSpec* b) {
  const FieldReader::Entry entries[] = {
      {"duration", Secs(r, &b->duration_s)},
      {"requests", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
         if (v < 1) return r.Fail(n, p, "must be >= 1");
         b->requests = v;
         return Status::Ok();
       }},
      {"warmup", Secs(r, &b->warmup_s)},
      {"cooldown", Secs(r, &b->cooldown_s)},
      {"trials", IntIn(r, &b->trials, 1, 1000)},
      {"seed", [&](const YAML::Node& n, const std::string& p) -> Status {
         INFERENG_ASSIGN_OR_RETURN(int64_t v, r.Integer(n, p));
         if (v < 0) return r.Fail(n, p, "must be >= 0");
         b->seed = static_cast<uint64_t>(v);
         return Status::Ok();
       }},
      {"endpoint", OneOf(r, &b->endpoint, {"chat", "completions", "embeddings", "rerank", "transcriptions"})},
  };
  return r.Map(node, path, entries);
}

}  // namespace

Result<WorkloadCard> ParseCard(std::string_view yaml, std::string_view source_name) {
  WorkloadCard card;
  card.content_hash = Sha256Hex(yaml);
  const std::string source(source_name.empty() ? "<card>" : source_name);
  if (yaml.size() > kMaxCardBytes) return Status::InvalidArgument(source + ": larger than 1MiB; not a card?");
  const std::string base_dir =
      source_name.empty() ? "" : std::filesystem::path(std::string(source_name)).parent_path().string();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsDefined() || root.IsNull()) return Status::InvalidArgument(source + ": empty card");
  FieldReader r(source, &card.fields);
  const FieldReader::Entry entries[] = {
      {"name", Str(r, &card.name)},
      {"description", Str(r, &card.description)},
      {"product", [&](const YAML::Node& n, const std::string& p) { return ParseProduct(r, n, p, &card.product); }},
      {"traffic", [&](const YAML::Node& n, const std::string& p) { return ParseTraffic(r, n, p, base_dir, &card.traffic); }},
      {"slo", [&](const YAML::Node& n, const std::string& p) { return ParseSlo(r, n, p, &card.slo); }},
      {"constraints", [&](const YAML::Node& n, const std::string& p) { return ParseConstraints(r, n, p, &card.constraints); }},
      {"model", [&](const YAML::Node& n, const std::string& p) { return ParseModel(r, n, p, base_dir, &card.model); }},
      {"deployment", [&](const YAML::Node& n, const std::string& p) { return ParseDeployment(r, n, p, &card.deployment); }},
      {"engine", [&](const YAML::Node& n, const std::string& p) { return FlattenEngine(r, n, p, "", 0, &card.engine); }},
      {"quality", [&](const YAML::Node& n, const std::string& p) -> Status {
         const FieldReader::Entry sub[] = {
             {"eval_set", [&](const YAML::Node& v, const std::string& vp) -> Status {
                INFERENG_ASSIGN_OR_RETURN(std::string f, r.String(v, vp));
                card.quality.eval_set = ResolvePath(base_dir, f);
                return Status::Ok();
              }},
             {"pass_threshold", Num(r, &card.quality.pass_threshold)}};
         return r.Map(n, p, sub);
       }},
      {"bench", [&](const YAML::Node& n, const std::string& p) { return ParseBench(r, n, p, &card.bench); }},
      {"baseline", [&](const YAML::Node& n, const std::string& p) -> Status {
         const FieldReader::Entry sub[] = {{"run", Str(r, &card.baseline.run)}, {"notes", Str(r, &card.baseline.notes)}};
         return r.Map(n, p, sub);
       }},
  };
  try {
    INFERENG_RETURN_IF_ERROR(r.Map(root, "", entries));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  card.source_path = std::string(source_name);
  // Accelerators per replica default to what the parallelism needs.
  if (!card.Has("deployment.count")) card.deployment.count = std::max(card.deployment.tp, card.deployment.ep);
  // An embeddings (rerank) card is benchmarked on /v1/embeddings (/v1/rerank) unless it
  // says otherwise (which ValidateCard refuses, naming the line).
  if (card.product.PrefillOnly() && !card.Has("bench.endpoint")) card.bench.endpoint = card.product.ItemsEndpoint();
  if (card.product.Transcription() && !card.Has("bench.endpoint")) card.bench.endpoint = "transcriptions";
  INFERENG_RETURN_IF_ERROR(ValidateCard(card));
  // A transcription card's token lengths follow from its clips (card/audio.h). The
  // generator draws each request's exactly; the planning tools that read the card's length
  // distributions (fit's KV per sequence, budget) get their linear image: transcript tokens
  // = seconds x transcript_tokens_per_s, audio tokens = seconds x tokens_per_second, at least
  // one window's when clips are padded (the decoder's few start tokens left out).
  if (card.product.Transcription() && card.traffic.audio && card.model.audio) {
    const AudioModelSpec& m = *card.model.audio;
    card.traffic.output_tokens = card.traffic.audio->seconds.Scaled(card.traffic.audio->transcript_tokens_per_s);
    card.traffic.input_tokens = card.traffic.audio->seconds.Scaled(m.tokens_per_second);
    if (m.window_s > 0) card.traffic.input_tokens.min = std::max(card.traffic.input_tokens.min, m.window_s * m.tokens_per_second);
  }
  return card;
}

Result<WorkloadCard> LoadCardFile(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) return Status::InvalidArgument(path + " is a directory, not a card file");
  if (!std::filesystem::is_regular_file(st)) return Status::NotFound("cannot read card file " + path + ": no such file");
  if (std::filesystem::file_size(path, ec) > kMaxCardBytes) {
    return Status::InvalidArgument(path + ": larger than 1MiB; not a card?");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open card file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseCard(ss.str(), path);
}

}  // namespace infereng::card
