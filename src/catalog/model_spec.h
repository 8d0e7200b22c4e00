// ModelSpec: the architecture figures of a decoder-only transformer that fit, roofline
// and the twin need (dense, GQA, MoE and DeepSeek MLA), plus derived parameter counts.
//
// Figures come from the model's Hugging Face config.json (catalog/hf_config.h), so every
// field names its HF key in a comment. `source` says where the figures were read from
// (a pinned URL for catalog entries, a file path for --model config.json).
// Parameter counts are computed from the architecture, not copied from a model card, so a
// crafted config gets honest numbers; tests pin them against the published totals.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace infereng::catalog {

struct ModelSpec {
  std::string name;          // catalog name, e.g. "llama-3.1-8b"; file stem for configs
  std::string display_name;  // e.g. "Llama 3.1 8B"
  std::string family;        // HF model_type: llama | qwen2 | mistral | mixtral | deepseek_v3
  std::string hf_id;         // e.g. "meta-llama/Llama-3.1-8B-Instruct"
  std::string source;        // where the figures come from (URL or file path)
  std::string default_precision = "bf16";  // precision the checkpoint ships in

  int layers = 0;            // num_hidden_layers
  int hidden = 0;            // hidden_size
  int heads = 0;             // num_attention_heads
  int kv_heads = 0;          // num_key_value_heads (= heads for MHA, 1 for MQA)
  int head_dim = 0;          // head_dim, else hidden / heads
  int64_t intermediate = 0;  // intermediate_size (dense MLP)
  int64_t vocab = 0;         // vocab_size
  int64_t max_context = 0;   // max_position_embeddings
  bool tie_embeddings = false;  // tie_word_embeddings: LM head shares the embedding
  bool attention_bias = false;  // q/k/v projections carry a bias (qwen2)

  // Mixture of experts (0 experts = dense). Dense layers come first (DeepSeek's
  // first_k_dense_replace); the other layers route each token to `experts_per_token`
  // of `experts` routed experts plus `shared_experts` always-on experts.
  int experts = 0;             // num_local_experts (mixtral) / n_routed_experts (deepseek)
  int experts_per_token = 0;   // num_experts_per_tok
  int shared_experts = 0;      // n_shared_experts
  int64_t expert_intermediate = 0;  // moe_intermediate_size (mixtral: intermediate_size)
  int dense_layers = 0;        // first_k_dense_replace

  // Multi-head latent attention (DeepSeek-V2/V3); kv_lora_rank 0 = standard attention.
  int q_lora_rank = 0;         // q_lora_rank (0 = plain q projection)
  int kv_lora_rank = 0;        // kv_lora_rank: the cached latent per token and layer
  int qk_rope_head_dim = 0;    // qk_rope_head_dim: the cached decoupled RoPE key
  int qk_nope_head_dim = 0;    // qk_nope_head_dim
  int v_head_dim = 0;          // v_head_dim

  bool IsMoe() const { return experts > 0; }
  bool IsMla() const { return kv_lora_rank > 0; }
  int MoeLayers() const { return IsMoe() ? layers - dense_layers : 0; }
};

// Parameter counts by group (norm weights are counted in `norms`; biases with their
// projection). `active` = what one token multiplies through: everything except the routed
// experts it does not visit (embedding included, as published totals do).
struct ParamCounts {
  int64_t embedding = 0;       // vocab x hidden
  int64_t lm_head = 0;         // vocab x hidden; 0 when tied
  int64_t attention = 0;       // all layers: q/k/v/o (or MLA's low-rank projections)
  int64_t dense_mlp = 0;       // dense layers' MLP (all layers for a dense model)
  int64_t routed_experts = 0;  // all routed experts of all MoE layers
  int64_t shared_experts = 0;  // shared experts of all MoE layers
  int64_t router = 0;          // gate projections
  int64_t norms = 0;           // RMSNorm weights (incl. MLA's latent norms and the final norm)
  int64_t total = 0;
  int64_t active = 0;          // per token
  int64_t per_expert = 0;      // one routed expert in one layer (3 x hidden x expert_inter)
};

ParamCounts CountParams(const ModelSpec& m);

// KV-cache elements per token summed over layers, before any parallelism:
//   MHA/GQA/MQA: 2 * layers * kv_heads * head_dim; MLA: layers * (kv_lora_rank + rope dim).
int64_t KvElementsPerToken(const ModelSpec& m);

}  // namespace infereng::catalog
