// twin_bench: how fast the digital twin simulates, and that its memory does not grow with
// the simulated duration (histogram mode, no records kept).
//
// Workload: examples/chat.yaml (lognormal prompts p50 1800 / outputs p50 250 tokens, 90%
// shared system prompt) at 50 rps on 8 replicas of llama-3.1-8b on H100, roofline cost.
// Target (docs/PERFORMANCE.md): one simulated hour >= 1,000x faster than real time.
//
//   build/dev/twin_bench [--duration-s 3600] [--rate 50] [--replicas 8] [--card FILE]
//
// Prints wall and CPU time (on a shared machine the CPU time is the honest figure), the
// speed-up vs real time, events/s, simulated requests/s and the peak RSS after a short
// and after the full run (the second must not be much larger: histogram mode).
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "twin/simulation.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int Run(const std::string& card_path, double duration_s, double rate, int replicas, bool quiet) {
  using namespace infereng;
  auto card = card::LoadCardFile(card_path);
  if (!card.ok()) {
    std::fprintf(stderr, "twin_bench: %s\n", card.status().ToString().c_str());
    return 2;
  }
  auto cat = catalog::Catalog::Load();
  if (!cat.ok()) {
    std::fprintf(stderr, "twin_bench: %s\n", cat.status().ToString().c_str());
    return 3;
  }
  twin::SetupOptions so;
  so.replicas = replicas;
  auto setup = twin::ResolveTwin(*card, so, *cat);
  if (!setup.ok()) {
    std::fprintf(stderr, "twin_bench: %s\n", setup.status().ToString().c_str());
    return 2;
  }
  twin::SimulationOptions opt;
  opt.duration_s = duration_s;
  opt.rate_rps = rate;
  const double cpu0 = CpuSeconds();
  auto r = twin::RunSimulation(*card, *setup, opt);
  const double cpu = CpuSeconds() - cpu0;
  if (!r.ok()) {
    std::fprintf(stderr, "twin_bench: %s\n", r.status().ToString().c_str());
    return 3;
  }
  const twin::TwinReport& t = r->twin;
  if (!quiet) {
    std::printf(
        "duration %6.0f s simulated (%6.0f s incl. drain) | wall %7.3f s | %7.0fx real time | "
        "cpu %7.3f s (%.0fx per cpu-second) | "
        "%9.0f events/s | %8.0f sim requests/s | %lld requests, %lld steps, %lld output tokens | "
        "TTFT p99 %.1f ms | peak RSS %ld KiB\n",
        duration_s, t.simulated_s, t.wall_s, t.simulated_s / t.wall_s, cpu, t.simulated_s / cpu,
        static_cast<double>(t.events) / t.wall_s,
        static_cast<double>(t.requests) / t.wall_s, static_cast<long long>(t.requests),
        static_cast<long long>(t.steps), static_cast<long long>(r->summary.counts.output_tokens),
        r->summary.ttft_ms.p99, PeakRssKb());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string card = std::string(INFERENG_SOURCE_DIR) + "/examples/chat.yaml";
  double duration = 3600, rate = 50;
  int replicas = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--duration-s")) duration = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rate")) rate = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--replicas")) replicas = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--card")) card = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: twin_bench [--duration-s S] [--rate RPS] [--replicas N] [--card FILE]\n");
      return 2;
    }
  }
  // A short run first: its peak RSS is the baseline the full run must stay close to.
  if (int rc = Run(card, std::min(duration, 300.0), rate, replicas, false); rc != 0) return rc;
  return Run(card, duration, rate, replicas, false);
}
