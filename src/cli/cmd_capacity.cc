// `infereng capacity`: the cheapest accelerator x count x TP x replicas deployment that
// meets every SLO of a card at its peak rate with burst headroom (fit first, then the
// twin). Prints every candidate with why it lost, and the winner with its cost. A
// closed-loop card plans for its C users instead of a rate (twin/capacity.h).
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "cli/profile_flag.h"
#include "cli/exit_codes.h"
#include "core/numeric.h"
#include "core/units.h"
#include "twin/capacity.h"

namespace infereng::cli {

int RunCapacity(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Find the cheapest deployment that meets a card's SLOs at peak load (fit + twin)", argv[0]);
  std::string card_path, accelerators, duration, rate, counts;
  std::vector<std::string> sets;
  double headroom = 1.3;
  int max_replicas = 64;
  std::optional<uint64_t> seed;
  std::optional<int> concurrency;
  bool json = false;
  app.add_option("--card", card_path, "Workload card (YAML)")->required();
  app.add_option("--accelerators", accelerators,
                 "Comma-separated catalog names, e.g. h100-sxm,l40s (default: the card's constraints, else all)");
  app.add_option("--counts", counts, "Accelerators per replica to try (TP = count), default 1,2,4,8");
  app.add_option("--burst-headroom", headroom, "Multiply the peak rate by this (1: plan for the peak itself)")
      ->check(AtLeast(1));
  app.add_option("--rate", rate, "Peak rate to plan for, e.g. 40rps (default: traffic.peak_rate, else the arrival rate)");
  app.add_option("--concurrency", concurrency,
                 "Alone: plan for a closed loop of N users; with --rate: at most N in flight "
                 "(default: the card's traffic.concurrency, as bench)");
  app.add_option("--duration", duration, "Simulated arrival period per trial (default 2m)");
  app.add_option("--max-replicas", max_replicas, "Largest replica count to try")->check(AtLeast(1));
  app.add_option("--set", sets, "Knob override for every candidate: engine.KEY=VALUE (repeatable)");
  app.add_option("--seed", seed, "Random seed (default: the card's bench.seed)");
  std::string profile;
  app.add_option("--profile", profile,
                 "Measured profile (infereng profile/calibrate): price steps with its table; it measured the "
                 "card's deployment, so only replicas vary");
  app.add_flag("--json", json, "Print the result as JSON");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  auto card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "capacity", card.status());
  twin::CapacityOptions o;
  o.burst_headroom = headroom;
  o.max_replicas = max_replicas;
  o.sets = sets;
  o.seed = seed;
  o.concurrency = concurrency;
  auto split = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (!item.empty()) out.push_back(item);
    }
    return out;
  };
  o.accelerators = split(accelerators);
  if (!profile.empty()) {
    if (!accelerators.empty() || !counts.empty()) {
      return ReportError(io, "capacity", Status::InvalidArgument("--profile: a profile measured one deployment (the card's); "
                                                                 "--accelerators and --counts do not apply"));
    }
    auto measured = LoadProfileFlag(profile, &o.sets);
    if (!measured.ok()) return ReportError(io, "capacity", measured.status());
    o.measured_cost = (*measured)->cost;
    o.measured_label = (*measured)->label;
    o.accelerators = {card->deployment.accelerator};
    o.counts = {card->deployment.count};
  }
  if (!counts.empty()) {
    o.counts.clear();
    for (const std::string& c : split(counts)) {
      auto v = units::ParseNumber(c);
      const auto n = infereng::InRange(v.ok() ? DoubleToInt64(*v) : std::nullopt, 1, std::numeric_limits<int>::max());
      if (!n) {
        return ReportError(io, "capacity", Status::InvalidArgument("--counts: expected integers >= 1 like 1,2,4, got \"" + counts + "\""));
      }
      o.counts.push_back(static_cast<int>(*n));
    }
  }
  if (!duration.empty()) {
    auto d = units::ParsePositiveDurationSeconds(duration, "s");
    if (!d.ok()) return ReportError(io, "capacity", d.status().WithContext("--duration"));
    o.duration_s = *d;
  }
  if (!rate.empty()) {
    auto r = units::ParseRate(rate, "rps");
    if (!r.ok() || !(*r > 0)) return ReportError(io, "capacity", Status::InvalidArgument("--rate: expected a rate like 40rps, got \"" + rate + "\""));
    o.rate_rps = *r;
  }
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) return ReportError(io, "capacity", cat.status());
  auto result = twin::SearchCapacity(*card, *cat, o);
  if (!result.ok()) return ReportError(io, "capacity", result.status());  // card errors carry FILE:LINE
  if (json) io.out << twin::CapacityResultToJson(*result).dump(2) << "\n";
  else io.out << twin::FormatCapacityResult(*result);
  return result->winner && result->within_budget ? kExitOk : kExitCheckFailed;
}

}  // namespace infereng::cli
