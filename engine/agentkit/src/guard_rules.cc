// Copyright attune authors.
#include "guard_rules.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace attune::agentkit {
namespace {

const char* const kPrefix = "attune guard: ";

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool Contains(const std::set<std::string>& set, const std::string& s) { return set.count(s) > 0; }

// What kubectl and helm accept that takes the next word as its value, so the verb (the first
// positional word) is found correctly.
const std::set<std::string> kKubeValueFlags = {"-o",
                                               "-l",
                                               "-c",
                                               "-f",
                                               "-L",
                                               "--output",
                                               "--selector",
                                               "--container",
                                               "--field-selector",
                                               "--sort-by",
                                               "--template",
                                               "--since",
                                               "--tail",
                                               "--label-columns",
                                               "--request-timeout",
                                               "--chunk-size",
                                               "--filename",
                                               "--since-time",
                                               "--limit-bytes",
                                               "--max-log-requests",
                                               "--revision",
                                               "--max",
                                               "--version",
                                               "--repo"};

// Flags that point kubectl/helm at another cluster, user or config: never allowed.
const std::set<std::string> kKubeContextFlags = {"--context",
                                                 "--kubeconfig",
                                                 "--cluster",
                                                 "--user",
                                                 "--server",
                                                 "--token",
                                                 "--as",
                                                 "--as-group",
                                                 "--as-uid",
                                                 "--kube-context",
                                                 "--kube-apiserver",
                                                 "--kube-token",
                                                 "--kube-as-user",
                                                 "--kube-as-group",
                                                 "--kube-ca-file",
                                                 "--certificate-authority",
                                                 "--client-certificate",
                                                 "--client-key"};

struct KubeArgs {
  std::vector<Word> namespaces;  // every -n/--namespace value
  std::vector<std::string> positionals;
  std::string violation;  // set for -A or a context switch
};

std::string FlagName(const std::string& word) {
  auto eq = word.find('=');
  return eq == std::string::npos ? word : word.substr(0, eq);
}

void ScanKubeWord(const std::vector<Word>& args, size_t* i, KubeArgs* out) {
  const Word& w = args[*i];
  const std::string& t = w.text;
  auto next = [&]() -> Word {
    if (*i + 1 >= args.size()) return Word{"", true};  // a flag without value: unknown
    return args[++*i];
  };
  if (t == "-A" || FlagName(t) == "--all-namespaces") {
    // Built with append: GCC 12 warns falsely (-Wrestrict) on "'" + std::string + "...".
    out->violation = std::string("'").append(t).append("' reaches every namespace");
  } else if (Contains(kKubeContextFlags, FlagName(t)) || (t == "-s")) {
    out->violation =
        std::string("'").append(FlagName(t)).append("' switches the cluster, user or kubeconfig");
  } else if (t == "-n" || t == "--namespace") {
    out->namespaces.push_back(next());
  } else if (StartsWith(t, "-n=")) {
    out->namespaces.push_back(Word{t.substr(3), w.dynamic});
  } else if (StartsWith(t, "--namespace=")) {
    out->namespaces.push_back(Word{t.substr(12), w.dynamic});
  } else if (StartsWith(t, "-n") && t.size() > 2) {
    out->namespaces.push_back(Word{t.substr(2), w.dynamic});
  } else if (Contains(kKubeValueFlags, t)) {
    // A value never starts with '-': `logs -f -A` must still see the -A.
    if (*i + 1 < args.size() && !StartsWith(args[*i + 1].text, "-")) ++*i;
  } else if (!StartsWith(t, "-")) {
    out->positionals.push_back(w.dynamic ? "<computed>" : t);
  }
}

KubeArgs ScanKube(const std::vector<Word>& args) {
  KubeArgs out;
  for (size_t i = 0; i < args.size() && out.violation.empty(); ++i) ScanKubeWord(args, &i, &out);
  return out;
}

// The namespace rule shared by kubectl and helm. `cluster_scoped` verbs need no namespace.
GuardDecision CheckNamespace(const GuardConfig& config, const std::string& tool, const KubeArgs& k,
                             bool cluster_scoped) {
  if (!k.violation.empty()) {
    return Deny(tool + " outside the campaign's namespace: " + k.violation + "; use only -n " +
                (config.k8s_namespace.empty() ? "<none configured>" : config.k8s_namespace));
  }
  if (config.k8s_namespace.empty() && !cluster_scoped) {
    return Deny(tool + " is not allowed: this campaign has no Kubernetes namespace configured");
  }
  for (const Word& ns : k.namespaces) {
    if (ns.dynamic)
      return Deny(tool + ": the namespace '" + ns.text + "' is computed; write it out");
    if (ns.text != config.k8s_namespace) {
      return Deny(tool + " outside the campaign's namespace: '-n " + ns.text +
                  "' (this campaign may only use namespace '" + config.k8s_namespace + "')");
    }
  }
  if (k.namespaces.empty() && !cluster_scoped) {
    return Deny(tool + " without a namespace would use the context's default: add -n " +
                config.k8s_namespace);
  }
  return Allow();
}

std::string Verb(const KubeArgs& k, size_t i = 0) {
  return i < k.positionals.size() ? k.positionals[i] : "";
}

}  // namespace

GuardDecision Allow(std::string why) { return GuardDecision{true, std::move(why)}; }
GuardDecision Deny(std::string why) { return GuardDecision{false, kPrefix + std::move(why)}; }

GuardDecision JudgeKubectl(const GuardConfig& config, const CommandCall& call) {
  if (call.args_from_stdin) {
    return Deny(
        "kubectl run through xargs takes arguments from its input; the guard cannot check "
        "the namespace. Write the full kubectl command");
  }
  KubeArgs k = ScanKube(call.args);
  std::string verb = Verb(k);
  if (verb == "config") {
    std::string sub = Verb(k, 1);
    if (sub == "current-context" || sub == "get-contexts") return Allow();
    return Deny("'kubectl config " + sub +
                "' changes or reveals cluster contexts; a context "
                "switch is never allowed");
  }
  static const std::set<std::string> kClusterScoped = {"version", "api-resources", "api-versions",
                                                       "explain"};
  static const std::set<std::string> kReadOnly = {"get", "describe", "logs",
                                                  "top", "events",   "auth"};
  bool cluster_scoped = Contains(kClusterScoped, verb);
  GuardDecision ns = CheckNamespace(config, "kubectl", k, cluster_scoped);
  if (!ns.allow) return ns;
  if (cluster_scoped || Contains(kReadOnly, verb)) return Allow();
  return Deny("'kubectl " + verb +
              "' is not read-only; the agent may only inspect (get, "
              "describe, logs, top, events); the engine's launcher owns the jobs");
}

GuardDecision JudgeHelm(const GuardConfig& config, const CommandCall& call) {
  if (call.args_from_stdin) {
    return Deny("helm run through xargs takes arguments from its input; write the full command");
  }
  KubeArgs k = ScanKube(call.args);
  std::string verb = Verb(k);
  static const std::set<std::string> kClusterScoped = {"version", "search", "show",
                                                       "inspect", "env",    "help"};
  static const std::set<std::string> kReadOnly = {"list", "ls", "status", "get", "history", "hist"};
  bool cluster_scoped = Contains(kClusterScoped, verb);
  GuardDecision ns = CheckNamespace(config, "helm", k, cluster_scoped);
  if (!ns.allow) return ns;
  if (cluster_scoped || Contains(kReadOnly, verb)) return Allow();
  return Deny("'helm " + verb + "' is not read-only; the agent may only inspect releases");
}

GuardDecision JudgeAttune(const CommandCall& call) {
  std::vector<std::string> words;
  for (const Word& w : call.args) {
    if (!StartsWith(w.text, "-")) words.push_back(w.dynamic ? "<computed>" : w.text);
  }
  std::string sub = words.empty() ? "" : words[0];
  std::string sub2 = words.size() > 1 ? words[1] : "";
  bool help = std::any_of(call.args.begin(), call.args.end(),
                          [](const Word& w) { return w.text == "--help" || w.text == "-h"; });
  if (help || sub == "help" || sub == "version" || sub.empty()) return Allow();
  if (sub == "status" || sub == "events") return Allow();
  if (sub == "stack" && (sub2 == "show" || sub2 == "list")) return Allow();
  if (sub == "log" && (sub2 == "parse" || sub2 == "triage")) return Allow();
  if (sub == "gate" && sub2 == "check") return Allow();
  if (sub == "recipe" && sub2 == "import") return Allow();
  return Deny("'attune " + sub + (sub2.empty() ? "" : " " + sub2) +
              "' is not available to the agent (allowed: status, events, stack show, log "
              "parse|triage, gate check, recipe import). The engine runs the campaign: answer with "
              "a JSON proposal instead");
}

std::string EventLogViolation(const GuardConfig& config, const std::string& path,
                              const std::string& cwd) {
  for (const auto& dir : config.protected_dirs) {
    if (IsUnder(path, dir, cwd)) {
      return "writing to the campaign's event log directory " + dir +
             " is forbidden: the log is append-only and only the engine writes it";
    }
  }
  return "";
}

}  // namespace attune::agentkit
