// Copyright attune authors.
//
// SlurmOptions: the Slurm launcher's settings, read from the workflow's `launcher: with:` block
// (PluginContext::config) and, per job, from JobSpec::options. Unknown keys are refused with the
// nearest valid name, so a typo never silently drops an #SBATCH line.
#ifndef ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_OPTIONS_H_
#define ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_OPTIONS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attune/status.h"

namespace attune::slurm {

struct SlurmOptions {
  // Where jobs go. Empty: the cluster's default.
  std::string partition;
  std::string account;
  std::string qos;
  // Resources per node. gpus_per_node 0: no --gpus-per-node line (CPU clusters).
  int gpus_per_node = 0;
  int ntasks_per_node = 1;  // srun tasks per node (1: one launcher such as torchrun per node)
  int cpus_per_task = 0;    // 0: no --cpus-per-task line
  std::vector<std::string> extra_sbatch;                 // "--exclusive", "--constraint=h100", ...
  std::vector<std::pair<std::string, std::string>> env;  // exported before srun
  std::vector<std::string> prologue;   // shell lines run before srun (module load, ...)
  bool use_srun = true;                // false: run the entry point directly in the batch step
  std::vector<std::string> srun_args;  // extra srun arguments
  bool requeue = false;          // false adds --no-requeue: the engine decides retries, not Slurm
  int master_port_base = 20000;  // MASTER_PORT = base + job id % master_port_span
  int master_port_span = 20000;

  // Where logs go. Empty: the engine's JobSpec::log_path (must be on a filesystem the compute
  // nodes share with the engine's host).
  std::string log_dir;
  // Where submission records go (one JSON file per job name). Empty: <campaign_dir>/slurm.
  std::string state_dir;

  // How the launcher talks to Slurm.
  std::string bin_dir;     // directory of sbatch/squeue/...; empty: PATH
  std::string slurm_conf;  // SLURM_CONF for the commands; empty: Slurm's default
  double poll_interval_s = 5;
  double command_timeout_s = 60;

  // What the jobs run on (ClusterInfo); devices_per_node/max_nodes 0: ask sinfo.
  std::string device_type;  // "H100"; empty: "cpu" without GPUs
  double device_memory_gib = 0;
  double peak_tflops = 0;
  int compute_capability_major = 0;
  int devices_per_node = 0;
  int max_nodes = 0;
};

// Reads options from a JSON object (the workflow's `with:`), starting from `base`. Errors name
// the key, what was expected and the nearest valid key.
Result<SlurmOptions> ParseSlurmOptions(const nlohmann::json& config, SlurmOptions base = {});

}  // namespace attune::slurm

#endif  // ATTUNE_PLUGINS_LAUNCHERS_SLURM_SLURM_OPTIONS_H_
