// `infereng models`: the built-in model catalog with key figures (or one model in detail).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "cli/cli_util.h"
#include "fit/memory_plan.h"

namespace infereng::cli {

namespace {

nlohmann::json ModelJson(const catalog::ModelSpec& m) {
  const catalog::ParamCounts p = catalog::CountParams(m);
  nlohmann::json j = {{"name", m.name}, {"display_name", m.display_name}, {"family", m.family}, {"hf_id", m.hf_id},
                      {"source", m.source}, {"default_precision", m.default_precision},
                      {"params_total", p.total}, {"params_active", p.active}, {"layers", m.layers},
                      {"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"head_dim", m.head_dim},
                      {"intermediate", m.intermediate}, {"vocab", m.vocab}, {"max_context", m.max_context},
                      {"kv_bytes_per_token_bf16", catalog::KvElementsPerToken(m) * 2}};
  if (m.IsMoe()) {
    j["moe"] = {{"experts", m.experts}, {"experts_per_token", m.experts_per_token},
                {"shared_experts", m.shared_experts}, {"expert_intermediate", m.expert_intermediate},
                {"dense_layers", m.dense_layers}};
  }
  if (m.IsMla()) {
    j["mla"] = {{"kv_lora_rank", m.kv_lora_rank}, {"q_lora_rank", m.q_lora_rank},
                {"qk_rope_head_dim", m.qk_rope_head_dim}, {"qk_nope_head_dim", m.qk_nope_head_dim},
                {"v_head_dim", m.v_head_dim}};
  }
  return j;
}

}  // namespace

int RunModels(int argc, const char* const* argv, CommandIo& io) {
  CLI::App app("List the model catalog (parameters, attention, KV bytes per token)", argv[0]);
  bool json = false;
  app.add_flag("--json", json, "print JSON");
  if (int rc = ParseArgs(app, argc, argv, io); rc >= 0) return rc;
  const auto& cat = catalog::Catalog::Default();
  if (!cat.ok()) return ReportError(io, "models", cat.status());
  if (json) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& m : cat->models()) a.push_back(ModelJson(m));
    io.out << a.dump(2) << "\n";
    return 0;
  }
  io.out << fmt::format("{:<16} {:>9} {:>9} {:>6} {:>7} {:>9} {:>12} {:>8}  {}\n", "NAME", "PARAMS", "ACTIVE", "LAYERS",
                        "HEADS", "KV HEADS", "KV B/TOKEN", "CONTEXT", "ATTENTION / EXPERTS");
  for (const auto& m : cat->models()) {
    const catalog::ParamCounts p = catalog::CountParams(m);
    std::string kind = m.IsMla() ? fmt::format("MLA (latent {} + rope {})", m.kv_lora_rank, m.qk_rope_head_dim)
                                 : (m.kv_heads == m.heads ? "MHA" : (m.kv_heads == 1 ? "MQA" : "GQA"));
    if (m.IsMoe()) {
      kind += fmt::format(", MoE {} of {}{}", m.experts_per_token, m.experts,
                          m.shared_experts ? fmt::format(" + {} shared", m.shared_experts) : "");
    }
    io.out << fmt::format("{:<16} {:>8.2f}B {:>8.2f}B {:>6} {:>7} {:>9} {:>12} {:>8}  {}\n", m.name, p.total / 1e9,
                          p.active / 1e9, m.layers, m.heads, m.kv_heads, catalog::KvElementsPerToken(m) * 2,
                          m.max_context, kind);
  }
  io.out << "\nKV B/TOKEN is BF16, whole model. `infereng fit --model NAME|config.json ...` plans memory.\n";
  return 0;
}

}  // namespace infereng::cli
