// Copyright attune authors.
#include "options_schema.h"

namespace attune::agents::optuna {

const char kOptionsSchema[] = R"json({
  "type": "object",
  "additionalProperties": false,
  "description": "Bayesian optimisation (Optuna) over the stack's legal lever space",
  "properties": {
    "sampler": {
      "enum": ["tpe", "random", "nsga2", "cmaes", "qmc"],
      "default": "tpe",
      "description": "the Optuna sampler; cmaes and qmc sample only numbers and are refused (every lever is categorical)"
    },
    "startup_trials": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000,
      "default": 10,
      "description": "tpe: trials sampled at random before the model is used (Optuna's n_startup_trials)"
    },
    "timeout_s": {
      "type": "number",
      "exclusiveMinimum": 0,
      "default": 60,
      "description": "how long one run of the helper may take"
    },
    "python": {
      "type": "string",
      "minLength": 1,
      "default": "/usr/bin/python3",
      "description": "the Python that runs the helper (it must import optuna)"
    },
    "helper": {
      "type": "string",
      "minLength": 1,
      "description": "the helper script; default: optuna_helper.py beside the plugin's library"
    }
  }
})json";

}  // namespace attune::agents::optuna
