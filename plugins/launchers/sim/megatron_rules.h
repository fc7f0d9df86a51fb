// Copyright attune authors.
//
// The argument checks Megatron-LM makes before (or at the first step of) training, with the
// exception type and message Megatron raises (reference §1 tables, §4.4). The simulator refuses a
// recipe exactly where Megatron would, so the stack's triage sees a real config error.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SIM_MEGATRON_RULES_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SIM_MEGATRON_RULES_H_

#include <optional>
#include <string>

#include "hardware.h"
#include "setup.h"

namespace attune::sim {

enum class RaisedAt {
  kArgparse,       // argparse refused a value (usage + "error:", exit 2)
  kStartup,        // validate_args / config __post_init__ / parallel_state, before "training ..."
  kFirstIteration  // the pipeline schedule or a tensor split, inside the first step
};

struct ArgumentError {
  std::string exception;  // "AssertionError", "ValueError", "RuntimeError"
  std::string message;
  std::string file;       // "megatron/training/arguments.py"
  std::string function;   // "validate_args"
  RaisedAt raised_at = RaisedAt::kStartup;
};

// The first check the recipe fails, in Megatron's order, or nullopt when Megatron accepts it.
std::optional<ArgumentError> CheckMegatronArguments(const TrainingSetup& setup,
                                                    const ClusterSpec& cluster);

}  // namespace attune::sim

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SIM_MEGATRON_RULES_H_
