#include "job/k8s_render.h"

#include <cctype>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/shard.h"

namespace infereng::job {
namespace {

// A YAML double-quoted scalar (a JSON string is one): safe for any user text.
std::string Q(const std::string& s) { return nlohmann::json(s).dump(); }

// Whether `text` survives a YAML literal block ("|") byte for byte.
bool LiteralSafe(const std::string& text) {
  if (text.empty() || text.back() != '\n' || (text.size() > 1 && text[text.size() - 2] == '\n')) return false;
  if (text[0] == ' ' || text[0] == '\n') return false;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\r' || c == '\t' || (c < 0x20 && c != '\n')) return false;
    if (c == '\n') {
      if (i > line_start && text[i - 1] == ' ') return false;
      line_start = i + 1;
    }
  }
  return true;
}

std::string CardScalar(const std::string& text, const std::string& indent) {
  if (!LiteralSafe(text)) return Q(text);
  std::string out = "|\n";
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out += line.empty() ? "\n" : indent + line + "\n";
  out.pop_back();  // the caller ends the line
  return out;
}

bool ValidQuantity(const std::string& q) {
  if (q.empty() || q.size() > 16) return false;
  for (char c : q) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return std::isdigit(static_cast<unsigned char>(q[0])) != 0;
}

}  // namespace

std::string K8sName(const std::string& card_name) {
  std::string n = "infereng-";
  for (char c : card_name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      n += static_cast<char>(std::tolower(u));
    } else if (n.back() != '-') {
      n += '-';
    }
  }
  if (n.size() > 40) n.resize(40);
  while (n.back() == '-') n.pop_back();
  return n;
}

Result<std::string> RenderK8s(const K8sRenderOptions& o) {
  if (o.shards < 1 || o.shards > bench::kMaxShards) {
    return Status::InvalidArgument("--shards: must be 1.." + std::to_string(bench::kMaxShards));
  }
  if (o.target.empty()) return Status::InvalidArgument("--target: the engine's URL as the pods reach it");
  for (const auto& [flag, q] : {std::pair<const char*, const std::string&>{"--cpu", o.cpu}, {"--memory", o.memory},
                                {"--storage", o.storage}}) {
    if (!ValidQuantity(q)) return Status::InvalidArgument(std::string(flag) + " \"" + q + "\": expected a quantity like 2, 500m, 4Gi");
  }
  const std::string name = K8sName(o.card_name);
  const std::string pvc = o.results_pvc.empty() ? name + "-results" : o.results_pvc;
  const std::string n = std::to_string(o.shards);
  std::ostringstream y;
  y << "# infereng k8s render: card \"" << o.card_name << "\" as " << n << " shards (bench --shard K/" << n << ").\n"
    << "# Apply right away: every pod starts its load at " << o.start_at_utc << " (the barrier); a pod\n"
    << "# scheduled later fails instead of starting alone, and the merge names the missing shard.\n"
    << "#   kubectl apply -f THIS_FILE\n"
    << "#   kubectl -n " << o.ns << " wait --for=condition=complete job/" << name << " --timeout=2h\n"
    << "# Collect the shards' run directories from the results volume and merge them:\n"
    << "#   kubectl -n " << o.ns << " run " << name << "-collect --image=busybox --restart=Never --overrides='{\"spec\":"
    << "{\"volumes\":[{\"name\":\"r\",\"persistentVolumeClaim\":{\"claimName\":\"" << pvc << "\"}}],\"containers\":"
    << "[{\"name\":\"c\",\"image\":\"busybox\",\"command\":[\"sleep\",\"3600\"],\"volumeMounts\":[{\"name\":\"r\","
    << "\"mountPath\":\"/results\"}]}]}}'\n"
    << "#   kubectl -n " << o.ns << " cp " << name << "-collect:/results ./" << name << "-results\n"
    << "#   infereng merge ./" << name << "-results/shard-* --out ./" << name << "-merged --card CARD.yaml\n";
  y << "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " << name << "-card\n  namespace: " << Q(o.ns)
    << "\n  labels:\n    app.kubernetes.io/name: infereng\n    app.kubernetes.io/instance: " << name << "\ndata:\n"
    << "  start-at: " << Q(o.start_at_utc) << "\n"
    << "  card.yaml: " << CardScalar(o.card_text, "    ") << "\n";
  if (o.results_pvc.empty()) {
    y << "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " << pvc << "\n  namespace: " << Q(o.ns)
      << "\nspec:\n  accessModes: [ReadWriteMany]\n  resources:\n    requests:\n      storage: " << o.storage << "\n";
  }
  y << "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " << name << "\n  namespace: " << Q(o.ns)
    << "\n  labels:\n    app.kubernetes.io/name: infereng\n    app.kubernetes.io/instance: " << name << "\nspec:\n"
    << "  completionMode: Indexed\n  completions: " << n << "\n  parallelism: " << n << "\n  backoffLimit: 0\n"
    << "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: infereng\n"
    << "        app.kubernetes.io/instance: " << name << "\n    spec:\n      restartPolicy: Never\n"
    << "      containers:\n      - name: bench\n        image: " << Q(o.image) << "\n"
    << "        args:\n";
  std::vector<std::string> args = {"bench", "--card", "/card/card.yaml", "--target", "$(TARGET)", "--shard",
                                   "$(JOB_COMPLETION_INDEX)/" + n, "--start-at", "$(START_AT)", "--out",
                                   "/results/shard-$(JOB_COMPLETION_INDEX)", "--quiet", "--no-history"};
  if (!o.api_key_secret.empty()) {
    args.push_back("--api-key-env");
    args.push_back("INFERENG_API_KEY");
  }
  std::istringstream extra(o.extra_args);
  for (std::string a; extra >> a;) args.push_back(a);
  for (const std::string& a : args) y << "        - " << Q(a) << "\n";
  y << "        env:\n"
    << "        - name: JOB_COMPLETION_INDEX\n          valueFrom:\n            fieldRef:\n"
    << "              fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n"
    << "        - name: TARGET\n          value: " << Q(o.target) << "\n"
    << "        - name: START_AT\n          valueFrom:\n            configMapKeyRef:\n              name: " << name
    << "-card\n              key: start-at\n";
  if (!o.api_key_secret.empty()) {
    y << "        - name: INFERENG_API_KEY\n          valueFrom:\n            secretKeyRef:\n              name: "
      << Q(o.api_key_secret) << "\n              key: " << Q(o.api_key_secret_key) << "\n";
  }
  y << "        resources:\n          requests:\n            cpu: " << Q(o.cpu) << "\n            memory: " << Q(o.memory)
    << "\n          limits:\n            memory: " << Q(o.memory) << "\n"
    << "        volumeMounts:\n        - name: card\n          mountPath: /card\n          readOnly: true\n"
    << "        - name: results\n          mountPath: /results\n"
    << "      volumes:\n      - name: card\n        configMap:\n          name: " << name << "-card\n"
    << "          items:\n          - key: card.yaml\n            path: card.yaml\n"
    << "      - name: results\n        persistentVolumeClaim:\n          claimName: " << pvc << "\n";
  return y.str();
}

}  // namespace infereng::job
