// Copyright attune authors.
#include "slurm_client.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace attune::slurm {
namespace {

std::string Trim(const std::string& s) {
  auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return "";
  return s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!Trim(line).empty()) out.push_back(Trim(line));
  }
  return out;
}

bool NumericLess(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

int FirstInt(const std::string& text) {
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return 0;  // sinfo prints "N/A" or "(null)" where it has nothing
  }
}

// "gpu:8", "gpu:h100:8(S:0-1)" → 8.
int GpusInGres(const std::string& gres) {
  auto gpu = gres.find("gpu:");
  if (gpu == std::string::npos) return 0;
  std::string rest = gres.substr(gpu + 4);
  auto colon = rest.find(':');
  auto comma = rest.find(',');
  if (colon != std::string::npos && (comma == std::string::npos || colon < comma)) {
    rest = rest.substr(colon + 1);
  }
  return FirstInt(rest);
}

}  // namespace

SlurmClient::SlurmClient(SlurmOptions options)
    : options_(std::move(options)), user_(std::to_string(getuid())) {}

Result<ProcessResult> SlurmClient::Run(const std::string& program,
                                       std::vector<std::string> args) const {
  std::string path = options_.bin_dir.empty()
                         ? program
                         : (std::filesystem::path(options_.bin_dir) / program).string();
  args.insert(args.begin(), path);
  ProcessOptions po;
  po.timeout_s = options_.command_timeout_s > 0 ? options_.command_timeout_s : 60;
  if (!options_.slurm_conf.empty()) po.env.emplace_back("SLURM_CONF", options_.slurm_conf);
  auto result = RunProcess(args, po);
  if (!result.ok()) {
    return Status::FailedPrecondition("slurm launcher: " + result.status().message() +
                                      "; install the Slurm client commands or set the launcher "
                                      "option bin_dir");
  }
  return result;
}

Status SlurmClient::Failure(const std::string& command, const ProcessResult& r) const {
  std::string said = Trim(r.err.empty() ? r.out : r.err);
  if (r.timed_out) {
    return Status::Unavailable("slurm launcher: `" + command + "` did not answer within " +
                               std::to_string(static_cast<int>(options_.command_timeout_s)) +
                               " s; is slurmctld overloaded or down? (try `scontrol ping`)");
  }
  if (SaysControllerUnreachable(said)) {
    return Status::Unavailable("slurm launcher: the Slurm controller is unreachable: `" + command +
                               "` said: " + said +
                               "; check that slurmctld runs (`scontrol ping`) and SLURM_CONF");
  }
  return Status::InvalidArgument("slurm launcher: `" + command + "` refused (exit " +
                                 std::to_string(r.exit_code) + "): " + said);
}

Result<std::string> SlurmClient::Sbatch(const std::string& script_path,
                                        const std::string& workdir) const {
  std::vector<std::string> args = {"--parsable"};
  if (!workdir.empty()) args.push_back("--chdir=" + workdir);
  args.push_back(script_path);
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r, Run("sbatch", args));
  if (r.exit_code != 0 || r.timed_out) return Failure("sbatch " + script_path, r);
  return ParseSbatchJobId(Trim(r.out));
}

Result<std::vector<std::string>> SlurmClient::FindByName(const std::string& name,
                                                         const std::string& comment) const {
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r,
                          Run("squeue", {"--noheader", "--states=all", "--user=" + user_,
                                         "--name=" + name, "--format=%i|%k"}));
  if (r.exit_code != 0 || r.timed_out) return Failure("squeue --name=" + name, r);
  std::vector<std::string> ids;
  for (const auto& line : Lines(r.out)) {
    auto bar = line.find('|');
    if (bar != std::string::npos && line.substr(bar + 1) == comment)
      ids.push_back(line.substr(0, bar));
  }
  std::sort(ids.begin(), ids.end(), NumericLess);
  return ids;
}

Result<std::optional<SlurmJob>> SlurmClient::ShowJob(const std::string& job_id) const {
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r, Run("scontrol", {"--oneliner", "show", "job", job_id}));
  if (r.exit_code != 0 || r.timed_out) {
    if (r.err.find("Invalid job id") != std::string::npos) return std::optional<SlurmJob>();
    return Failure("scontrol show job " + job_id, r);
  }
  ATTUNE_ASSIGN_OR_RETURN(SlurmJob job, ParseScontrolJob(r.out));
  return std::optional<SlurmJob>(std::move(job));
}

Result<bool> SlurmClient::HasAccounting() const {
  if (has_accounting_) return *has_accounting_;
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r, Run("scontrol", {"show", "config"}));
  if (r.exit_code != 0 || r.timed_out) return Failure("scontrol show config", r);
  auto kv = r.out.find("AccountingStorageType");
  has_accounting_ = kv != std::string::npos &&
                    r.out.substr(kv, r.out.find('\n', kv) - kv).find("accounting_storage/none") ==
                        std::string::npos;
  return *has_accounting_;
}

Result<std::optional<SlurmJob>> SlurmClient::SacctByName(const std::string& name,
                                                         const std::string& comment) const {
  ATTUNE_ASSIGN_OR_RETURN(
      ProcessResult r,
      Run("sacct",
          {"--allocations", "--noheader", "--parsable2", "--user=" + user_, "--name=" + name,
           "--starttime=now-60days",
           "--format=JobID,JobName,State,ExitCode,Start,End,AllocTRES,NNodes,Reason,Comment"}));
  if (r.exit_code != 0 || r.timed_out) return Failure("sacct --name=" + name, r);
  std::optional<SlurmJob> newest;
  for (const auto& line : Lines(r.out)) {
    ATTUNE_ASSIGN_OR_RETURN(SlurmJob job, ParseSacctLine(line));
    if (job.name != name || (!job.comment.empty() && job.comment != comment)) continue;
    if (!newest || NumericLess(newest->job_id, job.job_id)) newest = job;
  }
  return newest;
}

Status SlurmClient::Cancel(const std::string& job_id) const {
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r, Run("scancel", {job_id}));
  if (r.exit_code == 0 && !r.timed_out) return Status::Ok();
  // A job that already ended (or was purged) needs no cancelling.
  if (r.err.find("already completing or completed") != std::string::npos ||
      r.err.find("Invalid job id") != std::string::npos) {
    return Status::Ok();
  }
  return Failure("scancel " + job_id, r);
}

Result<PartitionFacts> SlurmClient::Partition(const std::string& partition) const {
  std::vector<std::string> args = {"--noheader", "--format=%D %c %G"};
  if (!partition.empty()) args.push_back("--partition=" + partition);
  ATTUNE_ASSIGN_OR_RETURN(ProcessResult r, Run("sinfo", args));
  if (r.exit_code != 0 || r.timed_out) return Failure("sinfo", r);
  PartitionFacts facts;
  for (const auto& line : Lines(r.out)) {
    std::istringstream words(line);
    std::string nodes, cpus, gres;
    words >> nodes >> cpus >> gres;
    facts.nodes += FirstInt(nodes);
    facts.cpus_per_node = std::max(facts.cpus_per_node, FirstInt(cpus));
    facts.gpus_per_node = std::max(facts.gpus_per_node, GpusInGres(gres));
  }
  return facts;
}

}  // namespace attune::slurm
