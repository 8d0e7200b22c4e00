// `infereng k8s render`: the Kubernetes manifests that run one card's bench as N shards
// (bench --shard K/N, bench/shard.h) — an Indexed Job whose completion index is the shard
// K, the card in a ConfigMap (byte for byte: the shards' card hash is the file's), the API
// key from a Secret by reference only (this code never takes a key's value), resource
// requests, a start-time barrier (one --start-at for every pod, in the ConfigMap) and a
// results volume each shard writes its run directory to. The collect-and-merge commands
// ride along as YAML comments (docs/scale-out.md).
#pragma once

#include <string>

#include "core/status.h"

namespace infereng::job {

struct K8sRenderOptions {
  std::string card_text;     // the card file's bytes
  std::string card_name;     // for object names
  std::string target;        // the engine's URL as the pods reach it
  int shards = 1;
  std::string image;         // container image with infereng on PATH
  std::string ns = "default";
  std::string api_key_secret;          // Secret name ("" = no key)
  std::string api_key_secret_key = "api-key";
  std::string cpu = "2", memory = "2Gi";  // requests per pod (memory also the limit)
  std::string start_at_utc;  // the shared start, "2026-12-02T00:10:00Z"
  std::string results_pvc;   // an existing claim ("" = render one)
  std::string storage = "5Gi";  // size of the rendered claim
  std::string extra_args;    // "" or bench flags appended verbatim (split on spaces)
};

// The manifests as one multi-document YAML text. InvalidArgument for a bad name or count.
Result<std::string> RenderK8s(const K8sRenderOptions& options);

// "infereng-chat-agent": a DNS-1123 label from the card's name.
std::string K8sName(const std::string& card_name);

}  // namespace infereng::job
