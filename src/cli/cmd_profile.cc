// `infereng profile --target URL`: a short, safe measurement of a live endpoint that
// writes a measured cost model (job/profile.h; schema in docs/profile.md), usable as
// `simulate/capacity/run/sweep --profile FILE`. Exit 0 written, 2 bad input or too few
// points for a table, 3 the target was unreachable.
#include <cstdio>

#include "bench/target.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "core/units.h"
#include "job/profile.h"
#include "serve/faults.h"

namespace infereng::cli {

int RunProfile(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Measure a live endpoint's step times into a profile the twin can run (--profile)", argv[0]);
  std::string target, model, out = "profile.json", budget = "2m", unix_socket;
  job::ProfileOptions o;
  app.add_option("--target", target, "Server URL (root, /v1, or an endpoint URL)")->required();
  app.add_option("--model", model, "Model id to send (default: the first of /v1/models)");
  app.add_option("--out", out, "Profile file to write");
  app.add_option("--budget", budget, "Wall-time budget for every request together, e.g. 2m, 30s");
  app.add_option("--max-batch", o.max_batch, "Largest number of concurrent streams to measure")->check(InRange(1, 256));
  app.add_option("--max-prompt", o.max_prompt_words, "Longest prompt to measure, in words")->check(InRange(64, 131072));
  app.add_option("--decode-tokens", o.decode_tokens, "Output tokens per decode measurement")->check(InRange(4, 4096));
  app.add_option("--repeats", o.repeats, "Repeats of each measurement, batch rounds included (medians)")->check(InRange(1, 20));
  bool no_occupancy = false;
  app.add_flag("--no-occupancy", no_occupancy,
               "On a llama.cpp-like slot server, skip measuring the step over the KV cells idle slots hold");
  app.add_option("--unix-socket", unix_socket, "Connect to this Unix-domain socket (the URL gives Host and path)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto b = serve::ParseDuration(budget);
  if (!b.ok() || *b <= 0) {
    return ReportError(io, "profile", Status::InvalidArgument("--budget: expected a duration like 2m or 30s, got \"" + budget + "\""));
  }
  auto parsed = bench::ParseTarget(target);
  if (!parsed.ok()) return ReportError(io, "profile", parsed.status().WithContext("--target"));
  o.target = parsed->display;
  o.client.base_url = parsed->root;
  o.client.unix_socket = unix_socket;
  o.client.connect_timeout = 5 * kNanosPerSecond;
  o.model = model;
  o.budget = *b;
  o.occupancy = !no_occupancy;
  auto p = job::RunProfile(o);
  if (!p.ok()) return ReportError(io, "profile", p.status());
  if (Status st = twin::SaveProfile(*p, out); !st.ok()) return ReportError(io, "profile", st);

  io.out << "infereng profile: " << o.target << " (" << (p->provenance.engine.empty() ? "engine unknown" : p->provenance.engine)
         << ", model " << (p->provenance.model.empty() ? "?" : p->provenance.model) << ")\n";
  char line[256];
  for (const twin::ProfilePoint& q : p->points) {
    std::snprintf(line, sizeof line, "  %-15s batch %3d  new tokens %6lld  context %7lld  %9.3f ms  (x%d)\n",
                  q.kind.c_str(), q.batch, static_cast<long long>(q.new_tokens),
                  static_cast<long long>(q.context_tokens), q.seconds * 1e3, q.repeats);
    io.out << line;
    if (q.kv_occupied_tokens > 0) io.out << "                  KV span (cells attended) " << q.kv_occupied_tokens << "\n";
  }
  if (!p->table.occupancy.empty()) {
    io.out << "  occupancy table: " << p->table.occupancy.kv_occupied.size() << " rows (KV span) x "
           << p->table.occupancy.batch_tokens.size() << " columns (batch tokens)\n";
  }
  std::snprintf(line, sizeof line, "  front end %.3f ms per request; table fit: rms %.1f%%, max %.1f%% relative error\n",
                p->table.front_end_s * 1e3, 100 * p->fit_rms_rel_error, 100 * p->fit_max_rel_error);
  io.out << line;
  if (p->kv_capacity_tokens) io.out << "  KV capacity " << *p->kv_capacity_tokens << " tokens\n";
  for (const std::string& n : p->notes) io.out << "  note: " << n << "\n";
  io.out << "wrote " << out << " (use: infereng simulate --card CARD --profile " << out << ")\n";
  return kExitOk;
}

}  // namespace infereng::cli
