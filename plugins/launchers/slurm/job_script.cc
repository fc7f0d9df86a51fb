// Copyright attune authors.
#include "job_script.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace attune::slurm {
namespace {

// sbatch reads #SBATCH lines with its own word splitting, so values there must be single words.
Status CheckSbatchWord(const std::string& what, const std::string& value) {
  if (value.find_first_of(" \t\r\n\"'#") != std::string::npos) {
    return Status::InvalidArgument("slurm launcher: " + what + " '" + value +
                                   "' cannot go into an #SBATCH line (it holds whitespace, a "
                                   "quote or '#'); choose a value without them");
  }
  return Status::Ok();
}

Status CheckExtraLine(const std::string& line) {
  if (line.rfind("-", 0) != 0 || line.find_first_of("\r\n") != std::string::npos) {
    return Status::InvalidArgument("slurm launcher option 'extra_sbatch': '" + line +
                                   "' is not one sbatch option (expected e.g. '--exclusive' or "
                                   "'--constraint=h100', one per list item)");
  }
  return Status::Ok();
}

Status CheckEnvName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ||
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
          std::string::npos) {
    return Status::InvalidArgument("slurm launcher: '" + name +
                                   "' is not a valid environment variable name");
  }
  return Status::Ok();
}

Status CheckSpec(const JobSpec& spec, const SlurmOptions& o, const ScriptPaths& paths) {
  if (spec.name.empty() ||
      spec.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                  "0123456789._-") != std::string::npos) {
    return Status::InvalidArgument("slurm launcher: job name '" + spec.name +
                                   "' must match [A-Za-z0-9._-]+");
  }
  if (spec.launch.argv.empty()) {
    return Status::InvalidArgument("slurm launcher: job '" + spec.name +
                                   "' has an empty launch argv (the stack rendered nothing)");
  }
  if (spec.nodes < 1) {
    return Status::InvalidArgument("slurm launcher: job '" + spec.name + "' asks for " +
                                   std::to_string(spec.nodes) + " nodes; expected >= 1");
  }
  ATTUNE_RETURN_IF_ERROR(CheckSbatchWord("partition", o.partition));
  ATTUNE_RETURN_IF_ERROR(CheckSbatchWord("account", o.account));
  ATTUNE_RETURN_IF_ERROR(CheckSbatchWord("qos", o.qos));
  ATTUNE_RETURN_IF_ERROR(CheckSbatchWord("log path", paths.log_path));
  ATTUNE_RETURN_IF_ERROR(CheckSbatchWord("comment", paths.comment));
  for (const auto& line : o.extra_sbatch) ATTUNE_RETURN_IF_ERROR(CheckExtraLine(line));
  for (const auto& [k, v] : spec.launch.env) ATTUNE_RETURN_IF_ERROR(CheckEnvName(k));
  return Status::Ok();
}

void SbatchLines(const JobSpec& spec, const SlurmOptions& o, const ScriptPaths& paths,
                 std::ostream& out) {
  auto line = [&out](const std::string& option) { out << "#SBATCH " << option << "\n"; };
  line("--job-name=" + spec.name);
  line("--nodes=" + std::to_string(spec.nodes));
  line("--ntasks-per-node=" + std::to_string(o.ntasks_per_node));
  if (o.cpus_per_task > 0) line("--cpus-per-task=" + std::to_string(o.cpus_per_task));
  if (o.gpus_per_node > 0) line("--gpus-per-node=" + std::to_string(o.gpus_per_node));
  if (int minutes = TimeLimitMinutes(spec.time_limit_s); minutes > 0) {
    line("--time=" + std::to_string(minutes));
  }
  if (!o.partition.empty()) line("--partition=" + o.partition);
  if (!o.account.empty()) line("--account=" + o.account);
  if (!o.qos.empty()) line("--qos=" + o.qos);
  line("--output=" + paths.log_path);
  if (!paths.comment.empty()) line("--comment=" + paths.comment);
  // With requeue, a restarted job appends to the first attempt's log instead of erasing it.
  line(o.requeue ? "--requeue\n#SBATCH --open-mode=append" : "--no-requeue");
  for (const auto& extra : o.extra_sbatch) line(extra);
}

void Export(std::ostream& out, const std::string& name, const std::string& value) {
  out << "export " << name << "=" << ShellQuote(value) << "\n";
}

// Rendezvous for torchrun/Megatron-style launchers, from the allocation. The port is a function
// of the job id so that two jobs on one node do not collide and a requeue reuses it.
void RendezvousLines(const JobSpec& spec, const SlurmOptions& o, std::ostream& out) {
  out << "export MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\"\n"
      << "export MASTER_PORT=$((" << o.master_port_base << " + SLURM_JOB_ID % "
      << o.master_port_span << "))\n"
      << "export NNODES=\"$SLURM_JOB_NUM_NODES\"\n";
  int per_node = spec.nodes > 0 ? std::max(1, spec.devices / spec.nodes) : spec.devices;
  Export(out, "WORLD_SIZE", std::to_string(spec.devices));
  Export(out, "GPUS_PER_NODE", std::to_string(per_node));
  Export(out, "ATTUNE_JOB_NAME", spec.name);
  // srun in Slurm >= 22.05 no longer inherits --cpus-per-task from the allocation.
  if (o.cpus_per_task > 0) out << "export SRUN_CPUS_PER_TASK=\"$SLURM_CPUS_PER_TASK\"\n";
}

// Each srun task learns its node rank (and, with several tasks per node, its global and local
// rank) from Slurm before exec'ing the entry point.
void LaunchLines(const JobSpec& spec, const SlurmOptions& o, std::ostream& out) {
  std::string ranks = "export NODE_RANK=\"$SLURM_NODEID\"";
  if (o.ntasks_per_node > 1) {
    ranks += " RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\" WORLD_SIZE=\"$SLURM_NTASKS\"";
  }
  std::string task = ranks + "; exec \"$@\"";
  if (o.use_srun) {
    out << "srun";
    for (const auto& arg : o.srun_args) out << " " << ShellQuote(arg);
    out << " ";
  }
  out << "bash -c " << ShellQuote(task) << " attune-task";
  for (const auto& arg : spec.launch.argv) out << " " << ShellQuote(arg);
  out << "\n";
}

}  // namespace

int TimeLimitMinutes(double time_limit_s) {
  if (time_limit_s <= 0) return 0;
  return std::max(1, static_cast<int>(std::ceil(time_limit_s / 60.0)));
}

Result<std::string> RenderJobScript(const JobSpec& spec, const SlurmOptions& o,
                                    const ScriptPaths& paths) {
  ATTUNE_RETURN_IF_ERROR(CheckSpec(spec, o, paths));
  std::ostringstream out;
  out << "#!/bin/bash\n"
      << "# attune job " << spec.name << ": written by the attune slurm launcher.\n";
  SbatchLines(spec, o, paths, out);
  out << "set -u\n";
  Export(out, "ATTUNE_MARKER", paths.marker_path);
  out << "echo \"$SLURM_JOB_ID start $(date +%s)\" > \"$ATTUNE_MARKER.tmp\" && "
         "mv -f \"$ATTUNE_MARKER.tmp\" \"$ATTUNE_MARKER\"\n";
  for (const auto& [k, v] : o.env) Export(out, k, v);
  RendezvousLines(spec, o, out);
  for (const auto& [k, v] : spec.launch.env) Export(out, k, v);
  for (const auto& line : o.prologue) out << line << "\n";
  if (!spec.launch.workdir.empty()) {
    out << "cd -- " << ShellQuote(spec.launch.workdir) << " || exit 1\n";
  }
  LaunchLines(spec, o, out);
  out << "rc=$?\n"
      << "{ cat \"$ATTUNE_MARKER\"; echo \"$SLURM_JOB_ID exit $rc $(date +%s)\"; } > "
         "\"$ATTUNE_MARKER.tmp\" && mv -f \"$ATTUNE_MARKER.tmp\" \"$ATTUNE_MARKER\"\n"
      << "exit $rc\n";
  return out.str();
}

}  // namespace attune::slurm
