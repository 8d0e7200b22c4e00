#include "catalog/model_spec.h"

namespace infereng::catalog {

namespace {

// Attention parameters of one layer (weights and biases).
int64_t AttentionParamsPerLayer(const ModelSpec& m) {
  const int64_t h = m.hidden;
  if (m.IsMla()) {
    const int64_t qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    int64_t q = 0;
    if (m.q_lora_rank > 0) {
      // q_a_proj, q_a_layernorm (counted in norms), q_b_proj
      q = h * m.q_lora_rank + int64_t{m.q_lora_rank} * m.heads * qk_head;
    } else {
      q = h * m.heads * qk_head;
    }
    const int64_t kv_a = h * (m.kv_lora_rank + m.qk_rope_head_dim);  // kv_a_proj_with_mqa
    const int64_t kv_b = int64_t{m.kv_lora_rank} * m.heads * (m.qk_nope_head_dim + m.v_head_dim);
    const int64_t o = int64_t{m.heads} * m.v_head_dim * h;
    return q + kv_a + kv_b + o;
  }
  const int64_t q_dim = int64_t{m.heads} * m.head_dim;
  const int64_t kv_dim = int64_t{m.kv_heads} * m.head_dim;
  int64_t p = h * q_dim + 2 * h * kv_dim + q_dim * h;
  if (m.attention_bias) p += q_dim + 2 * kv_dim;
  return p;
}

int64_t NormParamsPerLayer(const ModelSpec& m) {
  int64_t n = 2 * int64_t{m.hidden};  // input + post-attention RMSNorm
  if (m.IsMla()) n += m.kv_lora_rank + (m.q_lora_rank > 0 ? m.q_lora_rank : 0);
  return n;
}

}  // namespace

ParamCounts CountParams(const ModelSpec& m) {
  ParamCounts c;
  const int64_t h = m.hidden;
  c.embedding = m.vocab * h;
  c.lm_head = m.tie_embeddings ? 0 : m.vocab * h;
  c.attention = AttentionParamsPerLayer(m) * m.layers;
  c.norms = NormParamsPerLayer(m) * m.layers + h;  // + final norm
  const int dense_layers = m.IsMoe() ? m.dense_layers : m.layers;
  c.dense_mlp = 3 * h * m.intermediate * dense_layers;
  if (m.IsMoe()) {
    const int64_t moe_layers = m.MoeLayers();
    c.per_expert = 3 * h * m.expert_intermediate;
    c.routed_experts = c.per_expert * m.experts * moe_layers;
    c.shared_experts = c.per_expert * m.shared_experts * moe_layers;
    c.router = h * m.experts * moe_layers;
  }
  c.total = c.embedding + c.lm_head + c.attention + c.norms + c.dense_mlp + c.routed_experts +
            c.shared_experts + c.router;
  c.active = c.total - c.routed_experts;
  if (m.IsMoe()) c.active += c.per_expert * m.experts_per_token * m.MoeLayers();
  return c;
}

int64_t KvElementsPerToken(const ModelSpec& m) {
  if (m.IsMla()) return int64_t{m.layers} * (m.kv_lora_rank + m.qk_rope_head_dim);
  return 2 * int64_t{m.layers} * m.kv_heads * m.head_dim;
}

}  // namespace infereng::catalog
