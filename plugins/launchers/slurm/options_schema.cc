// Copyright attune authors.
#include "options_schema.h"

namespace attune::slurm {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the Slurm launcher (docs/slurm.md)",
  "properties": {
    "partition": {
      "type": "string",
      "description": "sbatch --partition"
    },
    "account": {
      "type": "string",
      "description": "sbatch --account"
    },
    "qos": {
      "type": "string",
      "description": "sbatch --qos"
    },
    "gpus_per_node": {
      "type": "integer",
      "minimum": 0,
      "maximum": 4096,
      "description": "GPUs requested per node (0: none)"
    },
    "ntasks_per_node": {
      "type": "integer",
      "minimum": 1,
      "maximum": 4096,
      "description": "tasks per node"
    },
    "cpus_per_task": {
      "type": "integer",
      "minimum": 0,
      "maximum": 4096,
      "description": "CPUs per task (0: Slurm's default)"
    },
    "extra_sbatch": {
      "type": [
        "string",
        "array"
      ],
      "items": {
        "type": "string"
      },
      "description": "extra #SBATCH lines"
    },
    "env": {
      "type": "object",
      "propertyNames": {
        "pattern": "^[A-Za-z0-9_]+$"
      },
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "environment variables set in the job script"
    },
    "prologue": {
      "type": [
        "string",
        "array"
      ],
      "items": {
        "type": "string"
      },
      "description": "shell lines run before the job"
    },
    "srun": {
      "type": "boolean",
      "description": "start the job with srun"
    },
    "srun_args": {
      "type": [
        "string",
        "array"
      ],
      "items": {
        "type": "string"
      },
      "description": "extra srun arguments"
    },
    "requeue": {
      "type": "boolean",
      "description": "let Slurm requeue a job after a node failure"
    },
    "master_port_base": {
      "type": "integer",
      "minimum": 1024,
      "maximum": 65535,
      "description": "first MASTER_PORT"
    },
    "master_port_span": {
      "type": "integer",
      "minimum": 1,
      "maximum": 64511,
      "description": "how many ports MASTER_PORT is drawn from"
    },
    "log_dir": {
      "type": "string",
      "description": "where job logs are written"
    },
    "state_dir": {
      "type": "string",
      "description": "where job records live"
    },
    "bin_dir": {
      "type": "string",
      "description": "where sbatch, squeue, scontrol and scancel are"
    },
    "slurm_conf": {
      "type": "string",
      "description": "SLURM_CONF for the Slurm commands"
    },
    "poll_interval_s": {
      "type": "number",
      "minimum": 0,
      "description": "seconds between squeue polls"
    },
    "command_timeout_s": {
      "type": "number",
      "minimum": 0,
      "description": "time limit of one Slurm command"
    },
    "device_type": {
      "type": "string",
      "description": "the GPU type jobs get (e.g. H100)"
    },
    "device_memory_gib": {
      "type": "number",
      "minimum": 0,
      "description": "memory per GPU"
    },
    "peak_tflops": {
      "type": "number",
      "minimum": 0,
      "description": "peak dense bf16 TFLOP/s per GPU"
    },
    "compute_capability_major": {
      "type": "integer",
      "minimum": 0,
      "maximum": 100,
      "description": "CUDA compute capability (major)"
    },
    "devices_per_node": {
      "type": "integer",
      "minimum": 0,
      "maximum": 4096,
      "description": "GPUs per node the cluster offers"
    },
    "max_nodes": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000000,
      "description": "most nodes one job may use"
    }
  }
})json";

}  // namespace attune::slurm
