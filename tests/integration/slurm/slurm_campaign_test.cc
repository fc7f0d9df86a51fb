// End to end: a minigpt campaign (tools/minigpt, Debian's python with torch) run by the `attune`
// binary through the real one-node Slurm cluster. The engine is killed (SIGKILL) while its first
// job is queued and restarted; it must find that job by name rather than submit it again. One
// candidate fails (an injected exit 3), one is cancelled with scancel (both must be triaged), and
// the next is measured, ranked and reported.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "process.h"
#include "test_files.h"
#include "slurm_test_support.h"

using attune::JobState;
using nlohmann::json;
using namespace attune::slurm_test;
namespace fs = std::filesystem;

namespace {

std::string AttuneBinary() {
  std::string path = attune::testing::AttuneBinaryPath();
  if (access(path.c_str(), X_OK) != 0) {
    std::cerr << "SKIPPED: the attune binary " << path << " is not built (target attune)\n";
    std::exit(kSkipExitCode);
  }
  return path;
}

// Starts `attune run` in the repository root (the recipe's entry point is relative to it).
pid_t StartAttune(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  dup2(fd, 1);
  dup2(fd, 2);
  if (chdir(ATTUNE_SOURCE_DIR) != 0) _exit(126);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

int WaitExit(pid_t pid, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -2;  // timed out
}

// The launcher's records of the campaign: name → record JSON.
std::map<std::string, json> Records(const std::string& campaign) {
  std::map<std::string, json> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(campaign + "/slurm", ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    json j = json::parse(in, nullptr, false);
    if (!j.is_discarded()) out[j.value("name", "")] = j;
  }
  return out;
}

// Waits until `pick` returns a job name from the current records (or "" on timeout).
template <typename Pick>
std::string WaitForRecord(const std::string& campaign, double timeout_s, Pick pick) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string name = pick(Records(campaign));
    if (!name.empty()) return name;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "";
}

std::vector<json> Events(const std::string& attune, const std::string& campaign) {
  std::vector<json> out;
  std::istringstream lines(Output({attune, "events", campaign, "--json"}));
  std::string line;
  while (std::getline(lines, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded()) out.push_back(j);
  }
  return out;
}

std::string WriteWorkflow(const std::string& dir, const std::string& fail_flag) {
  // Fails the first non-baseline job while the flag file exists (then removes the flag).
  std::string inject = "case \"$ATTUNE_JOB_NAME\" in *-baseline-*) ;; *) if [ -e '" + fail_flag +
                       "' ]; then rm -f '" + fail_flag +
                       "'; echo 'injected failure: exit 3'; exit 3; fi ;; esac";
  json launcher = {
      {"name", "slurm"},
      {"with",
       {{"partition", "debug"}, {"poll_interval_s", 0.5}, {"prologue", json::array({inject})}}}};
  std::string path = dir + "/slurm-e2e.yaml";
  std::ofstream(path) << "attune: 1\nname: slurm-e2e\nstack: megatron\n"
                      << "recipe: " << ATTUNE_SOURCE_DIR << "/workflows/recipes/minigpt.yaml\n"
                      << "launcher: " << launcher.dump()
                      << "\n"
                      // The grid agent is deterministic (the heuristic one follows the measured
                      // numbers): c001 = micro-batch 2 (fails), c002 = 4 (cancelled), c003 = 8.
                      << "agent: {name: grid, with: {space: {--micro-batch-size: ['1', '2', "
                         "'4', '8']}}}\nseed: 7\n"
                      << "budget: {gpu_hours: 0.2, max_candidates: 4, job_time_limit_s: 180}\n"
                      << "measure: {noise_band: 0.05, repeats: 1}\n"
                      << "gate: {loss_rel_tolerance: 0.001, paired_losses: 4}\n"
                      << "steps:\n"
                      << "  - {id: baseline, uses: benchmark, with: {repeats: 1}}\n"
                      << "  - {id: tune, uses: tune}\n"
                      << "  - {id: report, uses: report}\n";
  return path;
}

std::string StateOf(const json& record) {
  return record.contains("final_status") ? record["final_status"].value("state", "") : "";
}

}  // namespace

TEST_CASE(
    "a minigpt campaign through Slurm survives a kill -9 and triages failed and cancelled "
    "jobs",
    "[slurm][e2e][.slow]") {
  EnsureSlurm();
  std::string attune = AttuneBinary();
  std::string dir = ScratchDir() + "/e2e";
  fs::create_directories(dir);
  std::string campaign = dir + "/campaign-" + std::to_string(getpid());
  std::string fail_flag = dir + "/fail-next";
  std::ofstream(fail_flag) << "1\n";
  std::string workflow = WriteWorkflow(dir, fail_flag);
  std::string log = dir + "/attune.log";
  std::vector<std::string> run = {attune, "run", workflow, "--dir", campaign};

  // Both cores taken: the campaign's first job has to wait in the queue.
  auto blocker_launcher = MakeLauncher({{"cpus_per_task", 2}});
  std::string blocker = UniqueName("e2e-blocker");
  REQUIRE(blocker_launcher->Submit(Spec(blocker, {"sleep", "600"})).ok());
  REQUIRE(WaitRunning(*blocker_launcher, blocker).state == JobState::kRunning);

  pid_t engine = StartAttune(run, log);
  std::string first = WaitForRecord(campaign, 120, [](const std::map<std::string, json>& r) {
    for (const auto& [name, rec] : r) {
      if (!rec.value("job_id", "").empty()) return name;
    }
    return std::string();
  });
  REQUIRE_FALSE(first.empty());
  auto campaign_launcher = MakeLauncher({{"state_dir", campaign + "/slurm"}});
  auto queued = campaign_launcher->Poll(first);
  REQUIRE(queued.ok());
  CHECK(queued->state == JobState::kPending);

  kill(engine, SIGKILL);
  WaitExit(engine, 10);
  CHECK(SlurmJobsNamed(first) == 1);

  engine = StartAttune({attune, "run", "--dir", campaign}, log);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // let it reconcile while still queued
  REQUIRE(blocker_launcher->Cancel(blocker).ok());

  // The injected failure hits the first candidate; the next one that runs is cancelled.
  std::string cancelled = WaitForRecord(campaign, 400, [&](const std::map<std::string, json>& r) {
    for (const auto& [name, rec] : r) {
      if (name == first || rec.value("job_id", "").empty() || !StateOf(rec).empty()) continue;
      auto s = campaign_launcher->Poll(name);
      if (s.ok() && s->state == JobState::kRunning && !fs::exists(fail_flag)) return name;
    }
    return std::string();
  });
  REQUIRE_FALSE(cancelled.empty());
  std::string cancelled_id = Records(campaign)[cancelled].value("job_id", "");
  Output({"scancel", cancelled_id});

  int rc = WaitExit(engine, 600);
  INFO("attune log: " << log);
  REQUIRE(rc == 0);
  CHECK(SlurmJobsNamed(first) == 1);  // found again by name after the kill, never resubmitted

  std::map<std::string, int> submitted;
  std::map<std::string, json> finished;
  bool resumed = false, report = false;
  int ranked = 0;
  for (const auto& e : Events(attune, campaign)) {
    std::string type = e.value("type", "");
    if (type == "JobSubmitted") ++submitted[e["data"].value("job", "")];
    if (type == "JobFinished") finished[e["data"].value("job", "")] = e["data"];
    resumed = resumed || type == "CampaignResumed";
    report = report || type == "ReportWritten";
    ranked += type == "CandidateRanked";
  }
  CHECK(resumed);
  CHECK(report);
  auto records = Records(campaign);
  for (const auto& [name, rec] : records) {
    INFO("job " << name);
    CHECK(submitted[name] == 1);
    CHECK(SlurmJobsNamed(name) <= 1);
    REQUIRE(finished.count(name) == 1);
    CHECK(finished[name]["status"].value("launcher_job_id", "") == rec.value("job_id", "x"));
  }
  CHECK(finished[first]["status"].value("state", "") == "succeeded");
  CHECK(finished[first].value("charged_gpu_hours", 0.0) > 0);
  CHECK(finished[cancelled]["status"].value("state", "") == "cancelled");
  CHECK(finished[cancelled]["failure"].value("kind", "") == "cancelled");
  int failed_with_3 = 0;
  for (const auto& [name, data] : finished) {
    if (data["status"].value("state", "") == "failed" &&
        data["status"].value("exit_code", 0) == 3) {
      ++failed_with_3;
      CHECK_FALSE(data["failure"].is_null());
    }
  }
  CHECK(failed_with_3 == 1);
  int measured_candidates = 0;
  for (const auto& [name, data] : finished) {
    measured_candidates += name != first && !data["measurement"].is_null();
  }
  CHECK(measured_candidates >= 1);  // the third candidate ran, was measured...
  CHECK(ranked >= 1);               // ...and ranked against the leader
  CHECK(fs::exists(campaign + "/REPORT.md"));
  CHECK(fs::exists(campaign + "/RESULTS.md"));
  json status = json::parse(Output({attune, "status", campaign, "--json"}), nullptr, false);
  CHECK(status.value("state", "") == "finished");
  CHECK(status["budget"].value("charged_gpu_hours", 0.0) > 0);
}
