// Copyright attune authors.
//
// Internal to the guard: the per-program rules (kubectl, helm, attune, nvidia-smi, the read-only
// tool set). guard_policy.cc unwraps wrappers and pipelines and calls these on each command.
#ifndef ATTUNE_AGENTKIT_GUARD_RULES_H_
#define ATTUNE_AGENTKIT_GUARD_RULES_H_

#include <string>
#include <vector>

#include "attune/agentkit/guard.h"
#include "attune/agentkit/shell_words.h"

namespace attune::agentkit {

// One command as the rules see it: the program's base name and its arguments (argv[1..]).
struct CommandCall {
  std::string program;       // base name: "/usr/bin/kubectl" -> "kubectl"
  std::string program_path;  // as written
  std::vector<Word> args;
  bool args_from_stdin = false;  // run by xargs: more arguments will be appended at run time
};

GuardDecision Allow(std::string why = "");
GuardDecision Deny(std::string why);

// Kubernetes: read-only verbs inside the campaign's namespace only.
GuardDecision JudgeKubectl(const GuardConfig& config, const CommandCall& call);
GuardDecision JudgeHelm(const GuardConfig& config, const CommandCall& call);

// The attune subcommands an agent may run.
GuardDecision JudgeAttune(const CommandCall& call);

// Plain programs: the read-only allow-list (with per-program checks for sed, sort, nvidia-smi,
// scontrol), file writers (named when they aim at the event log), and the rest.
GuardDecision JudgeProgram(const GuardConfig& config, const CommandCall& call,
                           const std::string& cwd);

// "the event log" reason, when `path` is under a protected directory; "" otherwise.
std::string EventLogViolation(const GuardConfig& config, const std::string& path,
                              const std::string& cwd);

}  // namespace attune::agentkit

#endif  // ATTUNE_AGENTKIT_GUARD_RULES_H_
