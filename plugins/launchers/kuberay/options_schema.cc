// Copyright attune authors.
#include "options_schema.h"

namespace attune::kuberay {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the KubeRay launcher (docs/kuberay.md)",
  "properties": {
    "namespace": {
      "type": "string",
      "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      "description": "required: every kubectl call gets -n NAMESPACE"
    },
    "kubectl": {
      "type": "string",
      "description": "the kubectl to run",
      "default": "kubectl"
    },
    "kubeconfig": {
      "type": "string",
      "description": "kubectl --kubeconfig (default: kubectl's own)"
    },
    "context": {
      "type": "string",
      "description": "kubectl --context (default: the current context)"
    },
    "request_timeout_s": {
      "type": "number",
      "minimum": 1,
      "description": "kubectl --request-timeout in seconds",
      "default": 30
    },
    "api_retries": {
      "type": "integer",
      "minimum": 0,
      "maximum": 100,
      "description": "retries of a transient API error",
      "default": 5
    },
    "api_backoff_s": {
      "type": "number",
      "minimum": 0,
      "description": "first retry delay (doubles)",
      "default": 1
    },
    "api_backoff_max_s": {
      "type": "number",
      "minimum": 0,
      "description": "longest retry delay",
      "default": 30
    },
    "image": {
      "type": "string",
      "minLength": 1,
      "description": "required: the Ray containers' image"
    },
    "image_pull_policy": {
      "type": "string",
      "enum": [
        "Always",
        "IfNotPresent",
        "Never"
      ],
      "description": "the containers' imagePullPolicy"
    },
    "image_pull_secrets": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "description": "imagePullSecrets names"
    },
    "service_account": {
      "type": "string",
      "description": "the pods' serviceAccountName"
    },
    "layout": {
      "type": "string",
      "enum": [
        "auto",
        "head",
        "workers"
      ],
      "default": "auto",
      "description": "which pods hold the GPUs"
    },
    "head_cpu": {
      "type": [
        "string",
        "integer",
        "number"
      ],
      "description": "head pod CPU (a Kubernetes quantity)",
      "default": "4"
    },
    "head_memory": {
      "type": [
        "string",
        "integer",
        "number"
      ],
      "description": "head pod memory",
      "default": "16Gi"
    },
    "head_gpus": {
      "type": "integer",
      "minimum": -1,
      "maximum": 1024,
      "description": "head pod GPUs (-1: automatic)",
      "default": -1
    },
    "worker_group": {
      "type": "string",
      "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
      "default": "gpu-workers",
      "description": "worker group name"
    },
    "worker_cpu": {
      "type": [
        "string",
        "integer",
        "number"
      ],
      "description": "worker pod CPU",
      "default": "8"
    },
    "worker_memory": {
      "type": [
        "string",
        "integer",
        "number"
      ],
      "description": "worker pod memory",
      "default": "64Gi"
    },
    "gpus_per_worker": {
      "type": "integer",
      "minimum": -1,
      "maximum": 1024,
      "description": "GPUs per worker pod (-1: the recipe's gpus_per_node)",
      "default": -1
    },
    "gpu_resource": {
      "type": "string",
      "minLength": 1,
      "default": "nvidia.com/gpu",
      "description": "the GPU extended resource"
    },
    "shm_size": {
      "type": [
        "string",
        "integer",
        "number"
      ],
      "description": "size of a memory-backed /dev/shm"
    },
    "node_selector": {
      "type": "object",
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "pod nodeSelector"
    },
    "tolerations": {
      "type": "array",
      "description": "pod tolerations",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "properties": {
          "key": {
            "type": "string"
          },
          "operator": {
            "type": "string",
            "enum": [
              "Equal",
              "Exists"
            ]
          },
          "value": {
            "type": "string"
          },
          "effect": {
            "type": "string",
            "enum": [
              "NoSchedule",
              "PreferNoSchedule",
              "NoExecute"
            ]
          },
          "tolerationSeconds": {
            "type": "integer"
          }
        }
      }
    },
    "volumes": {
      "type": "array",
      "description": "volumes mounted in every Ray container; a profiled run's traces are read only through a pvc or host_path volume mounted at the campaign directory or above it and shared with this machine at the same path",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": [
          "name",
          "mount_path"
        ],
        "properties": {
          "name": {
            "type": "string",
            "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
          },
          "mount_path": {
            "type": "string",
            "pattern": "^/"
          },
          "pvc": {
            "type": "string"
          },
          "host_path": {
            "type": "string"
          },
          "config_map": {
            "type": "string"
          },
          "secret": {
            "type": "string"
          },
          "empty_dir": {
            "type": "boolean"
          },
          "read_only": {
            "type": "boolean"
          }
        }
      }
    },
    "ray_start_params": {
      "type": "object",
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "rayStartParams of every group"
    },
    "labels": {
      "type": "object",
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "extra RayJob labels"
    },
    "annotations": {
      "type": "object",
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "extra RayJob annotations"
    },
    "submission_mode": {
      "type": "string",
      "enum": [
        "K8sJobMode",
        "SidecarMode"
      ],
      "default": "K8sJobMode",
      "description": "KubeRay submission mode"
    },
    "env": {
      "type": "object",
      "propertyNames": {
        "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"
      },
      "additionalProperties": {
        "type": [
          "string",
          "number",
          "boolean"
        ]
      },
      "description": "runtimeEnvYAML env_vars"
    },
    "working_dir": {
      "type": "string",
      "description": "runtimeEnvYAML working_dir"
    },
    "shutdown_after_job_finishes": {
      "type": "boolean",
      "default": true,
      "description": "delete the RayCluster after the job"
    },
    "ttl_seconds_after_finished": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1073741824,
      "description": "seconds the RayCluster outlives the job",
      "default": 60
    },
    "poll_interval_s": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 10,
      "description": "engine poll interval"
    },
    "unschedulable_timeout_s": {
      "type": "number",
      "minimum": 0,
      "description": "how long pods may wait for GPUs",
      "default": 600
    },
    "image_pull_timeout_s": {
      "type": "number",
      "minimum": 0,
      "description": "how long containers may fail to pull their image",
      "default": 300
    },
    "state_dir": {
      "type": "string",
      "description": "records directory (default: <campaign>/kuberay)"
    },
    "device_type": {
      "type": "string",
      "default": "gpu",
      "description": "ClusterInfo device type"
    },
    "device_memory_gib": {
      "type": "number",
      "minimum": 0,
      "description": "ClusterInfo device memory",
      "default": 0
    },
    "peak_tflops": {
      "type": "number",
      "minimum": 0,
      "description": "ClusterInfo peak TFLOP/s",
      "default": 0
    },
    "compute_capability_major": {
      "type": "integer",
      "minimum": 0,
      "maximum": 100,
      "description": "ClusterInfo compute capability",
      "default": 0
    },
    "devices_per_node": {
      "type": "integer",
      "minimum": 1,
      "maximum": 1024,
      "description": "ClusterInfo devices per node",
      "default": 8
    },
    "max_nodes": {
      "type": "integer",
      "minimum": 1,
      "maximum": 100000,
      "description": "ClusterInfo maximum nodes",
      "default": 1
    }
  }
})json";

}  // namespace attune::kuberay
