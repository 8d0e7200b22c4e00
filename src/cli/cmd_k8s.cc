// `infereng k8s render CARD --target URL --shards N`: the manifests that run the card's bench
// as N shards on Kubernetes (job/k8s_render.h), on stdout or --out FILE.
#include <fstream>
#include <sstream>
#include <string>

#include "bench/shard.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"
#include "infereng/version_info.h"
#include "job/k8s_render.h"
#include "job/manifest.h"

namespace infereng::cli {

int RunK8s(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Kubernetes: run a card's bench as N shards (an Indexed Job) and merge them (docs/scale-out.md)",
               argv[0]);
  app.require_subcommand(1);
  CLI::App* render = app.add_subcommand("render", "Write the manifests: ConfigMap (card), results claim, Indexed Job");
  job::K8sRenderOptions o;
  o.image = std::string("ghcr.io/infereng/infereng:") + build::kVersion;
  std::string card_path, out, start_delay = "3m", start_at;
  render->add_option("card", card_path, "Workload card (YAML)")->required();
  render->add_option("--target", o.target, "The engine's URL as the pods reach it")->required();
  render->add_option("--shards", o.shards, "Number of shards (pods)")->required();
  render->add_option("--image", o.image, "Container image with infereng on PATH");
  render->add_option("--namespace", o.ns, "Namespace");
  render->add_option("--api-key-secret", o.api_key_secret, "Secret holding the API key (referenced, never copied)");
  render->add_option("--api-key-secret-key", o.api_key_secret_key, "The key inside that Secret");
  render->add_option("--cpu", o.cpu, "CPU request per pod");
  render->add_option("--memory", o.memory, "Memory request and limit per pod");
  render->add_option("--results-pvc", o.results_pvc, "An existing ReadWriteMany claim for the results (default: render one)");
  render->add_option("--storage", o.storage, "Size of the rendered results claim");
  render->add_option("--start-delay", start_delay, "The shared start: this long after rendering (apply at once)");
  render->add_option("--start-at", start_at, "The shared start as a UTC time instead (2026-12-02T00:10:00Z)");
  render->add_option("--bench-args", o.extra_args, "More bench flags for every shard, e.g. \"--duration 5m --rate 40\"");
  render->add_option("--out", out, "Write the YAML here (default: stdout)");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;

  if (card_path == "-") return ReportError(io, "k8s render", Status::InvalidArgument("the card must be a file (it goes into a ConfigMap byte for byte)"));
  Result<card::WorkloadCard> card = LoadCard(card_path, io);
  if (!card.ok()) return ReportError(io, "k8s render", card.status());
  std::ifstream in(card_path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  o.card_text = text.str();
  o.card_name = card->name;
  Result<int64_t> at = bench::ParseStartAt(start_at.empty() ? "+" + start_delay : start_at, bench::WallNowUnixNs());
  if (!at.ok()) return ReportError(io, "k8s render", at.status().WithContext(start_at.empty() ? "--start-delay" : "--start-at"));
  o.start_at_utc = bench::UnixNsIso8601(*at);
  Result<std::string> yaml = job::RenderK8s(o);
  if (!yaml.ok()) return ReportError(io, "k8s render", yaml.status());
  if (out.empty()) {
    io.out << *yaml;
    return kExitOk;
  }
  if (Status s = job::WriteTextFile(out, *yaml); !s.ok()) return ReportError(io, "k8s render", s);
  io.out << "wrote " << out << " (" << o.shards << " shards, start " << o.start_at_utc << ")\n";
  return kExitOk;
}

}  // namespace infereng::cli
