// Copyright attune authors.
#include "options_schema.h"

namespace attune::local {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "the local launcher: jobs as process groups on this machine",
  "properties": {
    "state_dir": {
      "type": "string",
      "minLength": 1,
      "description": "where job records live (default: <campaign>/launcher-local)"
    },
    "wrapper": {
      "type": "array",
      "items": {
        "type": "string"
      },
      "minItems": 1,
      "description": "the command jobs run under (default: [<attune>, --plugin-path, <this plugin's folder>, local, job-exec])"
    },
    "device_type": {
      "enum": [
        "cpu",
        "gpu"
      ],
      "default": "cpu",
      "description": "what a device is: a CPU core or a GPU"
    },
    "devices_per_node": {
      "type": "integer",
      "minimum": 1,
      "maximum": 4096,
      "description": "devices jobs may use (default: the number of CPUs)"
    },
    "grace_s": {
      "type": "number",
      "minimum": 0,
      "default": 10,
      "description": "seconds between SIGTERM and SIGKILL when a job is cancelled"
    },
    "pin_cpus": {
      "type": "boolean",
      "default": false,
      "description": "pin each job to its own CPUs"
    },
    "poll_interval_s": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 1,
      "description": "seconds between polls of a running job"
    },
    "submit_wait_s": {
      "type": "number",
      "minimum": 0,
      "default": 10,
      "description": "seconds to wait for a submitted job's wrapper to start"
    }
  }
})json";

}  // namespace attune::local
