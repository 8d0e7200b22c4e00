// `infereng card init|check`: write a commented workload-card template; validate a card
// (the same validation every command runs on --card) and list the seed's workload
// assumptions and missing measurements.
#include <filesystem>
#include <fstream>

#include "card/card_parser.h"
#include "card/gaps.h"
#include "card/slo.h"
#include "card/templates.h"
#include "cli/cli_util.h"
#include "cli/exit_codes.h"

namespace infereng::cli {
namespace {

int RunInit(CommandIo& io, const std::string& template_name, const std::string& out, bool force) {
  const card::CardTemplate* t = card::FindCardTemplate(template_name);
  if (t == nullptr) {
    std::string names;
    for (const auto& c : card::CardTemplates()) names += (names.empty() ? "" : ", ") + std::string(c.name);
    return ReportError(io, "card init",
                       Status::InvalidArgument("unknown template \"" + template_name + "\"; expected one of " + names));
  }
  if (out.empty() || out == "-") {
    io.out << t->yaml;
    return kExitOk;
  }
  std::error_code ec;
  if (std::filesystem::exists(out, ec) && !force) {
    return ReportError(io, "card init", Status::FailedPrecondition(out + " exists; pass --force to overwrite"));
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << t->yaml;
  f.close();
  if (!f) return ReportError(io, "card init", Status::IoError("cannot write " + out));
  io.out << "wrote " << out << " (" << t->name << ": " << t->summary << ")\n"
         << "next: edit it, then `infereng card check " << out << "`\n";
  return kExitOk;
}

// The same validation every command runs on --card (cli::LoadCard); "-" reads stdin.
int RunCheck(CommandIo& io, const std::string& path_arg) {
  auto card = LoadCard(path_arg, io);
  if (!card.ok()) {
    io.err << "infereng card check: error: " << card.status().message() << "\n";
    return ExitCodeFor(card.status());
  }
  const std::string path = path_arg == "-" ? "<stdin>" : path_arg;
  io.out << path << ": valid card \"" << card->name << "\" (sha256 " << card->content_hash.substr(0, 12) << ")\n";
  // How the SLOs will be judged, and where the card leaves it ambiguous (card/slo.h).
  if (!card->slo.latency.empty() || !card->slo.goodput.empty()) {
    io.out << "goodput thresholds (per request): "
           << card::DescribeGoodputThresholds(card::GoodputThresholds(card->slo)) << "\n";
  }
  for (const std::string& w : card::SloAmbiguities(*card)) io.out << "  warning  " << w << "\n";
  // What each image costs the model, by its rule (card/vision.h); the card validated it.
  if (card->traffic.images && card->model.vision) {
    const card::ImagesSpec& im = *card->traffic.images;
    if (Result<card::ImageCost> c = card::ImageCostFor(*card->model.vision, im.width, im.height); c.ok()) {
      io.out << "images: each " << im.width << "x" << im.height << " image is " << c->tokens << " prompt tokens ("
             << c->patches << " encoder patches at " << c->resized_width << "x" << c->resized_height << ")\n";
    }
  }
  const std::vector<card::Gap> gaps = card::FindGaps(*card);
  if (gaps.empty()) {
    io.out << "\nNo workload assumptions or missing measurements.\n";
    return kExitOk;
  }
  std::size_t assumed = 0;
  for (const auto& g : gaps) assumed += g.kind == card::Gap::Kind::kAssumed;
  io.out << "\nWorkload assumptions and missing measurements (" << assumed << " assumed, " << gaps.size() - assumed
         << " missing):\n";
  for (const auto& g : gaps) {
    if (g.kind == card::Gap::Kind::kAssumed) {
      io.out << "  assumed  " << g.path << " (" << path << ":" << g.line << "): " << g.why << "\n";
    } else {
      io.out << "  missing  " << g.path << ": " << g.why << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

int RunCard(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("Write a workload-card template, or validate a card and list its assumptions", argv[0]);
  app.require_subcommand(1);
  std::string template_name = "chat", out, check_path;
  bool force = false;
  CLI::App* init = app.add_subcommand("init", "Write a commented card template (stdout unless --out)");
  init->add_option("--template,-t", template_name, "chat | batch | agent")->capture_default_str();
  init->add_option("--out,-o", out, "file to write (default: stdout)");
  init->add_flag("--force", force, "overwrite --out if it exists");
  CLI::App* check = app.add_subcommand(
      "check", "Validate a card (exit 2 on error) and list workload assumptions and missing measurements");
  check->add_option("file", check_path, "card file (YAML); - reads standard input")->required();
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  if (init->parsed()) return RunInit(io, template_name, out, force);
  return RunCheck(io, check_path);
}

}  // namespace infereng::cli
