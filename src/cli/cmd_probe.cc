// `infereng probe --target URL`: production-readiness probes of a live endpoint (job/probe.h).
// Flags, the terminal checklist and the exit code: 0 every probe passed (or did not apply),
// 1 a probe failed, 2 bad input, 3 the target was unreachable or went away (probe.json then
// holds every result so far).
#include <filesystem>
#include <iomanip>

#include "bench/target.h"
#include "card/card_parser.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/output_dir.h"
#include "job/probe.h"
#include "job/start_cmd.h"
#include "serve/faults.h"

namespace infereng::cli {

namespace {

void PrintChecklist(std::ostream& os, const std::string& target, const job::ProbeSuiteOutcome& out) {
  os << "infereng probe: " << target << " — production readiness\n";
  for (const job::ProbeResult& r : out.results) {
    std::string tag = r.verdict == job::Verdict::kPass   ? "PASS"
                      : r.verdict == job::Verdict::kFail ? "FAIL"
                      : r.verdict == job::Verdict::kWarn ? "WARN"
                                                         : "n/a ";
    os << "  [" << tag << "] " << std::left << std::setw(16) << r.name << r.finding << "\n";
  }
}

}  // namespace

int RunProbe(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app(
      "Probe a live OpenAI-compatible endpoint for production readiness: overload shedding, cancellation,\n"
      "cold start, streaming integrity, limits and errors, health semantics, and tenant isolation of the\n"
      "prefix cache. Every probe is bounded in requests and time and backs off when the target is unhealthy.\n"
      "Writes probe.json and probe.html (timelines) and prints a readiness checklist; exit 1 when a probe fails.",
      argv[0]);
  std::string target, card_path, only, out, start_cmd, api_key_env, api_key_file, ca_file, unix_socket, model;
  std::string tenant_by = "api-key", health_wait = "5s";
  bool insecure = false;
  job::ProbeSettings settings;
  app.add_option("--target", target, "Server URL (root, /v1, or an endpoint URL)")->required();
  app.add_option("--card", card_path, "Workload card: the model id and context length to probe with");
  app.add_option("--only", only, "Comma-separated probes (cold-start, overload, cancellation, streaming, heartbeat, limits, "
                                 "health, cache-isolation)");
  app.add_option("--out", out, "Directory for probe.json and probe.html (default probe-<UTC time>)");
  app.add_option("--start-cmd", start_cmd, "Command that starts the target (for the cold-start probe; stopped at the end)");
  app.add_option("--model", model, "Model id to send (default: the card's, else the first of /v1/models)");
  app.add_option("--api-key-env", api_key_env, "Read the API key from this variable (default OPENAI_API_KEY)");
  app.add_option("--api-key-file", api_key_file, "Read the API key from this file's first line");
  app.add_option("--ca-file", ca_file, "PEM CA bundle to trust (TLS)");
  app.add_flag("--insecure", insecure, "TLS: do not verify the certificate");
  app.add_option("--unix-socket", unix_socket, "Connect to this Unix-domain socket (the URL gives Host and path)");
  app.add_option("--trials", settings.cache_trials, "Cache-isolation trials (3 requests each)")->check(InRange(8, 200));
  app.add_option("--prefix-tokens", settings.cache_prefix_tokens, "Cache-isolation secret prefix length (words)")
      ->check(InRange(16, 100000));
  app.add_option("--alpha", settings.alpha, "Cache-isolation significance level")->check(InRange(1e-6, 0.5));
  app.add_option("--tenant-by", tenant_by, "How tenants differ: api-key (Authorization) or cache-salt (body field)")
      ->check(CLI::IsMember({"api-key", "cache-salt"}));
  job::HistoryLocation history;
  AddHistoryFlags(app, &history);
  std::string silence = "30s";
  app.add_option("--heartbeat-silence", silence,
                 "Heartbeat probe: a silence before the first token this long warns (a proxy idle timeout would cut it)");
  app.add_option("--heartbeat-prompt-tokens", settings.heartbeat_prompt_tokens,
                 "Heartbeat probe: the long prompt's length (words; capped at the context)")
      ->check(InRange(16, 10000000));
  app.add_option("--budget-scale", settings.budget_scale, "Multiply every probe's request and time budget")
      ->check(InRange(0.01, 10));
  app.add_option("--seed", settings.seed, "Seed for prompts and trial order");
  app.add_option("--health-wait", health_wait, "How long to back off while the target is unhealthy before giving up (exit 3)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto wait = serve::ParseDuration(health_wait);
  if (!wait.ok()) return ReportError(io, "probe", wait.status().WithContext("--health-wait"));
  settings.health_backoff = *wait;
  auto quiet_for = serve::ParseDuration(silence);
  if (!quiet_for.ok() || *quiet_for <= 0) {
    return ReportError(io, "probe", (quiet_for.ok() ? Status::InvalidArgument("must be > 0") : quiet_for.status())
                                        .WithContext("--heartbeat-silence"));
  }
  settings.heartbeat_silence = *quiet_for;
  auto parsed = bench::ParseTarget(target);
  if (!parsed.ok()) return ReportError(io, "probe", parsed.status().WithContext("--target"));
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"--ca-file", ca_file},
                                   {"--api-key-file", api_key_file}}) {
    if (Status st = CheckInputFile(flag, path); !st.ok()) return ReportError(io, "probe", st);
  }
  auto key = bench::LoadApiKey(bench::ApiKeyOptions{.env_name = api_key_env, .file = api_key_file});
  if (!key.ok()) return ReportError(io, "probe", key.status());
  if (!card_path.empty()) {
    auto c = LoadCard(card_path, io);
    if (!c.ok()) return ReportError(io, "probe", c.status());
    settings.model = c->model.id;
  }
  if (!model.empty()) settings.model = model;
  settings.tenant_by = tenant_by == "cache-salt" ? job::TenantBy::kCacheSalt : job::TenantBy::kApiKey;

  job::ProbeSuiteOptions o;
  o.target = parsed->display;
  o.client.base_url = parsed->root;
  if (!key->empty()) o.client.headers.push_back({"Authorization", "Bearer " + *key});
  o.client.insecure = insecure;
  o.client.ca_file = ca_file;
  o.client.unix_socket = unix_socket;
  o.client.connect_timeout = 5 * kNanosPerSecond;
  for (std::size_t pos = 0; pos <= only.size() && !only.empty();) {
    const std::size_t comma = std::min(only.find(',', pos), only.size());
    if (comma > pos) o.only.push_back(only.substr(pos, comma - pos));
    pos = comma + 1;
  }
  o.out_dir = out.empty() ? TimestampedOutputDir("", "probe", "probe") : out;
  o.settings = settings;
  job::StartedProcess process;
  if (!start_cmd.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out_dir, ec);
    const std::string log = (std::filesystem::path(o.out_dir) / "start-cmd.log").string();
    o.start = [&process, start_cmd, log] { return process.Start(start_cmd, log); };
  }
  auto result = job::RunProbeSuite(o);
  process.Stop();
  if (!result.ok()) return ReportError(io, "probe", result.status());
  PrintChecklist(io.out, o.target, *result);
  if (!result->json_path.empty()) io.out << "probe.json: " << result->json_path << "\n";
  if (!result->html_path.empty()) io.out << "probe.html: " << result->html_path << "\n";
  if (!result->json_path.empty()) RegisterInHistory(history, job::EntryFromRunDir(o.out_dir), "probe", io, true);
  if (!result->error.ok()) {
    io.err << "infereng probe: error: " << result->error.message() << " (results so far are in probe.json)\n";
    return kExitRuntime;
  }
  return result->any_fail() ? kExitCheckFailed : kExitOk;
}

}  // namespace infereng::cli
