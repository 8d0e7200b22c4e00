// The probe suite: the probe table, the shared request helpers, and the runner (health
// check with back-off before each probe, probe.json rewritten after each).
#include "job/probe.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/mix64.h"
#include "job/probe_report.h"
#include "serve/text_model.h"

namespace infereng::job {

namespace {

constexpr Nanos kS = kNanosPerSecond;

// Health of the target: ok when /health (or, without one, /v1/models) answers 200.
// Backs off (100 ms, doubling) while it does not, up to `patience`.
Status WaitForHealth(const client::ClientOptions& copt, Nanos patience) {
  ProbeClient health(copt, ProbeBudget{.max_requests = 1000, .max_time = patience + 10 * kS});
  Nanos wait = 100 * kNanosPerMilli;
  const Nanos give_up = ProbeClient::SteadyNowNs() + patience;
  std::string last;
  for (;;) {
    auto r = health.Get("/health", 2 * kS);
    if (r.ok() && r->status == 404) r = health.Get("/v1/models", 2 * kS);
    if (r.ok() && r->status == 200) return Status::Ok();
    if (!r.ok()) return r.status();
    last = r->status == 0 ? "unreachable (" + r->error_message + ")" : "unhealthy (/health answered HTTP " +
                                                                          std::to_string(r->status) + ")";
    if (ProbeClient::SteadyNowNs() + wait > give_up) break;
    std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    wait = std::min<Nanos>(wait * 2, 2 * kS);
  }
  return Status::Unavailable("target " + last + " for " + std::to_string(NanosToMillis(patience) / 1000) +
                             " s; stopping the probe suite");
}

// The model id and context length from /v1/models (vLLM and infereng report max_model_len).
void Discover(const client::ClientOptions& copt, const ProbeSettings& s, ProbeContext& ctx) {
  ctx.model = s.model;
  ctx.max_model_len = s.max_model_len > 0 ? s.max_model_len : 131072;
  ProbeClient c(copt, ProbeBudget{.max_requests = 1, .max_time = 10 * kS});
  auto r = c.Get("/v1/models");
  if (!r.ok() || r->status != 200) return;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) return;
  const auto& m = j["data"][0];
  if (ctx.model.empty() && m.contains("id") && m["id"].is_string()) ctx.model = m["id"].get<std::string>();
  if (s.max_model_len <= 0 && m.contains("max_model_len") && m["max_model_len"].is_number_integer()) {
    ctx.max_model_len = m["max_model_len"].get<int64_t>();
  }
}

Status WriteJson(const std::string& path, const nlohmann::json& j) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return Status::IoError("cannot write " + tmp);
    f << j.dump(2) << "\n";
    if (!f) return Status::IoError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace

const std::vector<ProbeSpec>& ProbeTable() {
  static const std::vector<ProbeSpec> kTable = {
      {"cold-start",
       "Autoscaling and restarts put cold replicas behind the load balancer: the time to healthy and to the first "
       "token is how long capacity is missing, and a replica that reports healthy before it can serve takes traffic "
       "it fails.",
       {.max_requests = 400, .max_time = 90 * kS}, RunColdStartProbe},
      {"overload",
       "Every service meets more load than it can take. A server that sheds (429/503 with Retry-After) keeps the "
       "requests it accepts fast and tells clients when to return; one that queues without bound turns a burst "
       "into timeouts for everyone.",
       {.max_requests = 260, .max_time = 45 * kS}, RunOverloadProbe},
      {"cancellation",
       "Users close tabs and clients time out. If a cancelled stream keeps generating, its slot and KV cache are "
       "lost to everyone else until it finishes: capacity leaks exactly when the system is slow.",
       {.max_requests = 80, .max_time = 20 * kS}, RunCancellationProbe},
      {"streaming",
       "Streaming exists to show tokens as they are generated. A buffering proxy (nginx proxy_buffering, a CDN) "
       "delivers them in bursts and late, and a stream without [DONE] or usage breaks clients and billing.",
       {.max_requests = 6, .max_time = 20 * kS}, RunStreamingProbe},
      {"heartbeat",
       "A long prompt means a long prefill before the first token. A proxy or load balancer with an idle timeout "
       "(nginx, AWS ALB: 60 s) cuts a connection that stays silent that long, and the user sees a dropped stream for "
       "a request the engine is still computing; SSE keep-alive comments during prefill prevent it.",
       {.max_requests = 2, .max_time = 75 * kS}, RunHeartbeatProbe},
      {"limits",
       "Bad requests happen in production. Each must get a 4xx that says what is wrong, never a 5xx (which pages "
       "someone and gets retried) or a hang (which holds a connection and a client thread).",
       {.max_requests = 10, .max_time = 40 * kS}, RunLimitsProbe},
      {"health",
       "Load balancers and orchestrators act on /health. If it stops answering under load, healthy replicas get "
       "killed; if it says ready before the model can serve, traffic is sent to a replica that fails it.",
       {.max_requests = 40, .max_time = 20 * kS}, RunHealthProbe},
      {"cache-isolation",
       "A prefix cache shared across tenants is a timing side channel: one tenant can tell whether another sent a "
       "given prompt (a system prompt, a document) from its own time to first token.",
       {.max_requests = 3 * 200 + 4, .max_time = 120 * kS}, RunCacheIsolationProbe},
  };
  return kTable;
}

std::string ProbeContext::Words(int32_t n, uint64_t salt) {
  std::string out;
  out.reserve(static_cast<std::size_t>(n) * 8);
  for (int32_t i = 0; i < n; ++i) {
    if (i) out += ' ';
    out += 'w';
    out += std::to_string(Mix64(salt * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i)) % 1000000);
  }
  return out;
}

std::string ProbeContext::ChatBody(const std::string& prompt, int64_t max_tokens, bool stream) const {
  nlohmann::json j = {{"messages", {{{"role", "user"}, {"content", prompt}}}}, {"max_tokens", max_tokens},
                      {"stream", stream}, {"ignore_eos", true}};
  if (!model.empty()) j["model"] = model;
  if (stream) j["stream_options"] = {{"include_usage", true}};
  return j.dump();
}

bool ProbeSuiteOutcome::any_fail() const {
  return std::any_of(results.begin(), results.end(), [](const ProbeResult& r) { return r.verdict == Verdict::kFail; });
}

nlohmann::json SuiteJson(const std::string& target, const ProbeSuiteOutcome& outcome, bool complete) {
  nlohmann::json probes = nlohmann::json::array();
  for (const ProbeResult& r : outcome.results) probes.push_back(ToJson(r));
  return {{"target", target},
          {"complete", complete},
          {"error", outcome.error.ok() ? nlohmann::json(nullptr) : nlohmann::json(outcome.error.message())},
          {"probes", probes}};
}

Result<ProbeSuiteOutcome> RunProbeSuite(const ProbeSuiteOptions& o) {
  std::vector<const ProbeSpec*> selected;
  for (const std::string& name : o.only) {
    auto it = std::find_if(ProbeTable().begin(), ProbeTable().end(), [&](const ProbeSpec& p) { return p.name == name; });
    if (it == ProbeTable().end()) {
      std::string known;
      for (const ProbeSpec& p : ProbeTable()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      return Status::InvalidArgument("--only: unknown probe \"" + name + "\" (known: " + known + ")");
    }
  }
  for (const ProbeSpec& p : ProbeTable()) {
    if (o.only.empty() || std::find(o.only.begin(), o.only.end(), p.name) != o.only.end()) selected.push_back(&p);
  }
  ProbeSuiteOutcome out;
  if (!o.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    if (ec) return Status::IoError("cannot create " + o.out_dir + ": " + ec.message());
    out.json_path = (std::filesystem::path(o.out_dir) / "probe.json").string();
    out.html_path = (std::filesystem::path(o.out_dir) / "probe.html").string();
  }
  auto save = [&](bool complete) -> Status {
    if (out.json_path.empty()) return Status::Ok();
    INFERENG_RETURN_IF_ERROR(WriteJson(out.json_path, SuiteJson(o.target, out, complete)));
    return WriteProbeReport(out.html_path, o.target, out, complete);
  };
  INFERENG_RETURN_IF_ERROR(save(false));

  ProbeClient client(o.client, ProbeBudget{});
  ProbeContext ctx{.client = client, .settings = o.settings, .start = o.start};
  const bool cold_start_selected = std::any_of(selected.begin(), selected.end(), [](const ProbeSpec* p) {
    return p->name == "cold-start";
  });
  if (o.start && !cold_start_selected) {
    if (Status st = o.start(); !st.ok()) {
      out.error = st;
      INFERENG_RETURN_IF_ERROR(save(false));
      return out;
    }
  }
  bool discovered = false;
  for (const ProbeSpec* spec : selected) {
    const bool starts_target = spec->name == "cold-start" && o.start;
    if (!starts_target) {
      // A target we started may take a while to load: wait longer for it the first time.
      const Nanos patience = o.start && !discovered ? std::max(o.settings.health_backoff, 120 * kS) : o.settings.health_backoff;
      if (Status st = WaitForHealth(o.client, patience); !st.ok()) {
        out.error = st;
        break;
      }
      if (!discovered) Discover(o.client, o.settings, ctx);
      discovered = true;
    }
    ProbeBudget b = spec->budget;
    b.max_requests = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(b.max_requests) * o.settings.budget_scale));
    b.max_time = static_cast<Nanos>(static_cast<double>(b.max_time) * o.settings.budget_scale);
    client.Restart(b);
    ProbeResult r = spec->run(ctx);
    r.name = std::string(spec->name);
    r.why = std::string(spec->why);
    r.requests = client.used();
    r.elapsed = client.elapsed();
    r.trace = client.TakeTrace();
    out.results.push_back(std::move(r));
    INFERENG_RETURN_IF_ERROR(save(false));
  }
  INFERENG_RETURN_IF_ERROR(save(out.error.ok()));
  return out;
}

}  // namespace infereng::job
