#include "job/summary_extras.h"

namespace infereng::job {
namespace {

using nlohmann::json;

json OptionalNumber(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json ClientToJson(const ClientCost& c) {
  json j = {{"cpu_s", c.cpu_s},
            {"cpu_s_per_1m_output_tokens", OptionalNumber(c.cpu_s_per_1m_output_tokens)},
            {"connections_opened", c.connections_opened},
            {"stale_connections_dropped", c.stale_connections_dropped},
            {"requests_retried", c.requests_retried},
            {"retry_time_lost_s", c.retry_time_lost_s},
            {"io_threads", c.io_threads}};
  if (c.preconnect) {
    const ClientCost::Preconnect& p = *c.preconnect;
    j["preconnect"] = {{"requested", p.requested},
                       {"opened", p.opened},
                       {"failed", p.failed},
                       {"seconds", p.seconds},
                       {"connect_ms_max", p.connect_ms_max}};
  }
  if (c.saturation) j["saturation"] = *c.saturation;
  return j;
}

json LengthsToJson(const bench::LengthReport& lr) {
  return {{"samples", lr.samples},
          {"exact", lr.exact},
          {"mean_abs_error_tokens", lr.mean_abs_error},
          {"max_abs_error_tokens", lr.max_abs_error},
          {"mean_achieved_over_target", lr.mean_ratio}};
}

// Reads j[key] into *out when present; a present value of the wrong type is an error.
template <typename T>
Status Get(const json& j, const char* section, const char* key, T* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  try {
    *out = j[key].get<T>();
  } catch (const json::exception&) {
    return Status::InvalidArgument(std::string("summary.json: \"") + section + "\"." + key + ": wrong type");
  }
  return Status::Ok();
}

template <typename T>
Status GetOptional(const json& j, const char* section, const char* key, std::optional<T>* out) {
  if (!j.contains(key) || j[key].is_null()) return Status::Ok();
  T v{};
  INFERENG_RETURN_IF_ERROR(Get(j, section, key, &v));
  *out = v;
  return Status::Ok();
}

Status ObjectAt(const json& j, const char* key, const json** out) {
  *out = nullptr;
  if (!j.contains(key)) return Status::Ok();
  if (!j[key].is_object()) return Status::InvalidArgument(std::string("summary.json: \"") + key + "\": not an object");
  *out = &j[key];
  return Status::Ok();
}

}  // namespace

void AddExtrasToJson(const SummaryExtras& e, json* summary) {
  json& sj = *summary;
  sj["client"] = ClientToJson(e.client);
  if (e.prompt_lengths) sj["prompt_lengths"] = LengthsToJson(*e.prompt_lengths);
  sj["output_length_control"] = e.output_length_control;
  if (e.quality) sj["quality"] = metrics::QualityReportToJson(*e.quality);
  if (e.cold_start) sj["cold_start"] = *e.cold_start;
  if (e.trace) sj["trace"] = *e.trace;
  if (e.trials) sj["trials"] = *e.trials;
  if (!e.engine_metrics_files.empty()) sj["engine_metrics_files"] = e.engine_metrics_files;
  if (e.engine_metrics) sj["engine_metrics"] = *e.engine_metrics;
  sj["notes"] = e.notes;
}

Result<SummaryExtras> SummaryExtrasFromJson(const json& sj) {
  SummaryExtras e;
  if (!sj.is_object()) return Status::InvalidArgument("summary.json: not an object");
  const json* c = nullptr;
  INFERENG_RETURN_IF_ERROR(ObjectAt(sj, "client", &c));
  if (c != nullptr) {
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "cpu_s", &e.client.cpu_s));
    INFERENG_RETURN_IF_ERROR(
        GetOptional(*c, "client", "cpu_s_per_1m_output_tokens", &e.client.cpu_s_per_1m_output_tokens));
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "connections_opened", &e.client.connections_opened));
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "stale_connections_dropped", &e.client.stale_connections_dropped));
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "requests_retried", &e.client.requests_retried));
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "retry_time_lost_s", &e.client.retry_time_lost_s));
    INFERENG_RETURN_IF_ERROR(Get(*c, "client", "io_threads", &e.client.io_threads));
    const json* pc = nullptr;
    INFERENG_RETURN_IF_ERROR(ObjectAt(*c, "preconnect", &pc));
    if (pc != nullptr) {
      ClientCost::Preconnect p;
      INFERENG_RETURN_IF_ERROR(Get(*pc, "client.preconnect", "requested", &p.requested));
      INFERENG_RETURN_IF_ERROR(Get(*pc, "client.preconnect", "opened", &p.opened));
      INFERENG_RETURN_IF_ERROR(Get(*pc, "client.preconnect", "failed", &p.failed));
      INFERENG_RETURN_IF_ERROR(Get(*pc, "client.preconnect", "seconds", &p.seconds));
      INFERENG_RETURN_IF_ERROR(Get(*pc, "client.preconnect", "connect_ms_max", &p.connect_ms_max));
      e.client.preconnect = p;
    }
    if (c->contains("saturation")) {
      if (!(*c)["saturation"].is_object()) return Status::InvalidArgument("summary.json: \"client\".saturation: not an object");
      e.client.saturation = (*c)["saturation"];
    }
  }
  const json* pl = nullptr;
  INFERENG_RETURN_IF_ERROR(ObjectAt(sj, "prompt_lengths", &pl));
  if (pl != nullptr) {
    bench::LengthReport lr;
    INFERENG_RETURN_IF_ERROR(Get(*pl, "prompt_lengths", "samples", &lr.samples));
    INFERENG_RETURN_IF_ERROR(Get(*pl, "prompt_lengths", "exact", &lr.exact));
    INFERENG_RETURN_IF_ERROR(Get(*pl, "prompt_lengths", "mean_abs_error_tokens", &lr.mean_abs_error));
    INFERENG_RETURN_IF_ERROR(Get(*pl, "prompt_lengths", "max_abs_error_tokens", &lr.max_abs_error));
    INFERENG_RETURN_IF_ERROR(Get(*pl, "prompt_lengths", "mean_achieved_over_target", &lr.mean_ratio));
    e.prompt_lengths = lr;
  }
  INFERENG_RETURN_IF_ERROR(Get(sj, "summary", "output_length_control", &e.output_length_control));
  const json* q = nullptr;
  INFERENG_RETURN_IF_ERROR(ObjectAt(sj, "quality", &q));
  if (q != nullptr) {
    Result<metrics::QualityReport> qr = metrics::QualityReportFromJson(*q);
    if (!qr.ok()) return qr.status();
    e.quality = std::move(qr).value();
  }
  if (sj.contains("cold_start")) e.cold_start = sj["cold_start"];
  if (sj.contains("trace")) e.trace = sj["trace"];
  if (sj.contains("trials")) e.trials = sj["trials"];
  if (sj.contains("engine_metrics_files")) e.engine_metrics_files = sj["engine_metrics_files"];
  if (sj.contains("engine_metrics")) e.engine_metrics = sj["engine_metrics"];
  INFERENG_RETURN_IF_ERROR(Get(sj, "summary", "notes", &e.notes));
  return e;
}

}  // namespace infereng::job
