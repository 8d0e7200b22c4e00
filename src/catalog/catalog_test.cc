#include "catalog/catalog.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/paths.h"

namespace infereng::catalog {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const Catalog& Builtin() {
  static const Catalog c = [] {
    auto r = Catalog::Load();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Catalog();
  }();
  return c;
}

TEST(Catalog, EmbedsEveryRequiredEntry) {
  for (const char* n : {"llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "llama-3.1-405b", "qwen2.5-7b", "qwen2.5-32b", "qwen2.5-72b",
                        "mistral-7b",
                        "mixtral-8x7b", "deepseek-v3"}) {
    EXPECT_TRUE(Builtin().FindModel(n).ok()) << n;
  }
  for (const char* n : {"h100-sxm", "h200", "b200", "a100-80gb", "l4", "l40s", "mi300x", "tpu-v5e"}) {
    auto a = Builtin().FindAccelerator(n);
    ASSERT_TRUE(a.ok()) << n;
    // Every figure that is set has a source.
    for (const char* key : {"memory", "bandwidth", "flops.bf16", "interconnect", "interconnect_latency",
                            "price_per_hour"}) {
      EXPECT_TRUE(a->sources.count(key)) << n << " " << key;
    }
    EXPECT_GT(a->price_per_hour_usd, 0) << n;
  }
}

// Parameter totals computed from the architecture match the published figures (1%).
TEST(Catalog, ParameterCountsMatchPublishedTotals) {
  struct Case { const char* name; double total; double active; };
  for (const Case& c : {Case{"llama-3.1-8b", 8.03e9, 8.03e9}, Case{"llama-3.1-70b", 70.6e9, 70.6e9}, Case{"llama-3.3-70b", 70.6e9, 70.6e9},
                        Case{"llama-3.1-405b", 405.9e9, 405.9e9}, Case{"qwen2.5-7b", 7.61e9, 7.61e9},
                        Case{"qwen2.5-32b", 32.8e9, 32.8e9},
                        Case{"qwen2.5-72b", 72.7e9, 72.7e9}, Case{"mistral-7b", 7.25e9, 7.25e9},
                        Case{"mixtral-8x7b", 46.7e9, 12.9e9}, Case{"deepseek-v3", 671e9, 37e9}}) {
    auto m = Builtin().FindModel(c.name);
    ASSERT_TRUE(m.ok()) << c.name;
    const ParamCounts p = CountParams(*m);
    EXPECT_NEAR(static_cast<double>(p.total), c.total, 0.01 * c.total) << c.name;
    EXPECT_NEAR(static_cast<double>(p.active), c.active, 0.02 * c.active) << c.name;
  }
}

TEST(Catalog, AcceleratorFiguresAreDenseAndInBytes) {
  auto h100 = Builtin().FindAccelerator("H100-SXM");  // case-insensitive
  ASSERT_TRUE(h100.ok());
  EXPECT_DOUBLE_EQ(h100->memory_bytes, 81559.0 * 1024 * 1024);  // MiB, not "80GB"
  EXPECT_DOUBLE_EQ(h100->bandwidth_bytes_per_s, 3.35e12);
  EXPECT_NEAR(h100->flops_bf16, 989.4e12, 1e9);   // dense, not the 1,979 sparse figure
  EXPECT_NEAR(h100->flops_int8, 1978.9e12, 1e9);  // "TOPS" accepted
  EXPECT_DOUBLE_EQ(h100->interconnect_bytes_per_s, 450e9);
  EXPECT_NEAR(h100->interconnect_latency_s, 0.6e-6, 1e-15);  // NCCL's NVLink ring step (data/README.md)
  auto a100 = Builtin().FindAccelerator("a100-80gb");
  ASSERT_TRUE(a100.ok());
  EXPECT_EQ(a100->flops_fp8, 0);  // no FP8 tensor cores
  EXPECT_DOUBLE_EQ(a100->PeakFlops(Precision::kFp8), a100->flops_bf16);
  auto tpu = Builtin().FindAccelerator("tpu-v5e");
  ASSERT_TRUE(tpu.ok());
  EXPECT_DOUBLE_EQ(tpu->memory_bytes, 16.0 * (1 << 30));
}

TEST(Catalog, UnknownNamesListTheKnownOnes) {
  auto m = Builtin().FindModel("llama-9");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Status::Code::kNotFound);
  EXPECT_THAT(m.status().message(), HasSubstr("llama-3.1-8b"));
  auto a = Builtin().FindAccelerator("h300");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("h100-sxm"));
  EXPECT_THAT(a.status().message(), HasSubstr("tpu-v5e"));
}

TEST(Catalog, UnknownNamesSuggestTheClosestOne) {
  auto a = Builtin().FindAccelerator("h100-sxn");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("unknown accelerator \"h100-sxn\" (did you mean \"h100-sxm\"?)"));
  auto m = Builtin().FindModel("llama-3.1-8");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("(did you mean \"llama-3.1-8b\"?)"));
  auto far = Builtin().FindAccelerator("quantum-annealer");
  ASSERT_FALSE(far.ok());
  EXPECT_THAT(far.status().message(), Not(HasSubstr("did you mean")));
}

TEST(Catalog, ResolveModelReadsConfigPaths) {
  auto m = Builtin().ResolveModel(testing::SourceDir() + "/src/catalog/testdata/tiny-llama.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->hidden, 256);
  auto dir = Builtin().ResolveModel(testing::SourceDir() + "/src/catalog/testdata/snapshot");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(dir->name, "snapshot");  // a config.json is named after its directory
  EXPECT_EQ(dir->experts, 4);
  auto by_id = Builtin().ResolveModel("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(by_id->name, "llama-3.1-8b");
  auto missing = Builtin().ResolveModel("no/such/config.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
}

TEST(Catalog, AcceleratorYamlErrorsNameFileLineAndField) {
  auto a = ParseAcceleratorYaml(R"(name: x
memory: {value: 80 gigs, source: "s"}
bandwidth: {value: 1TB/s, source: "s"}
)", "x.yaml");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("x.yaml:2: memory:"));
  auto b = ParseAcceleratorYaml(R"(name: x
memory: {value: 80GB}
)", "y.yaml");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("memory: every figure needs a source"));
  auto c = ParseAcceleratorYaml("name: [unclosed", "z.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("z.yaml:"));
}

TEST(Catalog, DataDirOverridesAndAdds) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("infereng_catalog_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "accelerators");
  {
    std::ofstream f(dir / "accelerators" / "h100-sxm.yaml");
    f << R"(name: h100-sxm
memory: {value: 80GB, source: "test"}
bandwidth: {value: 3TB/s, source: "test"}
flops: {bf16: {value: 900TFLOPS, source: "test"}}
interconnect: {value: 400GB/s, source: "test"}
interconnect_latency: {value: 2us, source: "test"}
price_per_hour: {value: $1/h, source: "test"}
)";
  }
  ::setenv("INFERENG_DATA_DIR", dir.c_str(), 1);
  auto c = Catalog::Load();
  ::unsetenv("INFERENG_DATA_DIR");
  fs::remove_all(dir);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto h = c->FindAccelerator("h100-sxm");
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ(h->memory_bytes, 80e9);  // overridden
  EXPECT_TRUE(c->FindAccelerator("b200").ok());  // embedded ones remain
}

}  // namespace
}  // namespace infereng::catalog
