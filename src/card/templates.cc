// Card templates for `infereng card init`: the same text as examples/{chat,batch,agent}.yaml
// (a test keeps them identical). Regenerate this file from the examples after editing them.
#include "card/templates.h"

namespace infereng::card {
namespace {
constexpr std::string_view kChat = R"yaml(# Workload card: interactive chat assistant with a shared system prompt.
# Schema: docs/workload-card.md. Check it with `infereng card check FILE`.
# Any field may be written {value: X, assumed: true} to mark a guess that still needs a
# measurement; `card check` lists every assumed or missing field and why it matters.
name: chat-assistant
description: Interactive chat for signed-in users; one shared system prompt per tenant.

product:
  task: chat
  modality: text
  max_context_tokens: 16384
  max_input_tokens: 12288
  max_output_tokens: 2048
  format: text
  streaming: true                  # tokens are streamed to the user (TTFT and ITL matter)
  timeout: 60s                     # client gives up after this
  overload_response: 429 with retry-after
  unit_of_work: request
  network: {value: 30ms, assumed: true}   # client <-> endpoint round trip
  preprocess: 5ms                  # templating + tokenisation
  postprocess: 2ms

traffic:
  class: online
  arrival: {process: poisson, rate: {value: 20rps, assumed: true}}
  peak_rate: 40rps                 # the rate capacity planning must serve
  input_tokens: {lognormal: {p50: 1800, p99: 6000}, max: 12288}   # includes the system prompt
  output_tokens: {lognormal: {p50: 250, p99: 1000}, max: 2048}
  prefix: {share: 0.9, tokens: 1200, distinct: 1, tenants: 4}     # system prompt, per tenant

slo:
  ttft: {p50: 200ms, p99: 500ms}   # client send -> first token
  itl: {p99: 50ms}                 # per-request inter-token latency
  e2e: {p95: 30s}                 # whole answer; outputs run to ~1000 tokens
  # Objectives above are judged on the run's percentile. Goodput and attainment count
  # requests meeting every per-request threshold below (vLLM --goodput, DistServe);
  # without this line they default to each metric's highest-percentile objective.
  goodput: {ttft: 500ms, itl: 50ms, e2e: 30s}
  attainment: 0.99                 # share of requests that must meet every goodput threshold
  availability: 0.999
  recovery: 5m

constraints:
  budget: $40/h
  region: us-east
  data_residency: us
  privacy: prompts and outputs are not logged
  licence: llama3.1 community
  accelerators: [h100-sxm, a100-80gb, l40s]
  operations: one on-call team; managed Kubernetes

model:
  id: meta-llama/Llama-3.1-8B-Instruct
  revision: 0e9e39f249a16976918f6564b8830bc894c89659
  architecture: llama-3.1-8b
  precision: bf16
  kv_precision: bf16

deployment:
  accelerator: h100-sxm
  count: 1
  tp: 1
  replicas: 1

engine:
  max_num_seqs: 256
  max_num_batched_tokens: 1024     # small prefill chunks: a large chunk stalls every decode (ITL)
  enable_prefix_caching: true

quality:
  eval_set: {value: evals/product-support.jsonl, assumed: true}   # a stand-in: JSON format, refusals, extraction
  # Assumed until it is your product's own eval set (examples/evals/README.md); bench pairs it
  # with the load (one request in --quality-every N) and goodput counts only passing work.
  pass_threshold: 0.9

bench:
  duration: 120s
  warmup: 10s
  trials: 3
  seed: 42
  endpoint: chat
)yaml";
constexpr std::string_view kBatch = R"yaml(# Workload card: offline batch summarisation of documents.
# Throughput and cost per document matter; per-token latency does not.
# Schema: docs/workload-card.md. Check it with `infereng card check FILE`.
name: batch-summarise
description: Nightly summarisation of support tickets; results are read the next morning.

product:
  task: summarisation
  modality: text
  max_context_tokens: 32768
  max_input_tokens: 30000
  max_output_tokens: 512
  format: json
  streaming: false
  timeout: 10m
  overload_response: queue
  unit_of_work: request

traffic:
  class: offline
  concurrency: 128                 # at most 128 in flight (a closed loop of 128 users with --concurrency alone)
  arrival: {process: constant, rate: {value: 50rps, assumed: true}}   # offered rate (open loop, capped at 128)
  input_tokens: {lognormal: {p50: 3000, p99: 20000}, max: 30000}
  output_tokens: {normal: {mean: 300, stddev: 80}, min: 50, max: 512}
  prefix: {share: 1.0, tokens: 400, distinct: 1, tenants: 1}      # the instruction block

slo:
  e2e: {p99: 10m}
  min_output_tokens_per_s: 5000    # system-wide: the batch must finish overnight
  goodput: {e2e: 10m}              # per request: 99.9% of requests within 10 minutes
  attainment: 0.999

constraints:
  budget: [$20/h, $0.10/1M]
  region: eu-west
  data_residency: eu
  privacy: tickets contain personal data; no third-party APIs
  licence: llama3.1 community
  accelerators: [h100-sxm, l40s]

model:
  id: meta-llama/Llama-3.1-8B-Instruct
  revision: 0e9e39f249a16976918f6564b8830bc894c89659
  architecture: llama-3.1-8b
  precision: fp8
  kv_precision: fp8

deployment:
  accelerator: h100-sxm
  count: 1
  replicas: 2

engine:
  max_num_seqs: 512
  max_num_batched_tokens: 16384

quality:
  eval_set: {value: evals/gsm8k-test-200.jsonl, assumed: true}   # a stand-in: GSM8K test slice, numeric answers
  # Assumed until it is your product's own eval set (examples/evals/README.md); bench pairs it
  # with the load (one request in --quality-every N) and goodput counts only passing work.
  pass_threshold: 0.85

bench:
  duration: 10m
  warmup: 30s
  trials: 1
  seed: 7
  endpoint: completions
)yaml";
constexpr std::string_view kAgent = R"yaml(# Workload card: agentic tool-calling flow. The unit of work is the whole task: several
# LLM calls with tool calls between them. Each call re-sends the growing conversation,
# so prefixes repeat within a task and tail latency compounds across steps. bench, run and
# the twin run it as tasks (agent_steps calls, agent_tool_time between them) and report
# tasks/s, task latency, success rate and prefix reuse by step (docs/metrics.md).
# Schema: docs/workload-card.md. Check it with `infereng card check FILE`.
name: support-agent
description: Customer-support agent that looks up orders and issues refunds via tools.

product:
  task: agent
  modality: text
  max_context_tokens: 32768
  max_input_tokens: 24576
  max_output_tokens: 1024
  format: tool_calls
  streaming: false                 # tool calls are parsed whole: each answer arrives whole (TTFT = E2E)
  timeout: 30s                     # per LLM call
  overload_response: 503 and fail the task over to a human
  unit_of_work: task
  network: 20ms
  preprocess: 10ms
  postprocess: {value: 15ms, assumed: true}   # tool-call JSON validation

traffic:
  class: online
  arrival: {process: gamma, rate: 8rps, cv: 2.0}   # bursty: incidents arrive together
  input_tokens: {lognormal: {p50: 4000, p99: 16000}, max: 24576}
  output_tokens: {lognormal: {p50: 120, p99: 600}, max: 1024}
  prefix: {share: 0.95, tokens: 2500, distinct: 3, tenants: 10}   # tool schemas + policy
  agent_steps: {value: 6, assumed: true}
  agent_tool_time: 400ms
  # agent_parallel: 2              # calls per step after the first, sent together (sub-agents)
  sessions:
    new_message_tokens: {lognormal: {p50: 300, p99: 2000}}   # each tool result appended to the task

slo:
  e2e: {p50: 3s, p99: 12s}         # per LLM call (not streamed: only end-to-end objectives apply)
  task: 40s                        # the whole task: first call's send -> last call's end, tool time included
  goodput: {e2e: 12s}              # per-request threshold for goodput
  attainment: 0.95                 # share of calls that must meet every goodput threshold
  availability: 0.995

constraints:
  budget: $60/h
  region: us-west
  licence: apache-2.0
  accelerators: [h100-sxm, h200]

model:
  id: Qwen/Qwen2.5-32B-Instruct
  revision: {value: main, assumed: true}
  architecture: qwen2.5-32b
  precision: fp8
  kv_precision: fp8

deployment:
  accelerator: h100-sxm
  count: 2
  tp: 2
  replicas: 1

engine:
  max_num_seqs: 128
  enable_prefix_caching: true

quality:
  eval_set: {value: evals/product-support.jsonl, assumed: true}   # a stand-in: JSON format, refusals, extraction
  # Assumed until it is your product's own eval set (examples/evals/README.md); bench pairs it
  # with the load (one request in --quality-every N) and goodput counts only passing work.
  pass_threshold: 0.8

bench:
  duration: 5m
  warmup: 20s
  trials: 3
  seed: 11
  endpoint: chat
)yaml";

constexpr CardTemplate kTemplates[] = {
    {"chat", "interactive chat with a shared system prompt (llama-3.1-8b on h100-sxm)", kChat},
    {"batch", "offline batch summarisation: throughput and cost per document", kBatch},
    {"agent", "agentic tool-calling flow measured as whole tasks", kAgent},
};

}  // namespace

std::span<const CardTemplate> CardTemplates() { return kTemplates; }

const CardTemplate* FindCardTemplate(std::string_view name) {
  for (const CardTemplate& t : kTemplates) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace infereng::card
