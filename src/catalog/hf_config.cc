#include "catalog/hf_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace infereng::catalog {

namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(const json& j, std::string_view origin, std::string type)
      : j_(j), origin_(origin), type_(std::move(type)) {}

  // A positive (or, with allow_zero, non-negative) integer. Missing or null: `fallback`
  // when given, else an error.
  Result<int64_t> Int(const char* key, std::optional<int64_t> fallback = std::nullopt,
                      bool allow_zero = false) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (fallback) return *fallback;
      return Status::InvalidArgument(std::string(origin_) + ": missing required key \"" + key +
                                     "\" (model_type " + type_ + ")");
    }
    const bool integral =
        it->is_number_integer() || (it->is_number_float() && std::fabs(it->get<double>()) < 9e15 &&
                                    std::floor(it->get<double>()) == it->get<double>());
    if (!integral) {
      return Status::InvalidArgument(std::string(origin_) + ": key \"" + key +
                                     "\": expected a positive integer, got " + it->dump());
    }
    const int64_t v = it->is_number_integer() ? it->get<int64_t>() : static_cast<int64_t>(it->get<double>());
    // Bounds keep every product in CountParams inside int64 (and reject typos).
    const int64_t max = std::string_view(key) == "max_position_embeddings" ? int64_t{1} << 40 : 100'000'000;
    if (v > max) {
      return Status::InvalidArgument(std::string(origin_) + ": key \"" + key + "\": " + std::to_string(v) +
                                     " is implausibly large (at most " + std::to_string(max) + ")");
    }
    if (v < 0 || (v == 0 && !allow_zero)) {
      return Status::InvalidArgument(std::string(origin_) + ": key \"" + key +
                                     "\": expected a positive integer, got " + it->dump());
    }
    return v;
  }

  Result<bool> Bool(const char* key, bool fallback) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) {
      return Status::InvalidArgument(std::string(origin_) + ": key \"" + key +
                                     "\": expected true or false, got " + it->dump());
    }
    return it->get<bool>();
  }

  Status Error(const std::string& msg) const {
    return Status::InvalidArgument(std::string(origin_) + ": " + msg);
  }

 private:
  const json& j_;
  std::string_view origin_;
  std::string type_;
};

#define ASSIGN_INT(field, ...) \
  do { INFERENG_ASSIGN_OR_RETURN(auto _v, r.Int(__VA_ARGS__)); field = static_cast<decltype(field)>(_v); } while (0)

}  // namespace

Result<ModelSpec> ParseHfConfigJson(const json& config, std::string_view origin) {
  if (!config.is_object()) {
    return Status::InvalidArgument(std::string(origin) + ": expected a JSON object at the top level");
  }
  auto type_it = config.find("model_type");
  if (type_it == config.end() || !type_it->is_string()) {
    return Status::InvalidArgument(std::string(origin) +
                                   ": missing required key \"model_type\" (a string such as \"llama\")");
  }
  const std::string type = type_it->get<std::string>();
  const bool dense_family = type == "llama" || type == "qwen2" || type == "mistral";
  const bool mixtral = type == "mixtral";
  const bool deepseek = type == "deepseek_v3" || type == "deepseek_v2";
  if (!dense_family && !mixtral && !deepseek) {
    return Status::InvalidArgument(std::string(origin) + ": unsupported model_type \"" + type +
                                   "\" (supported: llama, qwen2, mistral, mixtral, deepseek_v3)");
  }
  Reader r(config, origin, type);
  ModelSpec m;
  m.family = type;
  ASSIGN_INT(m.layers, "num_hidden_layers");
  ASSIGN_INT(m.hidden, "hidden_size");
  ASSIGN_INT(m.heads, "num_attention_heads");
  ASSIGN_INT(m.kv_heads, "num_key_value_heads", m.heads);
  ASSIGN_INT(m.intermediate, "intermediate_size");
  ASSIGN_INT(m.vocab, "vocab_size");
  ASSIGN_INT(m.max_context, "max_position_embeddings", 0, true);
  INFERENG_ASSIGN_OR_RETURN(m.tie_embeddings, r.Bool("tie_word_embeddings", false));
  INFERENG_ASSIGN_OR_RETURN(m.attention_bias, r.Bool("attention_bias", type == "qwen2"));
  if (m.hidden % m.heads != 0 && !config.contains("head_dim")) {
    return r.Error("hidden_size " + std::to_string(m.hidden) + " is not a multiple of num_attention_heads " +
                   std::to_string(m.heads) + " and no \"head_dim\" is given");
  }
  ASSIGN_INT(m.head_dim, "head_dim", m.hidden / m.heads);
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    return r.Error("num_key_value_heads " + std::to_string(m.kv_heads) +
                   " must divide num_attention_heads " + std::to_string(m.heads));
  }
  if (mixtral) {
    ASSIGN_INT(m.experts, "num_local_experts");
    ASSIGN_INT(m.experts_per_token, "num_experts_per_tok");
    m.expert_intermediate = m.intermediate;
  }
  if (deepseek) {
    ASSIGN_INT(m.experts, "n_routed_experts");
    ASSIGN_INT(m.experts_per_token, "num_experts_per_tok");
    ASSIGN_INT(m.shared_experts, "n_shared_experts", 0, true);
    ASSIGN_INT(m.expert_intermediate, "moe_intermediate_size");
    ASSIGN_INT(m.dense_layers, "first_k_dense_replace", 0, true);
    ASSIGN_INT(m.kv_lora_rank, "kv_lora_rank");
    ASSIGN_INT(m.q_lora_rank, "q_lora_rank", 0, true);
    ASSIGN_INT(m.qk_rope_head_dim, "qk_rope_head_dim");
    ASSIGN_INT(m.qk_nope_head_dim, "qk_nope_head_dim");
    ASSIGN_INT(m.v_head_dim, "v_head_dim");
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    INFERENG_ASSIGN_OR_RETURN(int64_t freq, r.Int("moe_layer_freq", 1));
    if (freq != 1) return r.Error("moe_layer_freq " + std::to_string(freq) + " is not supported (only 1)");
    if (m.dense_layers >= m.layers) {
      return r.Error("first_k_dense_replace " + std::to_string(m.dense_layers) +
                     " must be below num_hidden_layers " + std::to_string(m.layers));
    }
  }
  if (m.IsMoe() && m.experts_per_token > m.experts) {
    return r.Error("num_experts_per_tok " + std::to_string(m.experts_per_token) +
                   " exceeds the number of experts " + std::to_string(m.experts));
  }
  // A double-precision size check, so absurd-but-bounded figures cannot overflow the
  // integer parameter counts: nothing real is near 1e15 parameters.
  {
    const double h = m.hidden, L = m.layers;
    const double attn = h * (m.heads + 2.0 * m.kv_heads) * m.head_dim * 2 +
                        h * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) +
                        (static_cast<double>(m.q_lora_rank) + m.kv_lora_rank) * m.heads *
                            (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
    const double mlp = 3 * h * (static_cast<double>(m.intermediate) +
                                static_cast<double>(m.experts + m.shared_experts) * m.expert_intermediate);
    const double estimate = L * (attn + mlp + h * m.experts) + 2 * h * static_cast<double>(m.vocab);
    if (estimate > 1e15) {
      return r.Error("the architecture implies ~" + std::to_string(estimate) + " parameters (implausible)");
    }
  }
  if (auto dt = config.find("torch_dtype"); dt != config.end() && dt->is_string()) {
    const std::string s = dt->get<std::string>();
    if (s == "float8_e4m3fn") m.default_precision = "fp8";
  }
  if (auto q = config.find("quantization_config"); q != config.end() && q->is_object()) {
    auto method = q->find("quant_method");
    if (method != q->end() && method->is_string() && method->get<std::string>() == "fp8") {
      m.default_precision = "fp8";
    }
  }
  if (auto n = config.find("_name_or_path"); n != config.end() && n->is_string()) {
    m.hf_id = n->get<std::string>();
  }
  m.source = std::string(origin);
  return m;
}

Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view origin) {
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    return Status::InvalidArgument(std::string(origin) + ": not valid JSON: " + e.what());
  }
  return ParseHfConfigJson(j, origin);
}

Result<ModelSpec> LoadHfConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": cannot read the model config (no such file?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  INFERENG_ASSIGN_OR_RETURN(ModelSpec m, ParseHfConfig(ss.str(), path));
  const std::filesystem::path p(path);
  std::string name = p.parent_path().filename().string();
  if (name.empty() || name == "." || p.stem() != "config") name = p.stem().string();
  m.name = name;
  if (m.display_name.empty()) m.display_name = name;
  return m;
}

}  // namespace infereng::catalog
