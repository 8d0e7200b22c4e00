// `infereng accelerators`: the built-in accelerator catalog with key figures and sources.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "cli/cli_util.h"

namespace infereng::cli {

int RunAccelerators(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("List the accelerator catalog (memory, bandwidth, dense FLOPS, link, price)", argv[0]);
  bool json = false, sources = false;
  app.add_flag("--json", json, "print JSON (with every figure's source)");
  app.add_flag("--sources", sources, "print every figure's source under the table");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  const auto& cat = catalog::Catalog::Default();
  if (!cat.ok()) return ReportError(io, "accelerators", cat.status());
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : cat->accelerators()) {
      a.push_back({{"name", x.name}, {"display_name", x.display_name}, {"vendor", x.vendor},
                   {"memory_bytes", x.memory_bytes}, {"bandwidth_bytes_per_s", x.bandwidth_bytes_per_s},
                   {"flops_bf16", x.flops_bf16}, {"flops_fp8", x.flops_fp8}, {"flops_int8", x.flops_int8},
                   {"flops_fp4", x.flops_fp4}, {"interconnect", x.interconnect_name},
                   {"interconnect_bytes_per_s", x.interconnect_bytes_per_s},
                   {"interconnect_latency_s", x.interconnect_latency_s}, {"price_per_hour_usd", x.price_per_hour_usd},
                   {"sources", x.sources}});
    }
    io.out << a.dump(2) << "\n";
    return 0;
  }
  auto tf = [](double f) { return f > 0 ? fmt::format("{:.0f}", f / 1e12) : std::string("-"); };
  io.out << fmt::format("{:<10} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8}  {:<24} {:>6}\n", "NAME", "MEMORY", "(GiB)",
                        "BW TB/s", "BF16 TF", "FP8 TF", "INT8 TO", "FP4 TF", "LINK (each way)", "$/h");
  for (const auto& x : cat->accelerators()) {
    io.out << fmt::format("{:<10} {:>7.1f}GB {:>8.1f} {:>9.3f} {:>8} {:>8} {:>8} {:>8}  {:<24} {:>6.2f}\n", x.name,
                          x.memory_bytes / 1e9, x.memory_bytes / (1024.0 * 1024 * 1024), x.bandwidth_bytes_per_s / 1e12,
                          tf(x.flops_bf16), tf(x.flops_fp8), tf(x.flops_int8), tf(x.flops_fp4),
                          fmt::format("{} {:.0f}GB/s", x.interconnect_name, x.interconnect_bytes_per_s / 1e9),
                          x.price_per_hour_usd);
  }
  io.out << "\nDense figures (no 2:4 sparsity). Memory is what the runtime reports (GB = 1e9 B, GiB = 2^30 B).\n"
            "Prices are defaults; override with `fit --price-per-hour` or a card's deployment.price_per_hour.\n";
  if (sources) {
    for (const auto& x : cat->accelerators()) {
      io.out << "\n" << x.name << "\n";
      for (const auto& [k, v] : x.sources) io.out << "  " << k << ": " << v << "\n";
    }
  }
  return 0;
}

}  // namespace infereng::cli
