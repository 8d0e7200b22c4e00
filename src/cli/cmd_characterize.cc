// `infereng characterize TRACE...`: what production traffic looks like (arrivals,
// burstiness, lengths, prefix reuse, sessions) from request logs, as a terminal summary,
// JSON, an HTML report (--out) and a card traffic section (--card-out). The work is
// job::RunCharacterize's; this file owns flags and printing.
#include <fmt/format.h>

#include <sstream>

#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "job/characterize.h"
#include "trace/characterization_json.h"
#include "trace/datetime.h"

namespace infereng::cli {
namespace {

std::string G(double v) { return fmt::format("{:.4g}", v); }
std::string Pct(double v) { return fmt::format("{:.1f}%", 100 * v); }

std::string LengthLine(const trace::LengthStats& l) {
  const auto& s = l.stats;
  return fmt::format("mean {} p50 {} p90 {} p99 {} p99.9 {} max {}; fit KS D lognormal {} gamma {} (best {}); card: {}",
                     G(s.mean), G(s.p50), G(s.p90), G(s.p99), G(s.p99_9), G(s.max), G(l.lognormal.ks_d),
                     G(l.gamma.ks_d), l.best, l.card_form);
}

void PrintTrace(std::ostream& os, const trace::Characterization& c) {
  const trace::ArrivalStats& a = c.arrivals;
  os << c.path << " (" << c.format << ", sha256 " << c.sha256.substr(0, 12) << ")\n";
  const std::string period = c.absolute_time ? trace::FormatDateTime(a.first_t_s) + " .. " +
                                                   trace::FormatDateTime(a.last_t_s) + " UTC"
                                             : "t=" + G(a.first_t_s) + " .. " + G(a.last_t_s) + " s";
  os << "  period       " << period << " (" << G(a.span_s) << " s)\n";
  os << fmt::format("  arrivals     {} requests, mean rate {} req/s; gap CV {}; process {} (KS D poisson {}, gamma {}; "
                    "5% critical {})\n",
                    a.requests, G(a.mean_rate), G(a.gap_cv), a.chosen, G(a.poisson.ks_d), G(a.gamma.ks_d),
                    G(a.ks_critical));
  if (a.zero_gaps > 0) {
    os << fmt::format("               {} gaps of 0 s ({}): timestamps are coarse, the gap fits are approximate\n",
                      a.zero_gaps, Pct(static_cast<double>(a.zero_gaps) / static_cast<double>(a.requests - 1)));
  }
  os << "  dispersion  ";
  for (const auto& w : a.dispersion) os << " " << G(w.window_s) << "s " << (w.windows > 0 ? G(w.value) : "n/a");
  os << "   (index of dispersion of counts; 1 = poisson)\n  peak/mean   ";
  for (const auto& w : a.peak_to_mean) {
    os << " " << G(w.window_s) << "s " << (w.windows > 0 ? G(w.value) + " (" + G(w.peak_rate) + " req/s)" : "n/a (trace shorter)");
  }
  os << "\n  input        " << LengthLine(c.input) << "\n  output       " << LengthLine(c.output) << "\n";
  os << "  correlation  input vs output: pearson " << G(c.pearson) << " (of logs " << G(c.pearson_log) << ")\n";
  if (c.prefix.present) {
    const auto& p = c.prefix;
    os << fmt::format("  prefix       {} of requests reuse a cached prefix, {} of input tokens reusable ({} blocks of {} "
                      "tokens, unbounded cache)\n               LRU hit rate:",
                      Pct(p.cached_share), Pct(p.reusable_share), p.distinct_blocks, p.block_tokens);
    for (const auto& l : p.lru) os << " " << l.blocks << " blocks " << Pct(l.hit_rate) << ";";
    os << "\n";
    for (const auto& t : p.tenants) {
      os << fmt::format("               tenant {}: {} requests, {} cached prefix\n", t.tenant, t.requests,
                        Pct(t.cached_share));
    }
  }
  if (c.sessions.present) {
    const auto& s = c.sessions;
    os << fmt::format("  sessions     {} sessions{} ({} follow-up turns); turns p50 {} p99 {} max {}; time between turns p50 "
                      "{} s p99 {} s; context growth per turn p50 {} tokens, of which new message p50 {} tokens\n",
                      s.sessions, s.source == "inferred" ? " inferred from hash_ids" : "", s.follow_ups, G(s.turns.p50),
                      G(s.turns.p99), G(s.turns.max), G(s.gap_s.p50), G(s.gap_s.p99), G(s.growth_tokens.p50),
                      G(s.new_message_tokens.p50));
  }
  for (const auto& [name, n] : c.categories) os << "  class        " << name << ": " << n << " requests\n";
  if (c.items_rows > 0) {
    os << fmt::format("  inputs       per request (batch size) p50 {} p99 {} max {} ({} rows give it)\n", G(c.items.p50),
                      G(c.items.p99), G(c.items.max), c.items_rows);
  }
  if (c.littles) {
    os << fmt::format("  little's law {} in flight at the mean rate, {} at the busiest minute, {} at the busiest second "
                      "({} s: {})\n",
                      G(c.littles->at_mean), G(c.littles->at_peak_1min), G(c.littles->at_peak_1s),
                      G(c.littles->latency_s), c.littles->basis);
  }
}

}  // namespace

int RunCharacterize(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Characterise production request traces: arrivals, burstiness, lengths, prefix reuse, sessions",
               argv[0]);
  job::CharacterizeJobOptions opt;
  std::string format = "auto", columns, time_unit = "auto", card_path;
  bool json = false;
  app.add_option("trace", opt.traces, "trace files (CSV or JSONL)")->required();
  app.add_option("--format", format, "auto | azure | mooncake | burstgpt | csv | jsonl")->capture_default_str();
  app.add_option("--columns", columns,
                 "column map for csv/jsonl: time=COL,input=COL,output=COL[,tenant=,session=,hashes=,class=]");
  app.add_option("--time-unit", time_unit, "auto | s | ms | us | datetime")->capture_default_str();
  app.add_option("--block-tokens", opt.stats.block_tokens, "tokens per hash_ids block")
      ->capture_default_str()
      ->check(InRange(1, 1 << 20));
  app.add_option("--cache-blocks", opt.stats.cache_blocks, "LRU prefix-cache sizes in blocks (repeatable)")
      ->check(InRange(1, 1e8))
      ->capture_default_str();
  app.add_option("--card", card_path, "workload card: Little's-law concurrency at its latency objectives");
  app.add_option("--out", opt.out_dir, "folder for characterize.json and report.html");
  app.add_option("--card-out", opt.card_out, "write a card traffic section fitted to the trace (one trace)");
  app.add_flag("--card-sessions", opt.card_sessions,
               "with --card-out: write the trace's sessions (ids, or conversations inferred from hash_ids): arrival = "
               "session starts, input = first turns, traffic.sessions = turns, time between turns, new messages");
  app.add_flag("--json", json, "print JSON instead of the summary");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  const char* cmd = "characterize";
  auto f = trace::ParseFormat(format);
  if (!f.ok()) return ReportError(io, cmd, f.status());
  opt.reader.format = *f;
  auto u = trace::ParseTimeUnit(time_unit);
  if (!u.ok()) return ReportError(io, cmd, u.status());
  opt.reader.time_unit = *u;
  if (!columns.empty()) {
    auto m = trace::ParseColumnMap(columns);
    if (!m.ok()) return ReportError(io, cmd, m.status());
    opt.reader.columns = *m;
  }
  if (!card_path.empty()) {
    auto card = LoadCard(card_path, io);
    if (!card.ok()) return ReportError(io, cmd, card.status());
    opt.card = std::move(card).value();
  }
  auto result = job::RunCharacterize(opt);
  if (!result.ok()) return ReportError(io, cmd, result.status());
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& c : result->traces) all.push_back(trace::ToJson(c));
    io.out << nlohmann::json{{"traces", all}}.dump(2) << "\n";
  } else {
    for (const auto& c : result->traces) PrintTrace(io.out, c);
  }
  if (!result->littles_note.empty()) io.err << "note: " << result->littles_note << "\n";
  for (const auto& w : result->written) io.err << "wrote " << w << "\n";
  return kExitOk;
}

}  // namespace infereng::cli
