// Copyright attune authors.
#include "attune/agentkit/guard.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

using attune::agentkit::FindEventLogDirs;
using attune::agentkit::GuardConfig;
using attune::agentkit::IsUnder;
using attune::agentkit::JudgeCommand;
using attune::agentkit::JudgeFileWrite;

namespace {

GuardConfig Config() {
  GuardConfig c;
  c.campaign_dir = "/camp";
  c.k8s_namespace = "tune";
  c.protected_dirs = {"/camp/events"};
  c.attune_binary = "/opt/attune/bin/attune";
  return c;
}

bool Allowed(const std::string& command) {
  return JudgeCommand(Config(), command, "/camp").allow;
}

std::string Reason(const std::string& command) {
  return JudgeCommand(Config(), command, "/camp").reason;
}

}  // namespace

TEST_CASE("read-only inspection commands are allowed", "[agentkit][guard]") {
  for (const char* cmd : {"ls -la",
                          "cat logs/c001.log",
                          "head -n 50 x.log | tail -5",
                          "grep -n 'lm loss' a.log",
                          "wc -l a.log",
                          "jq '.budget' status.json",
                          "nvidia-smi",
                          "nvidia-smi -q -d MEMORY",
                          "nvidia-smi --query-gpu=memory.used --format=csv",
                          "squeue -u $USER",
                          "sacct -j 12",
                          "scontrol show job 12",
                          "cd logs && ls",
                          "sed -n 10,20p a.log",
                          "sort a | uniq -c",
                          "find . -name '*.log'",
                          "find . -name x -exec grep -l oom {} \\;",
                          "echo hi 2>&1",
                          "ls > /dev/null 2>&1",
                          "cat < input.txt",
                          "timeout 10 tail -n 5 a.log",
                          "env LC_ALL=C grep x a",
                          "xargs grep oom < files.txt",
                          "bash -c 'ls | wc -l'",
                          "sudo -u nobody cat /var/log/x",
                          "command -v kubectl"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK(Allowed(cmd));
  }
}

TEST_CASE("the attune commands an agent needs are allowed, the rest denied", "[agentkit][guard]") {
  for (const char* cmd :
       {"attune status . --json", "attune events /camp", "attune stack show megatron",
        "attune log parse --stack megatron a.log", "attune log triage a.log",
        "attune gate check --stack megatron a.yaml b.yaml",
        "attune recipe import --stack megatron run.sh", "/opt/attune/bin/attune status .",
        "attune --help"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK(Allowed(cmd));
  }
  for (const char* cmd :
       {"attune run tune.yaml", "attune resume /camp", "attune claude-code stop", "attune cancel /camp",
        "ls | xargs attune status", "attune recipe import run.sh -o /camp/events/r.yaml"}) {
    INFO(cmd);
    CHECK_FALSE(Allowed(cmd));
  }
  CHECK(Reason("attune run x.yaml").find("answer with a JSON proposal") != std::string::npos);
}

TEST_CASE("kubectl in the campaign's namespace may only read", "[agentkit][guard]") {
  CHECK(Allowed("kubectl get pods -n tune"));
  CHECK(Allowed("kubectl -n tune describe rayjob x"));
  CHECK(Allowed("kubectl logs -n=tune x"));
  CHECK(Allowed("kubectl logs --namespace=tune -f x"));
  CHECK(Allowed("kubectl get pods --namespace tune -o wide"));
  CHECK(Allowed("kubectl version"));
  CHECK(Allowed("helm list -n tune"));
  CHECK_FALSE(Allowed("kubectl delete pod x -n tune"));
  CHECK_FALSE(Allowed("kubectl apply -f job.yaml -n tune"));
  CHECK_FALSE(Allowed("kubectl exec -n tune x -- sh"));
  CHECK_FALSE(Allowed("helm upgrade r chart -n tune"));
  CHECK(Reason("kubectl delete pod x -n tune").find("not read-only") != std::string::npos);
}

TEST_CASE("kubectl and helm outside the namespace are denied", "[agentkit][guard]") {
  for (const char* cmd : {"kubectl get pods -n other",
                          "kubectl get pods -nother",
                          "kubectl get pods --namespace=other",
                          "kubectl get pods --namespace other",
                          "kubectl get pods -A",
                          "kubectl get pods --all-namespaces",
                          "kubectl get pods -n tune -A",
                          "kubectl get pods -n tune -n other",
                          "kubectl get pods",
                          "kubectl logs -f -A",
                          "kubectl --context prod get pods -n tune",
                          "kubectl --context=prod get pods -n tune",
                          "kubectl config use-context prod",
                          "kubectl config set-context --current --namespace=other",
                          "kubectl --kubeconfig /x get pods -n tune",
                          "KUBECONFIG=/x kubectl get pods -n tune",
                          "export KUBECONFIG=/x",
                          "kubectl get pods -n $NS",
                          "kubectl get pods -n \"$(cat ns)\"",
                          "helm list -A",
                          "helm list -n other",
                          "helm status r --kube-context prod -n tune",
                          "/usr/local/bin/kubectl get pods -n other"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK_FALSE(Allowed(cmd));
  }
  CHECK(Reason("kubectl get pods -n other").find("outside the campaign's namespace") !=
        std::string::npos);
  CHECK(Reason("kubectl get pods -n other").find("'tune'") != std::string::npos);
  CHECK(Reason("kubectl get pods -A").find("every namespace") != std::string::npos);
  CHECK(Reason("kubectl get pods").find("add -n tune") != std::string::npos);
  CHECK(Reason("KUBECONFIG=/x kubectl get pods -n tune").find("KUBECONFIG") != std::string::npos);
}

TEST_CASE("kubectl nested in wrappers, shells, lists and substitutions is still checked",
          "[agentkit][guard]") {
  for (const char* cmd : {"bash -c \"kubectl get pods -A\"",
                          "sh -c 'kubectl get pods -n other'",
                          "bash -lc 'ls; kubectl get pods -A'",
                          "bash -o pipefail -c 'kubectl get pods -A | wc'",
                          "env FOO=1 kubectl get pods -A",
                          "env -i KUBECONFIG=/x kubectl get pods -n tune",
                          "echo pods | xargs kubectl get -n tune",
                          "sudo kubectl get pods -A",
                          "sudo -u root kubectl get pods -A",
                          "timeout 5 kubectl get pods -A",
                          "nohup kubectl get pods -A",
                          "ls && kubectl get pods -A",
                          "ls || kubectl get pods -A",
                          "ls; kubectl get pods -A",
                          "ls | kubectl get pods -A",
                          "echo $(kubectl get pods -A)",
                          "echo `kubectl get pods -A`",
                          "echo \"$(kubectl get pods -A)\"",
                          "bash -c \"bash -c 'kubectl get pods -A'\"",
                          "eval kubectl get pods -A",
                          "eval 'kubectl get pods -n other'",
                          "watch kubectl get pods -A",
                          "find . -exec kubectl delete pod {} -n tune \\;",
                          "(kubectl get pods -A)",
                          "diff <(kubectl get pods -A) x",
                          "command kubectl get pods -A",
                          "nice -n 5 kubectl get pods -A",
                          "$(echo kubectl) get pods -A",
                          "k=kubectl; $k get pods -A",
                          "bash script.sh",
                          "bash",
                          "bash -c \"$CMD\"",
                          "env -S 'kubectl get pods -A'",
                          "echo $((kubectl get pods -A) )",
                          "echo $(( $(kubectl get pods -A | wc -l) + 1 ))"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK_FALSE(Allowed(cmd));
  }
}

TEST_CASE("writes into the event log are denied with a reason that names it", "[agentkit][guard]") {
  for (const char* cmd :
       {"rm -rf events", "rm /camp/events/000123.sst", "mv events/CURRENT /tmp/x",
        "echo x > events/LOG", "echo x >> /camp/events/ACKED", "cat a > ./events/../events/x",
        "bash -c 'echo > /camp/events/x'", "cp /tmp/x events/", "truncate -s 0 events/MANIFEST"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK_FALSE(Allowed(cmd));
    CHECK(Reason(cmd).find("event log") != std::string::npos);
  }
}

TEST_CASE("other writes and unknown programs are denied", "[agentkit][guard]") {
  for (const char* cmd :
       {"echo x > notes.txt", "rm -rf /tmp/x", "python3 train.py", "curl http://x",
        "sed -i s/a/b/ f", "sed 'w out' f", "sort -o out in", "tee out", "nvidia-smi -r",
        "nvidia-smi -pm 1", "nvidia-smi --gpu-reset", "scancel 12", "sbatch job.sh",
        "find . -delete", "awk '{print}' f", "for f in *; do cat $f; done", "cat <<EOF\nx\nEOF",
        "echo 'open", "ls > $OUT"}) {
    INFO(cmd << " -> " << Reason(cmd));
    CHECK_FALSE(Allowed(cmd));
  }
  CHECK(Reason("curl http://x").find("not on the allow-list") != std::string::npos);
  CHECK(Reason("echo 'open").find("cannot read this command line") != std::string::npos);
}

TEST_CASE("file writes are denied, the event log named", "[agentkit][guard]") {
  auto cfg = Config();
  auto w = JudgeFileWrite(cfg, "Write", "/camp/events/x", "/camp");
  CHECK_FALSE(w.allow);
  CHECK(w.reason.find("event log directory /camp/events") != std::string::npos);
  auto e = JudgeFileWrite(cfg, "apply_patch", "events/x", "/camp");
  CHECK(e.reason.find("event log") != std::string::npos);
  CHECK(e.reason.find("apply_patch") != std::string::npos);
  auto other = JudgeFileWrite(cfg, "Write", "/tmp/x", "/camp");
  CHECK_FALSE(other.allow);
  CHECK(other.reason.find("read-only") != std::string::npos);
}

TEST_CASE("guard flags parse and print back", "[agentkit][guard]") {
  auto c = attune::agentkit::ParseGuardArgs(
      {"--campaign-dir", "/camp", "--namespace=tune", "--events-dir", "/elsewhere/log"});
  REQUIRE(c.ok());
  CHECK(c->campaign_dir == "/camp");
  CHECK(c->k8s_namespace == "tune");
  CHECK(std::find(c->protected_dirs.begin(), c->protected_dirs.end(), "/camp/events") !=
        c->protected_dirs.end());
  CHECK(std::find(c->protected_dirs.begin(), c->protected_dirs.end(), "/elsewhere/log") !=
        c->protected_dirs.end());
  auto again = attune::agentkit::ParseGuardArgs(attune::agentkit::GuardArgs(*c));
  REQUIRE(again.ok());
  CHECK(again->protected_dirs == c->protected_dirs);
  CHECK(again->k8s_namespace == "tune");
  CHECK(attune::agentkit::ParseGuardArgs({"--namespace", "x"}).status().message().find(
            "--campaign-dir is required") != std::string::npos);
  CHECK(attune::agentkit::ParseGuardArgs({"--campaign-dir", "/c", "--namespac", "x"})
            .status()
            .message()
            .find("unknown flag '--namespac'") != std::string::npos);
}

TEST_CASE("without a namespace no kubectl is allowed", "[agentkit][guard]") {
  auto cfg = Config();
  cfg.k8s_namespace.clear();
  CHECK_FALSE(JudgeCommand(cfg, "kubectl get pods -n tune", "/camp").allow);
  CHECK(JudgeCommand(cfg, "kubectl get pods -n tune", "/camp")
            .reason.find("no Kubernetes namespace") != std::string::npos);
}

TEST_CASE("paths are compared after normalization", "[agentkit][guard]") {
  CHECK(IsUnder("events/x", "/camp/events", "/camp"));
  CHECK(IsUnder("/camp/events", "/camp/events", "/"));
  CHECK(IsUnder("../events/a", "/camp/events", "/camp/logs"));
  CHECK_FALSE(IsUnder("/camp/events2/a", "/camp/events", "/"));
  CHECK_FALSE(IsUnder("/camp/logs/a", "/camp/events", "/"));
}

TEST_CASE("event log directories are found by their RocksDB files", "[agentkit][guard]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("attune-guard-" + std::to_string(::getpid()));
  fs::create_directories(dir / "store");
  std::ofstream(dir / "store" / "ACKED") << "1";
  auto dirs = FindEventLogDirs(dir.string());
  fs::path store = fs::weakly_canonical(dir / "store");
  CHECK(std::find(dirs.begin(), dirs.end(), store.string()) != dirs.end());
  fs::remove_all(dir);
}

TEST_CASE("a hook's question is read the same for every CLI", "[agentkit][hooks]") {
  std::istringstream full(R"({"tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/w"})");
  auto call = attune::agentkit::ReadToolCall(full, "/campaign");
  REQUIRE(call.has_value());
  CHECK(call->tool == "Bash");
  CHECK(call->input == nlohmann::json{{"command", "ls"}});
  CHECK(call->cwd == "/w");
  std::istringstream bare(R"({"tool_name":"read_file"})");
  call = attune::agentkit::ReadToolCall(bare, "/campaign");
  REQUIRE(call.has_value());
  CHECK(call->input == nlohmann::json::object());
  CHECK(call->cwd == "/campaign");
  for (const char* text : {"not json", "[1]", R"({"tool_input":{}})", R"({"tool_name":7})"}) {
    std::istringstream in(text);
    INFO(text);
    CHECK_FALSE(attune::agentkit::ReadToolCall(in, "/c").has_value());
  }
  CHECK(attune::agentkit::HookString(nlohmann::json{{"k", 1}}, "k").empty());
  CHECK(attune::agentkit::HookString(nlohmann::json::array(), "k").empty());
}
