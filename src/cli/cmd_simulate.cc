// `infereng simulate`: run a workload card through the digital twin in virtual time and
// print the summary (the same table/JSON schema as a measured run) plus what only the
// twin knows: KV usage, prefix hits, preemptions, rejections, replicas, cost, saturation.
#include <cstdio>
#include <string>
#include <vector>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "cli/history_flags.h"
#include "cli/profile_flag.h"
#include "cli/trace_flags.h"
#include "core/units.h"
#include "metrics/summary_json.h"
#include "metrics/summary_table.h"
#include "twin/engine_config.h"
#include "twin/simulation.h"

namespace infereng::cli {
namespace {

std::string Money(double usd) {
  char buf[64];
  if (usd >= 100) std::snprintf(buf, sizeof buf, "$%.0f", usd);
  else if (usd >= 0.01) std::snprintf(buf, sizeof buf, "$%.2f", usd);
  else return "$" + units::FormatSignificant(usd, 2);  // "$0.000044", never "$4.4e-05"
  return buf;
}

// Identical closed-loop users started together stay in one phase for the whole run on the
// deterministic twin (lockstep, or a train with jitter alone), while a real server's timing
// moves them between phases by chance, with TTFT up to 2x apart (docs/FIDELITY.md (b6), (d5)).
// Says so, and what gives the band instead; "" when the run is not such a loop or already has
// the window and the jitter.
std::string PhaseNote(const card::WorkloadCard& card, const twin::TwinSetup& setup, const twin::SimulationResult& r,
                      const twin::SimulationOptions& opt, bool rate_inf) {
  const twin::TwinReport& t = r.twin;
  if (t.load_mode != "closed_loop" || t.load_concurrency < 2 || rate_inf || opt.ramp_s > 0) return "";
  if (card.traffic.input_tokens.kind != card::Distribution::Kind::kFixed ||
      card.traffic.output_tokens.kind != card::Distribution::Kind::kFixed) {
    return "";
  }
  if (setup.settings.engine.admission_window_s > 0 && setup.front_end.jitter_s > 0) return "";
  return std::to_string(t.load_concurrency) +
         " identical users started together (fixed lengths, no --ramp) stay in one phase for the whole run here "
         "(all prefilled together, or one after another), which a real server's timing breaks by chance: TTFT can "
         "differ 2x between phases (docs/FIDELITY.md (b6)). Spread the users (--ramp), or read a band over --seed "
         "with engine.admission_window and cost.front_end_jitter set (scripts/closed_loop_band.sh).";
}

std::string TwinText(const twin::SimulationResult& r, int replicas) {
  const twin::TwinReport& t = r.twin;
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line, "\nTwin: %s, %d replica%s; simulated %.0f s in %.2f s (%.0fx real time, %lld steps)\n",
                t.description.c_str(), replicas, replicas == 1 ? "" : "s", t.simulated_s, t.wall_s,
                t.wall_s > 0 ? t.simulated_s / t.wall_s : 0.0, static_cast<long long>(t.steps));
  s += line;
  for (const std::string& c : t.cost_caveats) s += "  CAUTION: " + c + "\n";
  if (!t.front_end.none()) s += "  front end per request: " + twin::DescribeFrontEnd(t.front_end) + "\n";
  s += "  load: " + twin::DescribeLoad(t);
  if (t.client_waiting_peak > 0) s += " (up to " + std::to_string(t.client_waiting_peak) + " waited in the client)";
  s += "\n";
  std::snprintf(line, sizeof line,
                "  KV usage mean %.1f%% (peak %.1f%%)  prefix hit rate %.1f%%  preemptions %lld  "
                "rejections %lld  timeouts %lld  incomplete %lld\n",
                100 * t.kv_usage_mean, 100 * t.kv_usage_peak, 100 * t.prefix_hit_rate,
                static_cast<long long>(t.preemptions), static_cast<long long>(t.rejections),
                static_cast<long long>(t.timeouts), static_cast<long long>(t.incomplete));
  s += line;
  for (const auto& [reason, n] : t.rejections_by_reason) {
    s += "    rejected (" + reason + "): " + std::to_string(n) + "\n";
  }
  if (t.spec_acceptance_observed > 0) {
    std::snprintf(line, sizeof line, "  speculative decoding: %.1f%% of draft tokens accepted\n",
                  100 * t.spec_acceptance_observed);
    s += line;
  }
  if (t.disaggregation) {
    const twin::DisaggregationReport& d = *t.disaggregation;
    std::snprintf(line, sizeof line,
                  "  disaggregated: %d prefill + %d decode replicas (busy %.0f%% / %.0f%%); KV transfers %lld, "
                  "%.3g GB over %.3g GB/s links: %.3g ms mean, P99 %.3g ms, waiting for the link %.3g ms mean "
                  "(P99 %.3g ms)\n",
                  d.prefill_replicas, d.decode_replicas, 100 * d.prefill_busy, 100 * d.decode_busy,
                  static_cast<long long>(d.transfers), d.transferred_gb, d.link_gb_s, d.transfer_ms_mean,
                  d.transfer_ms_p99, d.link_wait_ms_mean, d.link_wait_ms_p99);
    s += line;
  }
  std::snprintf(line, sizeof line, "  replicas mean %.2f (max %d, %lld scale events)\n", t.replicas_mean,
                t.replicas_max, static_cast<long long>(t.scale_events));
  s += line;
  // No price or no output: "n/a" and why, never "$0 per 1M output tokens".
  if (!(t.price_per_replica_hour > 0)) {
    s += "  cost n/a (no price known: set deployment.price_per_hour_usd)\n";
  } else {
    const metrics::SummaryCounts& c = r.summary.counts;
    s += "  cost " + Money(t.cost_per_hour_usd) + "/hour, " +
         (c.output_tokens > 0 ? Money(t.cost_per_1m_output_tokens_usd) + " per 1M output tokens, "
                              : std::string("n/a per 1M output tokens (no successful in-window request), ")) +
         (c.succeeded > 0 ? Money(t.cost_per_successful_request_usd) + " per successful request"
                          : std::string("n/a per successful request (none in the window)")) +
         "\n";
  }
  s += "  utilisation estimate " + units::FormatSignificant(t.utilisation_estimate, 3) + " (capacity ~" +
       units::FormatSignificant(t.capacity_rps_estimate, 3) + " rps, mean-field)\n";
  if (t.near_saturation) s += "  WARNING: " + t.saturation_note + "\n";
  if (t.makespan_requests_per_s > 0) {
    s += "  makespan " + units::FormatSignificant(t.makespan_s, 4) + " s for the run's requests: " +
         units::FormatSignificant(t.makespan_requests_per_s, 4) + " requests/s, " +
         units::FormatSignificant(t.makespan_output_tokens_per_s, 4) +
         " output tokens/s (successful requests / time from t = 0 to the last end)\n";
  }
  return s;
}

}  // namespace

int RunSimulate(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Simulate a workload card on the digital twin (virtual time)", argv[0]);
  std::string card_path, duration, records, rate, ramp, warmup;
  std::vector<std::string> sets;
  std::optional<uint64_t> seed;
  std::optional<int> replicas, concurrency;
  double rate_scale = 1.0;
  bool json = false, exact = false, explain = false;
  app.add_option("--card", card_path, "Workload card (YAML)")->required();
  app.add_option("--duration", duration, "Simulated arrival period, e.g. 10m, 1h (default: the card's bench.duration)");
  app.add_option("--warmup", warmup,
                 "Leading part of the arrival period left out of the measured window, as bench --warmup "
                 "(default: the card's bench.warmup, at most a tenth of the duration)");
  app.add_option("--seed", seed, "Random seed (default: the card's bench.seed)");
  app.add_option("--set", sets,
                 "Override a knob: engine.KEY=VALUE, cluster.KEY=VALUE or cost.KEY=VALUE (repeatable; "
                 "see --list-keys)");
  std::string profile;
  app.add_option("--profile", profile,
                 "Measured profile (infereng profile/calibrate): price steps with its table, not the roofline");
  app.add_option("--replicas", replicas, "Replicas behind the router (default: the card's deployment.replicas)");
  app.add_option("--rate", rate,
                 "Open loop at this mean rate, e.g. 20rps (with --concurrency: at most that many in flight)");
  app.add_option("--concurrency", concurrency,
                 "Alone: a closed loop of N users, each sending when its previous request ends; with --rate: "
                 "a cap on requests in flight (default: the card's traffic.concurrency, as bench)");
  std::optional<int64_t> requests;
  app.add_option("--requests,--num-prompts", requests,
                 "End after N requests instead of a duration (default: the card's bench.requests); "
                 "reports the makespan throughput. With --rate inf all N are sent at t = 0");
  app.add_option("--rate-scale", rate_scale, "Multiply the open-loop arrival rate");
  app.add_option("--ramp", ramp, "Ramp the rate (open loop) or the users (closed loop) up over this, as bench --ramp");
  app.add_option("--records", records, "Write every simulated request to this records.jsonl");
  app.add_flag("--json", json, "Print the summary JSON (one schema, plus \"twin\") instead of the table");
  app.add_flag("--exact", exact, "Exact percentiles (keeps every sample in memory)");
  app.add_flag("--explain", explain, "Under the table, say what each metric measures and its name in other tools");
  job::HistoryLocation history;
  AddHistoryFlags(app, &history);
  TraceFlags trace;
  AddTraceFlags(app, &trace);
  bool list_keys = false;
  app.add_flag("--list-keys", list_keys, "List every --set key and exit");
  // --list-keys must work without --card.
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--list-keys") {
      for (const std::string& k : twin::TwinSettingKeys()) io.out << k << "\n";
      return kExitOk;
    }
  }
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "simulate", card.status());
  if (Status s = ApplyTraceFlags(trace, &*card); !s.ok()) return ReportError(io, "simulate", s);
  std::optional<workload::ReplayInfo> replay;
  if (card->traffic.arrival.kind == card::ArrivalSpec::Kind::kTrace) {
    Result<workload::ReplayInfo> info = SetUpTraceRun(trace, requests.has_value() || !duration.empty(), false, &*card);
    if (!info.ok()) return ReportError(io, "simulate", info.status());
    replay = *info;
  }
  twin::SimulationOptions opt;
  opt.seed = seed;
  opt.records_path = records;
  opt.exact_percentiles = exact;
  if (!(rate_scale > 0)) return ReportError(io, "simulate", Status::InvalidArgument("--rate-scale must be > 0"));
  opt.rate_scale = rate_scale;
  if (!duration.empty()) {
    auto d = units::ParsePositiveDurationSeconds(duration, "s");
    if (!d.ok()) return ReportError(io, "simulate", d.status().WithContext("--duration"));
    opt.duration_s = *d;
  }
  if (!warmup.empty()) {
    auto w = units::ParseDurationSeconds(warmup, "s");
    if (!w.ok()) return ReportError(io, "simulate", w.status().WithContext("--warmup"));
    opt.warmup_s = *w;
  }
  // A count-limited run: --requests N or the card's bench.requests (unless --duration says
  // otherwise), as bench. --rate inf sends all N at once: a closed loop of N slots, each
  // sending once (with --concurrency C, C at a time), as bench's --rate inf.
  const bool rate_inf = rate == "inf" || rate == "infinity";
  if (!requests && duration.empty()) requests = card->bench.requests;
  if (rate_inf && !requests) {
    return ReportError(io, "simulate", Status::InvalidArgument("--rate inf: sends every request at once: give their number with --requests N"));
  }
  if (requests) {
    if (*requests < 1 || *requests > twin::kMaxInSystem) {
      return ReportError(io, "simulate", Status::InvalidArgument("--requests: must be 1.." + std::to_string(twin::kMaxInSystem)));
    }
    if (!duration.empty()) {
      return ReportError(io, "simulate", Status::InvalidArgument("--requests and --duration: give one (a run ends at N requests or at a duration)"));
    }
    opt.max_requests = static_cast<uint64_t>(*requests);
    opt.count_limited = true;
  }
  if (rate_inf) {
    if (!concurrency) concurrency = static_cast<int>(*requests);
  } else if (!rate.empty()) {
    auto r = units::ParseRate(rate, "rps");
    if (!r.ok() || !(*r > 0)) return ReportError(io, "simulate", Status::InvalidArgument("--rate: expected a rate like 20rps, got \"" + rate + "\""));
    opt.rate_rps = *r;
  }
  opt.concurrency = concurrency;
  if (!ramp.empty()) {
    auto d = units::ParseDurationSeconds(ramp, "s");
    if (!d.ok() || !(*d >= 0)) {
      return ReportError(io, "simulate", Status::InvalidArgument("--ramp: expected a duration like 30s, got \"" + ramp + "\""));
    }
    opt.ramp_s = *d;
  }
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) return ReportError(io, "simulate", cat.status());
  twin::SetupOptions so;
  so.sets = sets;
  so.replicas = replicas;
  auto measured = LoadProfileFlag(profile, &so.sets);
  if (!measured.ok()) return ReportError(io, "simulate", measured.status());
  auto setup = twin::ResolveTwin(*card, so, *cat);
  if (!setup.ok()) return ReportError(io, "simulate", setup.status());  // card errors carry FILE:LINE
  ApplyProfile(*measured, &*setup);
  auto result = twin::RunSimulation(*card, *setup, opt);
  if (!result.ok()) return ReportError(io, "simulate", result.status());

  if (json) {
    nlohmann::json j = twin::SimulationResultToJson(*result);
    if (replay) j["trace"] = trace::ReplayInfoToJson(*replay, card->traffic.arrival.trace_speed * rate_scale);
    io.out << j.dump(2) << "\n";
  } else {
    metrics::TableOptions to;
    to.color = io.out_is_tty;
    to.show_boundaries = false;  // the glossary is behind --explain
    io.out << metrics::FormatSummaryTable(result->summary, to);
    io.out << TwinText(*result, setup->settings.cluster.replicas);
    if (replay) io.out << "  " << trace::ReplayPrefixNote(*replay) << "\n";
    if (replay && !card->traffic.arrival.trace_sessions.empty()) {
      if (const std::string note = trace::ReplaySessionNote(*replay); !note.empty()) io.out << "  " << note << "\n";
    }
    if (explain) io.out << "\n" << metrics::MetricBoundariesText() << "\n" << metrics::ToolAliasesText();
    if (!records.empty()) io.out << "wrote " << records << "\n";
  }
  RegisterInHistory(history,
                    job::EntryFromSimulation(*card, opt.seed.value_or(card->bench.seed),
                                             metrics::SummaryToJson(result->summary)),
                    "simulate", io, !json);
  if (result->twin.near_saturation && json) io.err << "warning: " << result->twin.saturation_note << "\n";
  if (const std::string note = PhaseNote(*card, *setup, *result, opt, rate_inf); !note.empty()) {
    (json ? io.err : io.out) << "note: " << note << "\n";
  }
  const bool has_slos =
      !card->slo.latency.empty() || !card->slo.goodput.empty() || card->slo.min_output_tokens_per_s.has_value();
  return has_slos && !result->summary.slo_pass ? kExitCheckFailed : kExitOk;
}

}  // namespace infereng::cli
