#include "cli/cli_util.h"

#include <filesystem>
#include <sstream>

#include "card/card_parser.h"
#include "catalog/catalog.h"
#include "cli/exit_codes.h"
#include "core/units.h"
#include "twin/card_check.h"

namespace infereng::cli {
namespace {

// Fills each option's default text from its variable, for --help.
void CaptureDefaults(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() == 0) continue;  // flags
    opt->capture_default_str();
    if (opt->get_default_str() == "[]") opt->default_str("");  // an empty repeatable option
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) CaptureDefaults(*sub);
}

// A CLI11 validator over the option's number: "" when `ok(v)`, else "must be WHAT, got V".
CLI::Validator NumberCheck(std::function<bool(double)> ok, const std::string& what) {
  return CLI::Validator(
      [ok = std::move(ok), what](std::string& text) -> std::string {
        auto v = units::ParseNumber(text);
        if (!v.ok()) return "expected a number, got \"" + text + "\"";
        return ok(*v) ? std::string() : "must be " + what + ", got " + text;
      },
      "");  // no description: --help reads "--tp INT=1", not "INT:>= 1=1"
}

Result<card::WorkloadCard> ReadStdinCard(CommandIo& io) {
  if (io.in == nullptr) return Status::InvalidArgument("cannot read a card from standard input here");
  std::ostringstream text;
  text << io.in->rdbuf();
  return card::ParseCard(text.str(), "<stdin>");
}

}  // namespace

int ParseArgs(CLI::App& app, int argc, const char* const* argv, CommandIo& io) {
  CaptureDefaults(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    io.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    io.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    io.err << app.get_name() << ": error: " << e.what() << "\n"
           << "Run '" << app.get_name() << " --help' for usage.\n";
    return kExitUsage;
  }
  return -1;
}

int ReportError(CommandIo& io, std::string_view command, const Status& status) {
  io.err << "infereng " << command << ": error: " << status.ToString() << "\n";
  return ExitCodeFor(status);
}

Result<card::WorkloadCard> LoadCard(const std::string& path, CommandIo& io) {
  Result<card::WorkloadCard> card = path == "-" ? ReadStdinCard(io) : card::LoadCardFile(path);
  if (!card.ok()) return card.status();
  const Result<catalog::Catalog>& cat = catalog::Catalog::Default();
  if (!cat.ok()) return cat.status();
  INFERENG_RETURN_IF_ERROR(twin::CheckCard(*card, *cat));
  return card;
}

Status CheckInputFile(std::string_view flag, const std::string& path) {
  if (path.empty()) return Status::Ok();
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return Status::NotFound(std::string(flag) + ": " + path + ": no such file");
  if (std::filesystem::is_directory(st)) {
    return Status::InvalidArgument(std::string(flag) + ": " + path + " is a directory, not a file");
  }
  return Status::Ok();
}

CLI::Validator AtLeast(double lo) {
  return NumberCheck([lo](double v) { return v >= lo; }, ">= " + units::FormatNumber(lo));
}

CLI::Validator Positive() {
  return NumberCheck([](double v) { return v > 0; }, "> 0");
}

CLI::Validator InRange(double lo, double hi) {
  return NumberCheck([lo, hi](double v) { return v >= lo && v <= hi; },
                     "between " + units::FormatNumber(lo) + " and " + units::FormatNumber(hi));
}

}  // namespace infereng::cli
