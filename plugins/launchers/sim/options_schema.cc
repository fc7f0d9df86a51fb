// Copyright attune authors.
#include "options_schema.h"

namespace attune::sim {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the simulated cluster (docs/sim.md)",
  "properties": {
    "gpu": {
      "type": "string",
      "pattern": "[Aa]100|[Hh][12]00|[Bb][23]00",
      "default": "H100",
      "description": "GPU generation: A100, H100, H200, B200, GB200, B300 or GB300"
    },
    "nodes": {
      "type": "integer",
      "minimum": 1,
      "maximum": 100000,
      "default": 1,
      "description": "nodes in the cluster"
    },
    "gpus_per_node": {
      "type": "integer",
      "minimum": 1,
      "maximum": 1024,
      "default": 8,
      "description": "GPUs per node"
    },
    "inter_node_gbit_s": {
      "type": "number",
      "minimum": 1,
      "description": "network bandwidth per GPU, Gb/s (default: the GPU's usual network)"
    },
    "inter_node_latency_us": {
      "type": "number",
      "minimum": 0,
      "default": 5,
      "description": "network latency, microseconds"
    },
    "startup_s": {
      "type": "number",
      "minimum": 0,
      "default": 90,
      "description": "job start-up before the first iteration, seconds"
    },
    "queue_s": {
      "type": "number",
      "minimum": 0,
      "default": 0,
      "description": "wait between submit and start, seconds"
    },
    "noise_cv": {
      "type": "number",
      "minimum": 0,
      "maximum": 1,
      "default": 0.01,
      "description": "step-time coefficient of variation"
    },
    "seed": {
      "type": "integer",
      "minimum": 0,
      "description": "noise and failure stream (0: the campaign seed)"
    },
    "failures": {
      "type": "object",
      "additionalProperties": false,
      "description": "failure probability per job (their sum at most 1)",
      "properties": {
        "nccl_timeout": {
          "type": "number",
          "minimum": 0,
          "maximum": 1,
          "description": "NCCL timeout"
        },
        "hang": {
          "type": "number",
          "minimum": 0,
          "maximum": 1,
          "description": "hang"
        },
        "node_failure": {
          "type": "number",
          "minimum": 0,
          "maximum": 1,
          "description": "node failure"
        }
      }
    },
    "memory_gib": {
      "type": "number",
      "minimum": 1,
      "description": "GPU memory (default: the GPU's)"
    },
    "peak_tflops": {
      "type": "number",
      "minimum": 1,
      "description": "peak dense bf16 TFLOP/s (default: the GPU's)"
    },
    "rollout": {
      "type": "object",
      "additionalProperties": false,
      "description": "the RL workload's generation lengths, which RL recipes do not state (docs/sim.md, \"Rollout\"); default: the stack's",
      "properties": {
        "prompt_tokens": {
          "type": "integer",
          "minimum": 1,
          "description": "mean prompt length, tokens"
        },
        "response_tokens": {
          "type": "integer",
          "minimum": 1,
          "description": "mean generated length, tokens (at most the recipe's cap)"
        }
      }
    },
    "sequence_length": {
      "type": "integer",
      "minimum": 1,
      "maximum": 10000000,
      "description": "tokens per sequence for recipes whose data have no fixed length (a dataset of varying lengths without packing): the padded length you expect a batch to have; the recipe's own fixed length wins"
    },
    "state_dir": {
      "type": "string",
      "description": "where job records live (default: <campaign>/sim)"
    }
  }
})json";

}  // namespace attune::sim
