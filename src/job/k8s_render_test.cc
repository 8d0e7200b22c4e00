#include "job/k8s_render.h"

#include <cstdlib>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace infereng::job {
namespace {

std::vector<YAML::Node> Docs(const std::string& text) {
  std::vector<YAML::Node> out;
  for (const YAML::Node& d : YAML::LoadAll(text)) {
    if (d.IsMap()) out.push_back(d);
  }
  return out;
}

YAML::Node Kind(const std::vector<YAML::Node>& docs, const std::string& kind) {
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() == kind) return d;
  }
  return YAML::Node();
}

K8sRenderOptions Options(const std::string& card_text) {
  K8sRenderOptions o;
  o.card_text = card_text;
  o.card_name = "Chat Assistant!";
  o.target = "http://vllm.default.svc:8000/v1";
  o.shards = 4;
  o.image = "registry.example/infereng:1";
  o.ns = "bench";
  o.api_key_secret = "llm-key";
  o.start_at_utc = "2026-12-02T00:10:00.000Z";
  return o;
}

TEST(K8sRenderTest, IndexedJobWithCardConfigMapSecretRefAndResults) {
  const std::string card = "name: chat\ntraffic:\n  arrival: {process: poisson, rate: 20rps}\n\nslo:\n  ttft: {p99: 500ms}\n";
  auto yaml = RenderK8s(Options(card));
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  std::vector<YAML::Node> docs;
  ASSERT_NO_THROW(docs = Docs(*yaml)) << *yaml;
  ASSERT_EQ(docs.size(), 3u);  // ConfigMap, PersistentVolumeClaim, Job
  const YAML::Node job = Kind(docs, "Job");
  ASSERT_TRUE(job);
  EXPECT_EQ(job["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(job["metadata"]["name"].as<std::string>(), "infereng-chat-assistant");
  EXPECT_EQ(job["metadata"]["namespace"].as<std::string>(), "bench");
  EXPECT_EQ(job["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(job["spec"]["completions"].as<int>(), 4);
  EXPECT_EQ(job["spec"]["parallelism"].as<int>(), 4);
  const YAML::Node pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  const YAML::Node c = pod["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "registry.example/infereng:1");
  std::string args;
  for (const YAML::Node& a : c["args"]) args += a.as<std::string>() + " ";
  EXPECT_NE(args.find("--shard $(JOB_COMPLETION_INDEX)/4 "), std::string::npos) << args;
  EXPECT_NE(args.find("--start-at $(START_AT) "), std::string::npos) << args;
  EXPECT_NE(args.find("--out /results/shard-$(JOB_COMPLETION_INDEX) "), std::string::npos) << args;
  // The completion index comes from the pod's annotation; the key from the Secret, by reference.
  bool index = false, key = false;
  for (const YAML::Node& e : c["env"]) {
    const std::string name = e["name"].as<std::string>();
    if (name == "JOB_COMPLETION_INDEX") {
      index = e["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>().find("job-completion-index") != std::string::npos;
    }
    if (name == "INFERENG_API_KEY") {
      EXPECT_FALSE(e["value"]) << "an API key value inline";
      key = e["valueFrom"]["secretKeyRef"]["name"].as<std::string>() == "llm-key";
    }
  }
  EXPECT_TRUE(index);
  EXPECT_TRUE(key);
  EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "2");
  EXPECT_EQ(c["resources"]["limits"]["memory"].as<std::string>(), "2Gi");
  // The card travels byte for byte (its hash is what the merge checks), with the barrier.
  const YAML::Node cm = Kind(docs, "ConfigMap");
  EXPECT_EQ(cm["data"]["card.yaml"].as<std::string>(), card);
  EXPECT_EQ(cm["data"]["start-at"].as<std::string>(), "2026-12-02T00:10:00.000Z");
  EXPECT_EQ(Kind(docs, "PersistentVolumeClaim")["spec"]["accessModes"][0].as<std::string>(), "ReadWriteMany");
}

TEST(K8sRenderTest, AwkwardCardTextStillRoundTripsExactly) {
  for (const std::string& card : {std::string("name: x\n\n\n"), std::string("name: x"), std::string("name: x   \n\tslo: {}\n"),
                                 std::string("  name: x\n"), std::string("name: \"q\" # \xc3\xa9\r\n")}) {
    auto yaml = RenderK8s(Options(card));
    ASSERT_TRUE(yaml.ok());
    std::vector<YAML::Node> docs;
    ASSERT_NO_THROW(docs = Docs(*yaml)) << *yaml;
    EXPECT_EQ(Kind(docs, "ConfigMap")["data"]["card.yaml"].as<std::string>(), card);
  }
}

TEST(K8sRenderTest, NoSecretValueEverAppears) {
  ::setenv("OPENAI_API_KEY", "sk-test-do-not-leak-0123456789", 1);
  ::setenv("INFERENG_API_KEY", "sk-test-do-not-leak-0123456789", 1);
  auto yaml = RenderK8s(Options("name: chat\n"));
  ::unsetenv("OPENAI_API_KEY");
  ::unsetenv("INFERENG_API_KEY");
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->find("sk-test"), std::string::npos);
  // Without a Secret, no key at all.
  K8sRenderOptions o = Options("name: chat\n");
  o.api_key_secret.clear();
  auto bare = RenderK8s(o);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->find("secretKeyRef"), std::string::npos);
  EXPECT_EQ(bare->find("--api-key"), std::string::npos);
}

TEST(K8sRenderTest, BadInputsAreRefused) {
  K8sRenderOptions o = Options("name: chat\n");
  o.shards = 0;
  EXPECT_FALSE(RenderK8s(o).ok());
  o = Options("name: chat\n");
  o.memory = "2Gi\n  evil: true";
  EXPECT_FALSE(RenderK8s(o).ok());
  o = Options("name: chat\n");
  o.target.clear();
  EXPECT_FALSE(RenderK8s(o).ok());
  EXPECT_EQ(K8sName("---"), "infereng");
}

}  // namespace
}  // namespace infereng::job
