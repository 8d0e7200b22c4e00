#include "catalog/hf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/paths.h"

namespace infereng::catalog {
namespace {

using ::testing::HasSubstr;

std::string Testdata(const std::string& name) {
  return testing::SourceDir() + "/src/catalog/testdata/" + name;
}

TEST(HfConfig, LoadsLlamaWithDefaultsAndCountsParams) {
  auto m = LoadHfConfigFile(Testdata("tiny-llama.json"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "tiny-llama");
  EXPECT_EQ(m->family, "llama");
  EXPECT_EQ(m->head_dim, 32);  // hidden / heads when head_dim is absent
  EXPECT_EQ(m->kv_heads, 2);
  EXPECT_TRUE(m->tie_embeddings);
  EXPECT_EQ(m->hf_id, "example/tiny-llama");
  const ParamCounts p = CountParams(*m);
  // embedding 256,000 + attention 4 x 163,840 + MLP 4 x 528,384 + norms 2,304; LM head tied.
  EXPECT_EQ(p.lm_head, 0);
  EXPECT_EQ(p.total, 3'027'200);
  EXPECT_EQ(p.active, p.total);
  EXPECT_EQ(KvElementsPerToken(*m), 2 * 4 * 2 * 32);
}

TEST(HfConfig, LoadsDeepSeekMlaAndMoe) {
  auto m = LoadHfConfigFile(Testdata("tiny-deepseek.json"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->IsMla());
  EXPECT_TRUE(m->IsMoe());
  EXPECT_EQ(m->q_lora_rank, 0);  // null in the file
  EXPECT_EQ(m->MoeLayers(), 3);
  EXPECT_EQ(m->default_precision, "fp8");  // from quantization_config
  const ParamCounts p = CountParams(*m);
  EXPECT_EQ(p.per_expert, 3 * 512 * 128);
  EXPECT_EQ(p.routed_experts, 196'608LL * 16 * 3);
  EXPECT_EQ(p.total, 15'282'944);
  EXPECT_EQ(p.active, 8'205'056);
  EXPECT_EQ(KvElementsPerToken(*m), 4 * (64 + 16));
}

TEST(HfConfig, LoadsMixtralExpertsUseIntermediateSize) {
  auto m = LoadHfConfigFile(Testdata("tiny-mixtral.json"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->experts, 4);
  EXPECT_EQ(m->expert_intermediate, 256);
  EXPECT_EQ(m->dense_layers, 0);
  const ParamCounts p = CountParams(*m);
  EXPECT_EQ(p.dense_mlp, 0);
  EXPECT_EQ(p.routed_experts, 3LL * 128 * 256 * 4 * 2);
}

TEST(HfConfig, BadJsonNamesTheFile) {
  auto m = LoadHfConfigFile(Testdata("bad-syntax.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(m.status().message(), HasSubstr("bad-syntax.json"));
  EXPECT_THAT(m.status().message(), HasSubstr("not valid JSON"));
}

TEST(HfConfig, MissingKeyNamesFileAndKey) {
  auto m = LoadHfConfigFile(Testdata("missing-layers.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("missing-layers.json"));
  EXPECT_THAT(m.status().message(), HasSubstr("\"num_hidden_layers\""));
}

TEST(HfConfig, WrongTypeNamesKeyAndValue) {
  auto m = ParseHfConfig(R"({"model_type":"llama","num_hidden_layers":"x","hidden_size":64,
      "num_attention_heads":4,"intermediate_size":128,"vocab_size":10})", "cfg.json");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("cfg.json: key \"num_hidden_layers\": expected a positive integer, got \"x\""));
}

TEST(HfConfig, RejectsUnsupportedTypeAndInconsistentHeads) {
  auto a = ParseHfConfig(R"({"model_type":"gpt2"})", "g.json");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("unsupported model_type \"gpt2\""));
  auto b = ParseHfConfig(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
      "num_attention_heads":4,"num_key_value_heads":3,"intermediate_size":128,"vocab_size":10})", "h.json");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("num_key_value_heads 3"));
  auto c = ParseHfConfig(R"([1,2])", "top.json");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("top.json"));
}

TEST(HfConfig, RejectsImplausibleSizesInsteadOfOverflowing) {
  auto a = ParseHfConfig(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
      "num_attention_heads":4,"intermediate_size":99999999999999,"vocab_size":10})", "big.json");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("big.json: key \"intermediate_size\""));
  auto b = ParseHfConfig(R"({"model_type":"llama","num_hidden_layers":90000000,"hidden_size":90000000,
      "num_attention_heads":90000000,"intermediate_size":90000000,"vocab_size":90000000})", "huge.json");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("implausible"));
  auto c = ParseHfConfig(R"({"model_type":"llama","num_hidden_layers":2.5,"hidden_size":64,
      "num_attention_heads":4,"intermediate_size":128,"vocab_size":10})", "frac.json");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("num_hidden_layers"));
}

TEST(HfConfig, MissingFileIsNotFound) {
  auto m = LoadHfConfigFile("/nonexistent/dir/config.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr("/nonexistent/dir/config.json"));
}

}  // namespace
}  // namespace infereng::catalog
